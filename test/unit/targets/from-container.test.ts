import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { projectPod } from '../../../src/kube/index.ts';
import type { Pod, PodJson } from '../../../src/kube/index.ts';
import { formatIssue, validatePolicy } from '../../../src/policy/index.ts';
import type { ProbePolicy, ValidateOptions } from '../../../src/policy/index.ts';
import { AddressGuard, buildRequest, planTargets, samePlannedProbe } from '../../../src/targets/index.ts';

/** A pod as the API returns it, through the real projection. */
function pod(containers: Record<string, unknown>[], o: { uid?: string; name?: string } = {}): Pod {
  return projectPod({
    metadata: { uid: o.uid ?? 'u1', name: o.name ?? 'web-1', namespace: 'shop', labels: { app: 'web' } },
    // Loose containers on purpose: the projection reads hostile pods defensively.
    spec: { containers } as unknown as NonNullable<PodJson['spec']>,
    status: { phase: 'Running', podIP: '127.0.10.1' },
  });
}

const web = (probes: Record<string, unknown>): Record<string, unknown> => ({ name: 'web', image: 'x', ports: [{ name: 'http', containerPort: 8080 }], ...probes });

function policy(blocks: Record<string, unknown>, options: ValidateOptions = { execEnabled: false }): ProbePolicy {
  const r = validatePolicy({ metadata: { name: 'web', namespace: 'shop' }, spec: { selector: { matchLabels: { app: 'web' } }, ...blocks } }, options);
  if (!r.ok) assert.fail(r.issues.map(formatIssue).join('\n'));
  return r.policy;
}

const readinessFromContainer = (extra: Record<string, unknown> = {}): ProbePolicy => policy({ readiness: { probe: { fromContainer: 'readinessProbe', ...extra } } });
const guard = new AddressGuard(['127.0.0.0/8']);

void describe('projectPod: the containers\' declared probes', () => {
  void it('carries each declared probe, trimmed to the core/v1 Probe fields, host kept to be refused', () => {
    const p = pod([
      web({
        readinessProbe: { httpGet: { path: '/r', port: 'http', host: 'evil', junk: 1 }, periodSeconds: 3, extra: { big: 'x' } },
        livenessProbe: { tcpSocket: { port: 8080 }, timeoutSeconds: 2 },
      }),
    ]);
    assert.deepEqual(p.containers[0]?.probes, {
      readinessProbe: { periodSeconds: 3, httpGet: { path: '/r', port: 'http', host: 'evil' } },
      livenessProbe: { timeoutSeconds: 2, tcpSocket: { port: 8080 } },
    });
  });

  void it('has none for a container without probes, and survives a probe of the wrong JSON type', () => {
    assert.equal(pod([web({})]).containers[0]?.probes, undefined);
    assert.equal(pod([web({ readinessProbe: 'yes', livenessProbe: [1] })]).containers[0]?.probes, undefined);
  });
});

