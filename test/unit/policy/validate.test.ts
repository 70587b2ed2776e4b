import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { probeKinds } from '../../../src/kernel/index.ts';
import { formatIssue, isContainerProbeRef, probeOf, probeTiming, thresholdsOf, validatePolicy } from '../../../src/policy/index.ts';
import type { PolicyIssue, PolicyProbe, ProbePolicy, ProbeSpec, ValidationResult } from '../../../src/policy/index.ts';
import { createTarget } from '../../../src/results/index.ts';
import type { TargetConfig } from '../../../src/results/index.ts';
import { invalidPolicies, unhonourablePolicies } from '../../fixtures/policies/invalid.ts';
import { validPolicies } from '../../fixtures/policies/valid.ts';

const noExec = { execEnabled: false } as const;

/** A block's probe as a handler probe (these fixtures write none with fromContainer). */
function ps(probe: PolicyProbe | null | undefined): ProbeSpec {
  assert.ok(probe !== null && probe !== undefined && !isContainerProbeRef(probe), 'a handler probe');
  return probe;
}

function valid(result: ValidationResult): ProbePolicy {
  if (!result.ok) assert.fail(result.issues.map(formatIssue).join('\n'));
  return result.policy;
}

function issuesOf(result: ValidationResult): readonly PolicyIssue[] {
  if (result.ok) assert.fail('expected the policy to be rejected');
  return result.issues;
}

function validNamed(name: string): ProbePolicy {
  const fixture = validPolicies.find((f) => f.name === name);
  assert.ok(fixture, name);
  return valid(validatePolicy(fixture.manifest, noExec));
}

void describe('validatePolicy: the invalid table', () => {
  void it('has at least 15 entries with unique names', () => {
    assert.ok(invalidPolicies.length >= 15);
    assert.equal(new Set(invalidPolicies.map((f) => f.name)).size, invalidPolicies.length);
  });

  for (const fixture of invalidPolicies) {
    void it(`rejects ${fixture.name} with ${fixture.expectCode}: "${fixture.expectMessage}"`, () => {
      const issues = issuesOf(validatePolicy(fixture.manifest, { execEnabled: true }));
      const match = issues.find((i) => i.code === fixture.expectCode && i.message.includes(fixture.expectMessage));
      assert.ok(match, `got:\n${issues.map((i) => `${i.code} ${formatIssue(i)}`).join('\n')}`);
      assert.equal(match.path[0], 'spec');
    });
  }
});

void describe('validatePolicy: accepted by the CRD, not honoured by the controller', () => {
  for (const fixture of unhonourablePolicies) {
    void it(`rejects ${fixture.name} with ${fixture.expectCode}`, () => {
      const issues = issuesOf(validatePolicy(fixture.manifest, fixture.options));
      assert.ok(issues.some((i) => i.code === fixture.expectCode && i.message.includes(fixture.expectMessage)));
    });
  }

  void it('accepts the exec policy when exec is enabled, and types the handler', () => {
    const exec = unhonourablePolicies.find((f) => f.expectCode === 'exec_disabled');
    assert.ok(exec);
    const policy = valid(validatePolicy(exec.manifest, { execEnabled: true }));
    assert.deepEqual(ps(policy.spec.liveness?.probe).handler, { type: 'exec', command: ['cat', '/tmp/healthy'] });
  });

  void it('reports exec_disabled at the exec handler of every kind that uses it', () => {
    const exec = { exec: { command: ['true'] } };
    const issues = issuesOf(
      validatePolicy({ metadata: { name: 'x' }, spec: { selector: {}, liveness: { probe: exec }, startup: { probe: exec } } }, noExec),
    );
    assert.deepEqual(
      issues.map((i) => [i.code, i.path.join('.')]),
      [
        ['exec_disabled', 'spec.liveness.probe.exec'],
        ['exec_disabled', 'spec.startup.probe.exec'],
      ],
    );
  });

  void it('honours exec only in the namespaces the installer lists (--exec-namespaces)', () => {
    const exec = { exec: { command: ['true'] } };
    const inNs = (namespace: string): unknown => ({ metadata: { name: 'x', namespace }, spec: { selector: {}, readiness: { probe: exec }, liveness: { probe: exec } } });
    const none = issuesOf(validatePolicy(inNs('shop'), { execEnabled: true, execNamespaces: [] }));
    assert.deepEqual(none.map((i) => [i.code, i.path.join('.')]), [
      ['exec_namespace_not_allowed', 'spec.readiness.probe.exec'],
      ['exec_namespace_not_allowed', 'spec.liveness.probe.exec'],
    ]);
    assert.match(none[0]?.message ?? '', /not allowed in namespace "shop": the installer allows them in no namespace \(--exec-namespaces\)/);
    const other = issuesOf(validatePolicy(inNs('shop'), { execEnabled: true, execNamespaces: ['ops', 'db'] }));
    assert.match(other[0]?.message ?? '', /only in "ops", "db"/);
    valid(validatePolicy(inNs('ops'), { execEnabled: true, execNamespaces: ['ops', 'db'] }));
    valid(validatePolicy(inNs('shop'), { execEnabled: true, execNamespaces: '*' }));
    // Disabled wins over the list: the message says what to change first.
    assert.equal(issuesOf(validatePolicy(inNs('ops'), { execEnabled: false, execNamespaces: ['ops'] }))[0]?.code, 'exec_disabled');
  });
});

