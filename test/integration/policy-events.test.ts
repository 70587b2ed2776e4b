// Issue 18 item 1 against a real kube-apiserver: a ProbePolicy update that is
// status-only (outprobe's own status writes, anyone's) or metadata-only
// replans no pod, because the API server bumps a custom resource's
// generation only on spec changes; a spec change replans only the pods that
// policy selects, not every pod of the namespace.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Controller } from '../../src/controller/index.ts';
import { systemClock, systemRandom } from '../../src/kernel/index.ts';
import { KubeClient, fromKubeconfig } from '../../src/kube/index.ts';
import type { Pod } from '../../src/kube/index.ts';
import { startControlPlane } from '../support/cluster/index.ts';
import type { ControlPlane } from '../support/cluster/index.ts';
import { installCrd } from './support/controller.ts';
import { logsOnFailure } from '../support/replicas/index.ts';

const perApp = 10;

describe('ProbePolicy events against a real kube-apiserver', () => {
  const logs = logsOnFailure('policy-events');
  let cp: ControlPlane;
  let client: KubeClient;
  let controller: Controller;
  const stop = new AbortController();
  let done: Promise<void> = Promise.resolve();
  const ns = `pev-${Date.now().toString(36)}`;
  const policyPath = (name: string): string => `/apis/outprobe.io/v1alpha1/namespaces/${ns}/probepolicies/${name}`;
  /** Pods (by name) the controller planned, once per plan of a pod: `owns` is asked first each time. */
  const planned: string[] = [];

  const policy = (name: string, app: string, path: string): Record<string, unknown> => ({
    apiVersion: 'outprobe.io/v1alpha1', kind: 'ProbePolicy', metadata: { name, namespace: ns },
    spec: { selector: { matchLabels: { app } }, readiness: { probe: { httpGet: { path, port: 8080 }, periodSeconds: 10 } } },
  });
  const entry = (name: string) => controller.policies.get(`${ns}/${name}`);
  const waitFor = async (what: string, ok: () => boolean): Promise<void> => {
    for (let i = 0; i < 300 && !ok(); i++) await sleep(50);
    assert.ok(ok(), `timed out waiting for ${what}`);
  };
  /** Waits until the controller has applied the policy update that returned `rv`. */
  const seen = (name: string, rv: unknown): Promise<void> => waitFor(`${name} at ${String(rv)}`, () => entry(name)?.policy?.metadata.resourceVersion === rv);
  const rvOf = (o: Record<string, unknown>): unknown => (o['metadata'] as { resourceVersion: string }).resourceVersion;

  logs.setup(async () => {
    cp = await startControlPlane({ log: () => undefined });
    logs.plane(cp);
    await installCrd(cp.kube);
    await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    for (const app of ['a', 'b']) {
      for (let i = 0; i < perApp; i++) {
        // Never scheduled (no kubelet): no container status, so nothing is probed; they are planned all the same.
        await cp.kube.create(`/api/v1/namespaces/${ns}/pods`, { apiVersion: 'v1', kind: 'Pod', metadata: { name: `${app}-${i}`, namespace: ns, labels: { app } }, spec: { containers: [{ name: 'web', image: 'example.invalid/web' }] } });
      }
      await cp.kube.create(`/apis/outprobe.io/v1alpha1/namespaces/${ns}/probepolicies`, policy(`web-${app}`, app, '/healthz'));
    }
    client = new KubeClient({ connection: fromKubeconfig(cp.kubeconfigPath), clock: systemClock, random: systemRandom, qps: 200, burst: 400 });
    controller = new Controller({
      client, clock: systemClock, random: systemRandom, observe: () => undefined,
      probers: { httpGet: () => Promise.reject(new Error('unused')), tcpSocket: () => Promise.reject(new Error('unused')), grpc: () => Promise.reject(new Error('unused')) },
      namespaces: [ns], statusIntervalMs: 200,
      owns: (pod: Pod) => (planned.push(pod.name), true),
    });
    done = controller.run(stop.signal);
    // Synced, and each policy's first status written by the controller and seen back by its watch.
    await waitFor('status written', () => controller.ready && ['web-a', 'web-b'].every((n) => entry(n)?.stored?.pods === perApp));
  });
  logs.teardown(async () => {
    stop.abort();
    await done;
    await client.close();
    await cp.stop();
  });

  it('a status-only or metadata-only update replans no pod', async () => {
    planned.length = 0;
    const status = await cp.kube.patch(`${policyPath('web-a')}/status`, { status: { message: 'written by someone else' } });
    await seen('web-a', rvOf(status));
    const labelled = await cp.kube.patch(policyPath('web-a'), { metadata: { labels: { team: 'shop' }, annotations: { note: 'x' } } });
    await seen('web-a', rvOf(labelled));
    assert.equal(entry('web-a')?.generation, 1, 'the API server kept the generation');
    assert.deepEqual(planned, []);
  });

  it('a spec change replans the pods that policy selects, and no other pod of the namespace', async () => {
    planned.length = 0;
    const edited = await cp.kube.patch(policyPath('web-a'), { spec: { readiness: { probe: { httpGet: { path: '/ready', port: 8080 } } } } });
    await seen('web-a', rvOf(edited));
    assert.equal(entry('web-a')?.generation, 2);
    // Which pods: `owns` is also asked by the release and remediation stages (ADR 0033, 0035)
    // for the policy's own pods, so a pod may be asked twice; no pod of another policy may be.
    assert.deepEqual([...new Set(planned)].sort(), Array.from({ length: perApp }, (_, i) => `a-${i}`).sort());
  });

  it('a selector change replans the pods it selected and the pods it selects now', async () => {
    planned.length = 0;
    const moved = await cp.kube.patch(policyPath('web-a'), { spec: { selector: { matchLabels: { app: 'b' } } } });
    await seen('web-a', rvOf(moved));
    assert.equal(new Set(planned).size, 2 * perApp);
    await waitFor('the counts to follow', () => controller.targets.statusInput(entry('web-a') ?? assert.fail('gone'), true, controller.remediator).pods === perApp);
  });
});
