import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { startControlPlane } from '../support/cluster/index.ts';
import type { ControlPlane } from '../support/cluster/index.ts';
import { installCrd, startController } from './support/controller.ts';
import type { RunningController } from './support/controller.ts';
import { conditionOf, createFakePod, getPod, startedAgo, strategicPatch, waitFor } from './support/fake-kubelet.ts';
import type { FakePod } from './support/fake-kubelet.ts';
import { logsOnFailure } from '../support/replicas/index.ts';

/**
 * The divergence view (issue 15, ADR 0023) against a real kube-apiserver, in
 * Observe mode: the fake kubelet keeps ContainersReady True while the pod's
 * server fails outprobe's probe (what a pod reachable from its own node but
 * not from outprobe's looks like to the API), then the reverse.
 */
const gate = 'outprobe.io/web';
const policiesPath = (ns: string): string => `/apis/outprobe.io/v1alpha1/namespaces/${ns}/probepolicies`;

describe('divergence view against a real kube-apiserver (Observe mode)', () => {
  const logs = logsOnFailure('divergence');
  let cp: ControlPlane;
  let pod: FakePod;
  let c: RunningController;
  const ns = `dv-${Date.now().toString(36)}`;

  const status = async (): Promise<Record<string, unknown>> => ((await cp.kube.get(`${policiesPath(ns)}/web`))['status'] ?? {}) as Record<string, unknown>;
  /** `kubectl get probepolicies`, as a user reads it: the DIVERGED column of policy web. */
  const divergedColumn = (): string => {
    const r = spawnSync(cp.binaries.kubectl, ['--kubeconfig', cp.kubeconfigPath, 'get', 'probepolicies', '-n', ns], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 0, r.stderr);
    const [header = '', row = ''] = r.stdout.trim().split('\n');
    const names = header.split(/\s+/);
    const values = row.split(/\s+/);
    return values[names.indexOf('DIVERGED')] ?? '';
  };
  const gauge = async (): Promise<string | undefined> => new RegExp(`outprobe_divergent_pods\\{namespace="${ns}",policy="${ns}/web"\\} (\\d+)`).exec(await c.metrics.text())?.[1];
  const events = async (): Promise<{ reason: string; message: string; type: string; involvedObject: { kind: string; name: string } }[]> =>
    (await cp.kube.get(`/api/v1/namespaces/${ns}/events`))['items'] as never;

  logs.setup(async () => {
    cp = await startControlPlane({ log: () => undefined });
    logs.plane(cp);
    await installCrd(cp.kube);
    await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await cp.kube.create(policiesPath(ns), {
      apiVersion: 'outprobe.io/v1alpha1',
      kind: 'ProbePolicy',
      metadata: { name: 'web', namespace: ns },
      spec: { selector: { matchLabels: { app: 'web' } }, mode: 'Observe', readiness: { conditionType: gate, probe: { fromContainer: 'readinessProbe' } } },
    });
    pod = await createFakePod(cp.kube, ns, 'web-0', {
      labels: { app: 'web' },
      gate,
      container: { readinessProbe: { httpGet: { path: '/ready', port: 'http' }, periodSeconds: 1, failureThreshold: 2, timeoutSeconds: 1 } },
    });
    c = startController(cp.kubeconfigPath, ns, { log: logs.logger(`controller-${ns}`) });
  });
  logs.teardown(async () => {
    await c.stop();
    await pod.close();
    await cp.stop();
  });

  it('agreeing views: diverged 0 in status, column and gauge', async () => {
    await waitFor('status with the pod', async () => (await status())['pods'] === 1);
    await waitFor('gauge 0', async () => (await gauge()) === '0');
    assert.equal((await status())['diverged'], 0);
    assert.equal(divergedColumn(), '0');
  });

  it('node says ready (ContainersReady True), outprobe cannot reach it: 1 in status, column and gauge, one ReachabilityDiverged Event; no gate written', async () => {
    pod.healthy = false;
    await waitFor('status.diverged 1', async () => (await status())['diverged'] === 1);
    assert.equal(divergedColumn(), '1');
    assert.match(String((await status())['message']), /1 diverged/);
    await waitFor('gauge 1', async () => (await gauge()) === '1');
    const ev = await waitFor('ReachabilityDiverged Event', async () => (await events()).find((e) => e.reason === 'ReachabilityDiverged'));
    assert.equal(ev.type, 'Warning');
    assert.deepEqual([ev.involvedObject.kind, ev.involvedObject.name], ['Pod', 'web-0']);
    assert.equal(ev.message, "ProbePolicy web, container web: node says ready (ContainersReady=True), outprobe's readiness probe fails from replica outprobe: HTTP probe failed with statuscode: 503");
    await new Promise((r) => setTimeout(r, 2000));
    const all = (await events()).filter((e) => e.reason === 'ReachabilityDiverged');
    assert.equal(all.length, 1, 'one Event object');
    assert.equal((all[0] as unknown as { count?: number }).count ?? 1, 1, 'emitted once per transition, not per probe');
    assert.equal(conditionOf(await getPod(cp.kube, pod), gate), undefined, 'Observe mode writes no gate');
  });

  it('back to 0 when they agree again', async () => {
    pod.healthy = true;
    await waitFor('status.diverged 0', async () => (await status())['diverged'] === 0);
    assert.equal(divergedColumn(), '0');
    await waitFor('gauge 0', async () => (await gauge()) === '0');
  });

  it('the reverse: node says not ready (stable for a period), outprobe reaches it', async () => {
    await strategicPatch(cp.kube, `/api/v1/namespaces/${ns}/pods/web-0/status`, {
      status: { conditions: [{ type: 'ContainersReady', status: 'False', reason: 'ContainersNotReady', lastTransitionTime: startedAgo(30_000) }] },
    });
    await waitFor('status.diverged 1', async () => (await status())['diverged'] === 1);
    const ev = await waitFor('second ReachabilityDiverged Event', async () => (await events()).find((e) => e.reason === 'ReachabilityDiverged' && e.message.includes('not ready')));
    assert.equal(ev.message, "ProbePolicy web, container web: node says not ready (ContainersReady=False, ContainersNotReady), outprobe's readiness probe succeeds from replica outprobe");
  });
});
