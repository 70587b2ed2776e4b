import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatIssue, isContainerProbeRef, resolveContainerProbe, validatePolicy } from '../../../src/policy/index.ts';
import type { ContainerProbeRef, PolicyProbe, ProbePolicy, ValidateOptions } from '../../../src/policy/index.ts';
import { capProbeTimeouts } from '../../../src/policy/index.ts';

const noExec: ValidateOptions = { execEnabled: false };

function policyWith(probe: Record<string, unknown>, kind: 'readiness' | 'liveness' | 'startup' = 'readiness', options: ValidateOptions = noExec, namespace = 'shop'): ProbePolicy {
  const r = validatePolicy({ metadata: { name: 'web', namespace }, spec: { selector: {}, [kind]: { probe } } }, options);
  if (!r.ok) assert.fail(r.issues.map(formatIssue).join('\n'));
  return r.policy;
}

function ref(probe: PolicyProbe | undefined): ContainerProbeRef {
  assert.ok(probe !== undefined && isContainerProbeRef(probe), 'a fromContainer probe');
  return probe;
}

const declaredHttp = { httpGet: { path: '/ready', port: 'http', scheme: 'HTTP' }, initialDelaySeconds: 2, timeoutSeconds: 3, periodSeconds: 7, successThreshold: 2, failureThreshold: 4 };

void describe('fromContainer in a ProbePolicy', () => {
  void it('keeps only the fields the author wrote: no defaults are filled in', () => {
    const p = ref(policyWith({ fromContainer: 'readinessProbe', periodSeconds: 2 }).spec.readiness?.probe);
    assert.equal(p.fromContainer, 'readinessProbe');
    assert.deepEqual(p.overrides, { periodSeconds: 2 });
  });

  void it('still defaults every field of a probe written with a handler', () => {
    const probe = policyWith({ tcpSocket: { port: 80 } }).spec.readiness?.probe;
    assert.ok(probe !== undefined && !isContainerProbeRef(probe));
    assert.deepEqual(
      [probe.initialDelaySeconds, probe.timeoutSeconds, probe.periodSeconds, probe.successThreshold, probe.failureThreshold, probe.terminationGracePeriodSeconds],
      [0, 1, 10, 1, 3, null],
    );
  });

  void it('is mutually exclusive with every handler, each reported on its own field', () => {
    for (const handler of [{ exec: { command: ['true'] } }, { httpGet: { port: 80 } }, { tcpSocket: { port: 80 } }, { grpc: { port: 80 } }]) {
      const r = validatePolicy({ metadata: { name: 'web', namespace: 'shop' }, spec: { selector: {}, readiness: { probe: { fromContainer: 'readinessProbe', ...handler } } } }, noExec);
      assert.equal(r.ok, false);
      const key = Object.keys(handler)[0] ?? '';
      assert.deepEqual(r.issues.map((i) => `${i.code} ${i.path.join('.')}`), [`from_container_with_handler spec.readiness.probe.${key}`]);
    }
  });

  void it('refuses an unknown field name and the overrides outprobe refuses elsewhere', () => {
    const r = validatePolicy({ metadata: { name: 'web', namespace: 'shop' }, spec: { selector: {}, liveness: { probe: { fromContainer: 'readiness', successThreshold: 2, timeoutSeconds: 0 } } } }, noExec);
    assert.equal(r.ok, false);
    assert.deepEqual(r.issues.map((i) => `${i.code} ${i.path.join('.')}`).sort(), [
      'invalid_value spec.liveness.probe.fromContainer',
      'out_of_range spec.liveness.probe.timeoutSeconds',
    ]);
    const two = validatePolicy({ metadata: { name: 'web', namespace: 'shop' }, spec: { selector: {}, liveness: { probe: { fromContainer: 'livenessProbe', successThreshold: 2 } } } }, noExec);
    assert.deepEqual(two.ok ? [] : two.issues.map((i) => `${i.code} ${i.path.join('.')}`), ['success_threshold_must_be_1 spec.liveness.probe.successThreshold']);
  });

  void it('learns whether a container exec probe may run, from the same flags as a policy exec probe', () => {
    assert.deepEqual(ref(policyWith({ fromContainer: 'livenessProbe' }, 'liveness', { execEnabled: true, execNamespaces: ['shop'] }).spec.liveness?.probe).exec, { allowed: true });
    const other = ref(policyWith({ fromContainer: 'livenessProbe' }, 'liveness', { execEnabled: true, execNamespaces: ['ops'] }).spec.liveness?.probe).exec;
    assert.ok(other?.allowed === false);
    assert.match(other.message, /not allowed in namespace "shop"/);
    assert.equal(ref(policyWith({ fromContainer: 'livenessProbe' }, 'liveness', noExec).spec.liveness?.probe).exec?.allowed, false);
  });

  void it('the controller maximum timeout caps a written override (reported) and is kept for the container timeout', () => {
    const policy = policyWith({ fromContainer: 'readinessProbe', timeoutSeconds: 120 });
    const { policy: capped, capped: report } = capProbeTimeouts(policy, 60);
    const r = ref(capped.spec.readiness?.probe);
    assert.equal(r.overrides.timeoutSeconds, 60);
    assert.equal(r.maxTimeoutSeconds, 60);
    assert.deepEqual(report, [{ kind: 'readiness', requestedSeconds: 120, appliedSeconds: 60 }]);
  });
});