void describe('planTargets with fromContainer', () => {
  void it("plans the container's own probe, with the policy's overrides", () => {
    const p = pod([web({ readinessProbe: { httpGet: { path: '/ready', port: 'http' }, periodSeconds: 7, timeoutSeconds: 2, failureThreshold: 5, successThreshold: 1, initialDelaySeconds: 0 } })]);
    const { targets, issues } = planTargets(readinessFromContainer({ failureThreshold: 2 }), p);
    assert.deepEqual(issues, []);
    assert.equal(targets.length, 1);
    const t = targets[0];
    assert.ok(t);
    assert.deepEqual(t.probe.handler, { type: 'httpGet', path: '/ready', port: 'http', scheme: 'HTTP', httpHeaders: [] });
    assert.deepEqual([t.probe.periodSeconds, t.probe.timeoutSeconds, t.probe.failureThreshold], [7, 2, 2]);
    assert.equal(t.conditionType, 'outprobe.io/web');
    const req = buildRequest(t.probe, p, t.container, guard);
    assert.ok(req.type === 'httpGet');
    assert.deepEqual([req.request.ip, req.request.port, req.request.path], ['127.0.10.1', 8080, '/ready']);
  });

  void it('a container without the probe: no target, an issue naming pod, container and probe', () => {
    const { targets, issues } = planTargets(readinessFromContainer(), pod([web({ livenessProbe: { tcpSocket: { port: 8080 } } })]));
    assert.deepEqual(targets, []);
    assert.deepEqual(issues.map((i) => [i.code, i.message]), [['probe_missing', 'readiness probe: container "web" of pod shop/web-1: declares no readinessProbe (fromContainer: readinessProbe); not probed']]);
  });

  void it('a container probe with host set is refused, not aimed at the host', () => {
    const { targets, issues } = planTargets(readinessFromContainer(), pod([web({ readinessProbe: { httpGet: { port: 80, host: '10.0.0.1' } } })]));
    assert.deepEqual(targets, []);
    const [issue] = issues;
    assert.ok(issue?.code === 'probe_invalid');
    assert.match(issue.message, /httpGet\.host: host is not allowed/);
  });

  void it('absurd container values are refused', () => {
    const { targets, issues } = planTargets(readinessFromContainer(), pod([web({ readinessProbe: { tcpSocket: { port: 80 }, periodSeconds: 2_000_000_000 } })]));
    assert.deepEqual(targets, []);
    assert.match(issues[0]?.message ?? '', /periodSeconds: should be less than or equal to 3600/);
  });

  void it('a port name the container lacks plans, then errors at probe time as the kubelet does', () => {
    const p = pod([web({ readinessProbe: { httpGet: { port: 'metrics' } } })]);
    const { targets } = planTargets(readinessFromContainer(), p);
    const t = targets[0];
    assert.ok(t);
    assert.deepEqual(buildRequest(t.probe, p, t.container, guard), { type: 'error', error: 'strconv.Atoi: parsing "metrics": invalid syntax' });
  });

  void it('an exec probe is reported, not run, where exec is not allowed; planned where it is', () => {
    const p = pod([web({ livenessProbe: { exec: { command: ['cat', '/tmp/ok'] } } })]);
    const block = { liveness: { probe: { fromContainer: 'livenessProbe' } } };
    const refused = planTargets(policy(block), p);
    assert.deepEqual(refused.targets, []);
    const [issue] = refused.issues;
    assert.ok(issue?.code === 'exec_not_allowed');
    assert.match(issue.message, /exec probe: exec probes need the controller to run with exec enabled/);
    const otherNs = planTargets(policy(block, { execEnabled: true, execNamespaces: ['ops'] }), p);
    assert.equal(otherNs.issues[0]?.code, 'exec_not_allowed');
    const allowed = planTargets(policy(block, { execEnabled: true, execNamespaces: ['shop'] }), p);
    assert.deepEqual(allowed.issues, []);
    assert.deepEqual(allowed.targets[0]?.probe.handler, { type: 'exec', command: ['cat', '/tmp/ok'] });
  });

  void it('follows the named container, and each block may name another field', () => {
    const p = pod([web({ readinessProbe: { httpGet: { port: 8080, path: '/web' } } }), { name: 'side', readinessProbe: { tcpSocket: { port: 9000 } }, livenessProbe: { httpGet: { port: 9000, path: '/alive' } } }]);
    const pol = policy({ readiness: { container: 'side', probe: { fromContainer: 'livenessProbe' } } });
    const t = planTargets(pol, p).targets[0];
    assert.ok(t?.container === 'side');
    assert.deepEqual(t.probe.handler, { type: 'httpGet', path: '/alive', port: 9000, scheme: 'HTTP', httpHeaders: [] });
  });

  void it('a new pod with a changed probe plans a different probe; an unchanged one compares equal', () => {
    const pol = readinessFromContainer();
    const oldPod = pod([web({ readinessProbe: { httpGet: { port: 8080, path: '/v1' } } })], { uid: 'old' });
    const samePod = pod([web({ readinessProbe: { httpGet: { port: 8080, path: '/v1' } } })], { uid: 'old' });
    const newPod = pod([web({ readinessProbe: { httpGet: { port: 8080, path: '/v2' } } })], { uid: 'old' });
    const [a] = planTargets(pol, oldPod).targets;
    const [b] = planTargets(pol, samePod).targets;
    const [c] = planTargets(pol, newPod).targets;
    assert.ok(a && b && c);
    assert.equal(samePlannedProbe(a, b), true);
    assert.equal(samePlannedProbe(a, c), false);
    assert.deepEqual(c.probe.handler, { type: 'httpGet', path: '/v2', port: 8080, scheme: 'HTTP', httpHeaders: [] });
  });
});