void describe('validatePolicy: the valid table', () => {
  for (const fixture of validPolicies) {
    void it(`accepts ${fixture.name}`, () => {
      const policy = valid(validatePolicy(fixture.manifest, noExec));
      assert.equal(policy.metadata.name, fixture.manifest.metadata.name);
    });
  }

  void it('applies every default to a minimal policy (the same as the CRD)', () => {
    assert.deepEqual(validNamed('minimal').spec, {
      selector: { matchLabels: { app: 'web' }, matchExpressions: [] },
      mode: 'Enforce',
      readiness: {
        conditionType: 'outprobe.io/minimal',
        container: null,
        probe: {
          handler: { type: 'httpGet', path: '/', port: 'http', scheme: 'HTTP', httpHeaders: [] },
          initialDelaySeconds: 0,
          timeoutSeconds: 1,
          periodSeconds: 10,
          successThreshold: 1,
          failureThreshold: 3,
          terminationGracePeriodSeconds: null,
        },
        maxUnreadyPercent: 50,
        injectGate: false,
      },
      liveness: null,
      startup: null,
      remediation: { maxUnavailable: 1, haltAbovePercentFailing: 50 },
      secondOpinion: true,
      vantage: { spread: 'node', count: 1, decision: 'quorum' },
    });
  });

  void it('keeps what the design example sets, and defaults the rest', () => {
    const { spec } = validNamed('design-example');
    assert.equal(spec.readiness?.conditionType, 'outprobe.io/web');
    assert.equal(spec.readiness.container, 'web');
    assert.equal(ps(spec.readiness.probe).periodSeconds, 5);
    assert.deepEqual(ps(spec.liveness?.probe).handler, { type: 'tcpSocket', port: 8080 });
    assert.equal(spec.liveness?.action, 'Evict');
    assert.equal(ps(spec.startup?.probe).failureThreshold, 30);
    assert.equal(ps(spec.startup?.probe).timeoutSeconds, 1);
  });

  void it('defaults grpc.service to "" and keeps Observe, Delete, percentages and expressions', () => {
    const { spec } = validNamed('observe-grpc-delete');
    assert.equal(spec.mode, 'Observe');
    assert.equal(spec.readiness?.conditionType, 'api-reachable');
    assert.deepEqual(ps(spec.readiness.probe).handler, { type: 'grpc', port: 9090, service: 'api.v1.Api' });
    assert.deepEqual(ps(spec.liveness?.probe).handler, { type: 'grpc', port: 9090, service: '' });
    assert.equal(spec.liveness?.action, 'Delete');
    assert.equal(ps(spec.liveness.probe).terminationGracePeriodSeconds, 5);
    assert.deepEqual(spec.remediation, { maxUnavailable: '25%', haltAbovePercentFailing: 100 });
    assert.deepEqual(spec.selector.matchExpressions[1], { key: 'outprobe.io/skip', operator: 'DoesNotExist', values: [] });
  });

  void it('keeps duplicate headers in order, empty header values, and tabs and non-ASCII in values', () => {
    const handler = ps(validNamed('https-with-headers').spec.readiness?.probe).handler;
    assert.equal(handler.type, 'httpGet');
    assert.equal(handler.scheme, 'HTTPS');
    assert.equal(handler.path, '/ready?verbose=1');
    assert.deepEqual(handler.httpHeaders.map((h) => `${h.name}=${h.value}`), ['User-Agent=', 'X-Probe=a', 'X-Probe=b', 'X-Tabbed=a\tb é']);
  });

  void it('passes metadata through and ignores status', () => {
    const fixture = validPolicies[0]!;
    const policy = valid(
      validatePolicy(
        {
          ...fixture.manifest,
          metadata: { name: 'web', namespace: 'shop', uid: 'u-1', generation: 3, resourceVersion: '42', labels: { a: 'b' } },
          status: { pods: 'not checked' },
        },
        noExec,
      ),
    );
    assert.deepEqual(policy.metadata, { name: 'web', namespace: 'shop', uid: 'u-1', generation: 3, resourceVersion: '42' });
  });
});