void describe('resolveContainerProbe: the container probe, overrides over it, then kubelet defaults', () => {
  const allowed = { allowed: true } as const;

  void it('takes every field the policy does not write from the container', () => {
    const r = resolveContainerProbe({ fromContainer: 'readinessProbe', overrides: { periodSeconds: 1, failureThreshold: 2 } }, declaredHttp, 'readiness');
    assert.ok(r.ok);
    assert.deepEqual(r.probe, {
      handler: { type: 'httpGet', path: '/ready', port: 'http', scheme: 'HTTP', httpHeaders: [] },
      initialDelaySeconds: 2,
      timeoutSeconds: 3,
      periodSeconds: 1,
      successThreshold: 2,
      failureThreshold: 2,
      terminationGracePeriodSeconds: null,
    });
  });

  void it('falls back to the kubelet defaults where neither sets a field, and treats a 0 as unset as a Pod does', () => {
    const r = resolveContainerProbe({ fromContainer: 'livenessProbe', overrides: {} }, { tcpSocket: { port: 8080 }, timeoutSeconds: 0, periodSeconds: 0 }, 'liveness');
    assert.ok(r.ok);
    assert.deepEqual([r.probe.initialDelaySeconds, r.probe.timeoutSeconds, r.probe.periodSeconds, r.probe.successThreshold, r.probe.failureThreshold], [0, 1, 10, 1, 3]);
  });

  void it('reports a missing probe instead of guessing one', () => {
    assert.deepEqual(resolveContainerProbe({ fromContainer: 'startupProbe', overrides: {} }, undefined, 'startup'), { ok: false, code: 'probe_missing' });
  });

  void it('refuses a container probe with host set (httpGet or tcpSocket): never anywhere but the pod IP', () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ httpGet: { port: 80, host: '169.254.169.254' } }, /httpGet\.host: host is not allowed/],
      [{ tcpSocket: { port: 22, host: 'kubernetes.default' } }, /tcpSocket\.host: host is not allowed/],
      [{ httpGet: { port: 80, host: 7 } }, /httpGet\.host: must be of type string/],
    ];
    for (const [declared, why] of cases) {
      const r = resolveContainerProbe({ fromContainer: 'readinessProbe', overrides: {} }, declared, 'readiness');
      assert.ok(!r.ok && r.code === 'probe_invalid', JSON.stringify(declared));
      assert.match(r.message, why);
    }
  });

  void it('refuses absurd values, no handler, two handlers and bad ports, as for a policy probe', () => {
    const bad: Record<string, unknown>[] = [
      { httpGet: { port: 80 }, timeoutSeconds: 2_000_000_000 },
      { httpGet: { port: 80 }, periodSeconds: -5 },
      { httpGet: { port: 80 }, failureThreshold: 1.5 },
      { initialDelaySeconds: 3 },
      { httpGet: { port: 80 }, tcpSocket: { port: 80 } },
      { httpGet: { port: 0 } },
      { tcpSocket: { port: 'Not_A_Name' } },
      { httpGet: { port: 80, httpHeaders: [{ name: 'X', value: 'a\r\nInjected: 1' }] } },
      { grpc: { port: 'grpc' } },
    ];
    for (const declared of bad) {
      const r = resolveContainerProbe({ fromContainer: 'readinessProbe', overrides: {} }, declared, 'readiness');
      assert.ok(!r.ok && r.code === 'probe_invalid', JSON.stringify(declared));
    }
  });

  void it('never echoes a header value in its message', () => {
    const r = resolveContainerProbe({ fromContainer: 'readinessProbe', overrides: {} }, { httpGet: { port: 80, httpHeaders: [{ name: 'Authorization', value: 'Bearer s3cr3t\n' }] } }, 'readiness');
    assert.ok(!r.ok && r.code === 'probe_invalid');
    assert.doesNotMatch(r.message, /s3cr3t/);
  });

  void it('keeps liveness and startup at successThreshold 1, and drops a grace period on readiness', () => {
    const live = resolveContainerProbe({ fromContainer: 'readinessProbe', overrides: {} }, declaredHttp, 'liveness');
    assert.ok(!live.ok && live.code === 'probe_invalid');
    assert.match(live.message, /must be 1/);
    const ready = resolveContainerProbe({ fromContainer: 'livenessProbe', overrides: {} }, { tcpSocket: { port: 80 }, terminationGracePeriodSeconds: 5 }, 'readiness');
    assert.ok(ready.ok);
    assert.equal(ready.probe.terminationGracePeriodSeconds, null);
  });

  void it('runs an exec probe only where allowed; otherwise reports why', () => {
    const exec = { exec: { command: ['cat', '/tmp/ready'] } };
    const refused = resolveContainerProbe({ fromContainer: 'livenessProbe', overrides: {} }, exec, 'liveness');
    assert.ok(!refused.ok && refused.code === 'exec_not_allowed', 'absent: refused');
    const ns = resolveContainerProbe({ fromContainer: 'livenessProbe', overrides: {}, exec: { allowed: false, message: 'not here' } }, exec, 'liveness');
    assert.deepEqual(ns, { ok: false, code: 'exec_not_allowed', message: 'not here' });
    const ok = resolveContainerProbe({ fromContainer: 'livenessProbe', overrides: {}, exec: allowed }, exec, 'liveness');
    assert.ok(ok.ok);
    assert.deepEqual(ok.probe.handler, { type: 'exec', command: ['cat', '/tmp/ready'] });
  });

  void it('caps the container timeout at the controller maximum', () => {
    const r = resolveContainerProbe({ fromContainer: 'readinessProbe', overrides: {}, maxTimeoutSeconds: 60 }, { tcpSocket: { port: 80 }, timeoutSeconds: 3600 }, 'readiness');
    assert.ok(r.ok);
    assert.equal(r.probe.timeoutSeconds, 60);
  });

  void it('returns the same probe object for the same inputs (cheap replans)', () => {
    const probeRef: ContainerProbeRef = { fromContainer: 'readinessProbe', overrides: {} };
    const a = resolveContainerProbe(probeRef, declaredHttp, 'readiness');
    const b = resolveContainerProbe(probeRef, declaredHttp, 'readiness');
    assert.ok(a.ok && b.ok);
    assert.equal(a.probe, b.probe);
  });
});