void describe('validatePolicy: reporting', () => {
  void it('returns every issue at once, with paths from the object root', () => {
    const issues = issuesOf(
      validatePolicy(
        {
          metadata: { name: 'many' },
          spec: {
            selector: {},
            readiness: { probe: { httpGet: { port: 0, host: 'x' }, terminationGracePeriodSeconds: 5 } },
            liveness: { probe: { tcpSocket: { port: 'a--b' }, successThreshold: 3, periodSeconds: 0 } },
            remediation: { maxUnavailable: '150%', haltAbovePercentFailing: -1 },
          },
        },
        noExec,
      ),
    );
    assert.deepEqual(issues.map((i) => `${i.code} ${i.path.join('.')}`).sort(), [
      'grace_period_not_allowed spec.readiness.probe.terminationGracePeriodSeconds',
      'host_not_allowed spec.readiness.probe.httpGet.host',
      'max_unavailable_invalid spec.remediation.maxUnavailable',
      'out_of_range spec.liveness.probe.periodSeconds',
      'out_of_range spec.remediation.haltAbovePercentFailing',
      'port_invalid spec.liveness.probe.tcpSocket.port',
      'port_invalid spec.readiness.probe.httpGet.port',
      'success_threshold_must_be_1 spec.liveness.probe.successThreshold',
    ]);
  });

  void it("uses the API server's words and field paths for a Pod's probe mistakes (pkg/apis/core/validation)", () => {
    const probeIssues = (spec: Record<string, unknown>): string[] =>
      issuesOf(validatePolicy({ metadata: { name: 'x' }, spec: { selector: {}, ...spec } }, noExec)).map((i) => `${i.code} ${formatIssue(i)}`);
    assert.deepEqual(probeIssues({ readiness: { probe: { httpGet: { port: 80 }, tcpSocket: { port: 80 }, grpc: { port: 80 } } } }), [
      'handler_count spec.readiness.probe.tcpSocket: may not specify more than 1 handler type',
      'handler_count spec.readiness.probe.grpc: may not specify more than 1 handler type',
    ]);
    assert.deepEqual(probeIssues({ readiness: { probe: { periodSeconds: 5 } } }), ['handler_count spec.readiness.probe: must specify a handler type']);
    assert.deepEqual(probeIssues({ liveness: { probe: { tcpSocket: { port: 80 }, terminationGracePeriodSeconds: 0 } } }), [
      'out_of_range spec.liveness.probe.terminationGracePeriodSeconds: must be greater than 0',
    ]);
    assert.deepEqual(probeIssues({ startup: { probe: { tcpSocket: { port: 80 }, successThreshold: 2 } } }), [
      'success_threshold_must_be_1 spec.startup.probe.successThreshold: must be 1',
    ]);
    assert.deepEqual(probeIssues({ readiness: { probe: { tcpSocket: { port: 80 }, terminationGracePeriodSeconds: 5 } } }), [
      'grace_period_not_allowed spec.readiness.probe.terminationGracePeriodSeconds: must not be set for readinessProbes',
    ]);
  });

  void it('formats an issue the way the API server prints a field error', () => {
    const issue = { code: 'port_invalid', path: ['spec', 'selector', 'matchExpressions', 0, 'values'], message: 'm' } as const;
    assert.equal(formatIssue(issue), 'spec.selector.matchExpressions[0].values: m');
    assert.equal(formatIssue({ ...issue, path: [] }), 'm');
  });

  for (const input of [null, undefined, 'policy', 42, [], {}, { metadata: {} }, { metadata: { name: 'x' }, spec: null }]) {
    void it(`never throws on ${input === undefined ? 'undefined' : JSON.stringify(input)}`, () => {
      const issues = issuesOf(validatePolicy(input, noExec));
      assert.ok(issues.length > 0);
      for (const i of issues) assert.ok(i.message.length > 0);
    });
  }

  void it('says which type it wanted, as the API server does', () => {
    const issues = issuesOf(
      validatePolicy({ metadata: { name: 'x' }, spec: { selector: {}, readiness: { probe: { httpGet: { port: 80 }, periodSeconds: '5' } } } }, noExec),
    );
    assert.deepEqual(issues, [
      { code: 'invalid_type', path: ['spec', 'readiness', 'probe', 'periodSeconds'], message: 'must be of type integer: "string"' },
    ]);
  });

  void it('rejects a wrong apiVersion or kind', () => {
    const base = validPolicies[0]!.manifest;
    assert.equal(validatePolicy({ ...base, kind: 'Pod' }, noExec).ok, false);
    assert.equal(validatePolicy({ ...base, apiVersion: 'outprobe.io/v1' }, noExec).ok, false);
  });
});

void describe('ProbeSpec → results and probing', () => {
  const policy = validNamed('design-example');

  void it('is a results TargetConfig that createTarget accepts for every kind', () => {
    for (const kind of probeKinds) {
      const probe = ps(probeOf(policy, kind));
      const config: TargetConfig = probe; // structural: policy does not import results
      const target = createTarget({ podUid: 'u', container: 'web', kind, policy: 'shop/web' }, { config });
      assert.deepEqual(target.config, thresholdsOf(probe));
    }
  });

  void it('gives the executors and scheduler milliseconds', () => {
    const probe = ps(probeOf(policy, 'readiness'));
    assert.deepEqual(probeTiming(probe), { timeoutMs: 1000, periodMs: 5000, initialDelayMs: 0 });
  });

  void it('probeOf is null for a kind the policy does not define', () => {
    assert.equal(probeOf(validNamed('minimal'), 'liveness'), null);
  });
});
