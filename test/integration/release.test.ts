import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startControlPlane } from '../support/cluster/index.ts';
import type { ControlPlane } from '../support/cluster/index.ts';
import { installCrd, startController } from './support/controller.ts';
import type { RunningController } from './support/controller.ts';
import { conditionOf, createFakePod, getPod, mergePatch, strategicPatch, waitFor } from './support/fake-kubelet.ts';
import type { FakePod } from './support/fake-kubelet.ts';
import { logsOnFailure } from '../support/replicas/index.ts';
import { releaseGates } from '../../src/release-gates.ts';
import { planUninstall } from '../../src/failopen/index.ts';
import type { PodJsonView } from '../../src/failopen/index.ts';
import { ownReasons } from '../../src/controller/conditions.ts';
import { Controller } from '../../src/controller/index.ts';
import { systemClock, systemRandom } from '../../src/kernel/index.ts';
import { KubeClient, fromKubeconfig } from '../../src/kube/index.ts';
import { createGrpcProber, createHttpProber, tcpProbe } from '../../src/probing/index.ts';

/**
 * Nothing stranded (issue 30 deliver 1, ADR 0035) against a real
 * kube-apiserver: every change that stops outprobe from writing a gate
 * leaves a pod it held False True with an outprobe reason within one probe
 * period, and a condition another writer set untouched.
 */
const gate = 'outprobe.io/web';
const periodSeconds = 2;
const policiesPath = (ns: string): string => `/apis/outprobe.io/v1alpha1/namespaces/${ns}/probepolicies`;
const podsPath = (ns: string): string => `/api/v1/namespaces/${ns}/pods`;
const probe = { httpGet: { path: '/healthz', port: 'http' }, periodSeconds, failureThreshold: 1, timeoutSeconds: 1 };
const spec = { selector: { matchLabels: { app: 'web' } }, mode: 'Enforce', readiness: { conditionType: gate, maxUnreadyPercent: 100, probe } };
const ownReleaseReasons = ['GateReleased', 'PolicyRemoved'];
const foreign = { status: 'False', reason: 'ManualHold', message: 'held by an operator' };

type Gate = { status: string; reason?: string; message?: string } | undefined;

describe('gates outprobe stops writing are released (real kube-apiserver)', () => {
  const logs = logsOnFailure('release');
  let cp: ControlPlane;
  const pods: FakePod[] = [];
  const running: RunningController[] = [];
  let nsCount = 0;

  logs.setup(async () => {
    cp = await startControlPlane({ log: () => undefined });
    logs.plane(cp);
    await installCrd(cp.kube);
  });
  logs.teardown(async () => {
    await Promise.all(running.map((c) => c.stop()));
    await Promise.all(pods.map((p) => p.close()));
    await cp.stop();
  });

  const gateOf = async (ns: string, name: string): Promise<Gate> => conditionOf(await getPod(cp.kube, { namespace: ns, name }), gate);

  /**
   * A namespace with an Enforce policy, a failing pod the controller has
   * written False, and a pod whose gate another writer holds False.
   */
  async function strandable(): Promise<{ ns: string; c: RunningController }> {
    const ns = `release${++nsCount}-${Date.now().toString(36)}`;
    await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await cp.kube.create(policiesPath(ns), { apiVersion: 'outprobe.io/v1alpha1', kind: 'ProbePolicy', metadata: { name: 'web', namespace: ns }, spec });
    const failing = await createFakePod(cp.kube, ns, 'failing', { labels: { app: 'web' }, gate });
    const held = await createFakePod(cp.kube, ns, 'held', { labels: { app: 'web' }, gate });
    held.healthy = false;
    await strategicPatch(cp.kube, `${podsPath(ns)}/held/status`, { metadata: { uid: held.uid }, status: { conditions: [{ type: gate, ...foreign }] } });
    pods.push(failing, held);
    const c = startController(cp.kubeconfigPath, ns, { log: logs.logger(`controller-${ns}`) });
    running.push(c);
    // Ready first (a missing condition is never written False: it already holds the pod unready), then failing.
    await waitFor('the pod True', async () => (await gateOf(ns, 'failing'))?.status === 'True', 20_000);
    failing.healthy = false;
    await waitFor('the failing pod held False by outprobe', async () => (await gateOf(ns, 'failing'))?.reason === 'ProbeFailed', 20_000);
    return { ns, c };
  }

  /** After `change`: the failing pod True with an outprobe reason within one period; the other writer's False untouched. */
  async function releasedAfter(ns: string, change: () => Promise<void>, boundMs = periodSeconds * 1000): Promise<{ elapsedMs: number; released: Gate }> {
    const t0 = Date.now();
    await change();
    const released = await waitFor('the gate released True', async () => {
      const g = await gateOf(ns, 'failing');
      return g?.status === 'True' ? g : undefined;
    }, 10_000, 20);
    const elapsedMs = Date.now() - t0;
    assert.ok(ownReleaseReasons.includes(released.reason ?? ''), `released with an outprobe reason, got ${released.reason}`);
    assert.ok(elapsedMs <= boundMs, `released within ${boundMs} ms, took ${elapsedMs} ms`);
    // Two more periods: it stays True, and the other writer's condition never changes.
    const until = Date.now() + 2 * periodSeconds * 1000;
    while (Date.now() < until) {
      assert.equal((await gateOf(ns, 'failing'))?.status, 'True', 'stays released');
      assert.deepEqual(await gateOf(ns, 'held').then((g) => ({ status: g?.status, reason: g?.reason, message: g?.message })), foreign, 'another writer\'s condition untouched');
      await new Promise((r) => setTimeout(r, 100));
    }
    console.log(`# ${ns}: released in ${elapsedMs} ms with ${released.reason}: ${released.message ?? ''}`);
    return { elapsedMs, released };
  }

  const patchSpec = (ns: string, body: unknown): Promise<void> => mergePatch(cp.kube, `${policiesPath(ns)}/web`, { spec: body });

  it('the selector narrows: the pods it no longer selects are released', async () => {
    const { ns } = await strandable();
    const { released } = await releasedAfter(ns, () => patchSpec(ns, { selector: { matchLabels: { app: 'web', tier: 'canary' } } }));
    assert.equal(released?.reason, 'GateReleased');
    assert.match(released.message ?? '', /no longer selects this pod/);
  });

  it('readiness.conditionType changes: the old condition is released', async () => {
    const { ns } = await strandable();
    const { released } = await releasedAfter(ns, () => patchSpec(ns, { readiness: { conditionType: 'outprobe.io/web-v2' } }));
    assert.equal(released?.reason, 'GateReleased');
    assert.match(released.message ?? '', /another readiness.conditionType/);
  });

  it('Enforce → Observe: the gates it wrote are released', async () => {
    const { ns } = await strandable();
    const { released } = await releasedAfter(ns, () => patchSpec(ns, { mode: 'Observe' }));
    assert.equal(released?.reason, 'GateReleased');
    assert.match(released.message ?? '', /Observe mode/);
  });

  it('the policy becomes Invalid: the gates it wrote are released', async () => {
    const { ns } = await strandable();
    // exec probes are refused by a controller without --exec-probes: the policy is Invalid.
    const { released } = await releasedAfter(ns, () => patchSpec(ns, { readiness: { probe: { httpGet: null, exec: { command: ['true'] } } } }));
    assert.equal(released?.reason, 'GateReleased');
    assert.match(released.message ?? '', /is Invalid/);
  });

  it('deleted while in Observe mode: no gate it wrote stays False', async () => {
    const { ns } = await strandable();
    await patchSpec(ns, { mode: 'Observe' });
    await releasedAfter(ns, () => cp.kube.delete(`${policiesPath(ns)}/web`).then(() => undefined));
  });

  it('a change made while no replica ran is released when one starts (the level rule)', async () => {
    const { ns, c } = await strandable();
    await c.stop();
    await patchSpec(ns, { mode: 'Observe' });
    assert.equal((await gateOf(ns, 'failing'))?.status, 'False', 'nothing released it while the controller was down');
    const { released } = await releasedAfter(ns, () => {
      running.push(startController(cp.kubeconfigPath, ns, { log: logs.logger(`controller-${ns}-2`) }));
      return Promise.resolve();
    }, 5000); // its caches list first
    assert.equal(released?.reason, 'GateReleased');
    assert.match(released.message ?? '', /No valid Enforce ProbePolicy writes this gate/);
  });

  it('release-gates (the uninstall hook): every gate outprobe left not True is True after it; another writer\'s untouched', async () => {
    const ns = `uninstall-${Date.now().toString(36)}`;
    await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    const other = 'example.com/lb-ready';
    const made: FakePod[] = [];
    for (let i = 0; i < 5; i++) made.push(await createFakePod(cp.kube, ns, `false-${i}`, { labels: { app: 'web' }, gate }));
    const absent = await createFakePod(cp.kube, ns, 'absent', { labels: { app: 'web' }, gate });
    const held = await createFakePod(cp.kube, ns, 'held', { labels: { app: 'web' }, gate });
    const lb = await createFakePod(cp.kube, ns, 'lb', { labels: { app: 'web' }, gate: other });
    pods.push(...made, absent, held, lb);
    const at = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const own = { type: gate, status: 'False', reason: 'ProbeFailed', message: 'Readiness probe failed: HTTP probe failed with statuscode: 503', lastTransitionTime: at };
    for (const p of made) await strategicPatch(cp.kube, `${podsPath(ns)}/${p.name}/status`, { metadata: { uid: p.uid }, status: { conditions: [own] } });
    await strategicPatch(cp.kube, `${podsPath(ns)}/held/status`, { metadata: { uid: held.uid }, status: { conditions: [{ type: gate, ...foreign }] } });
    await strategicPatch(cp.kube, `${podsPath(ns)}/lb/status`, { metadata: { uid: lb.uid }, status: { conditions: [{ type: other, status: 'False', reason: 'TargetNotRegistered', message: 'lb' }] } });
    // The chart's hook scales the controller Deployment to 0 first (no kube-controller-manager here: no pods to wait for).
    await cp.kube.create(`/apis/apps/v1/namespaces/${ns}/deployments`, {
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'outprobe', namespace: ns },
      spec: { replicas: 2, selector: { matchLabels: { app: 'outprobe' } }, template: { metadata: { labels: { app: 'outprobe' } }, spec: { containers: [{ name: 'c', image: 'outprobe' }] } } },
    });
    const totals = await releaseGates(['--kubeconfig', cp.kubeconfigPath, '--namespaces', ns, '--controller', `${ns}/outprobe`, '--wait-seconds', '5']);
    assert.deepEqual(totals, { pods: 8, released: 6, foreign: 2, failed: 0 });
    for (const p of [...made, absent]) {
      const g = await gateOf(ns, p.name);
      assert.equal(g?.status, 'True', p.name);
      assert.equal(g.reason, 'GateReleased');
      assert.equal(g.message, 'outprobe was uninstalled: its readiness gate is released');
    }
    assert.deepEqual(await gateOf(ns, 'held').then((g) => ({ status: g?.status, reason: g?.reason, message: g?.message })), foreign);
    assert.equal(conditionOf(await getPod(cp.kube, { namespace: ns, name: 'lb' }), other)?.reason, 'TargetNotRegistered');
    const scale = await cp.kube.get(`/apis/apps/v1/namespaces/${ns}/deployments/outprobe/scale`);
    assert.equal((scale['spec'] as { replicas?: number }).replicas ?? 0, 0, 'the controller was scaled to 0 first');
    // Run again: nothing left to release.
    assert.deepEqual(await releaseGates(['--kubeconfig', cp.kubeconfigPath, '--namespaces', ns]), { pods: 8, released: 0, foreign: 2, failed: 0 });
  });

  it('release-gates\' patch is refused when the pod changed after the read: another writer\'s condition set meanwhile stays', async () => {
    const ns = `race-${Date.now().toString(36)}`;
    await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    const p = await createFakePod(cp.kube, ns, 'raced', { labels: { app: 'web' }, gate });
    pods.push(p);
    await strategicPatch(cp.kube, `${podsPath(ns)}/raced/status`, { metadata: { uid: p.uid }, status: { conditions: [{ type: gate, status: 'False', reason: 'ProbeFailed', message: 'x' }] } });
    const read = await getPod(cp.kube, { namespace: ns, name: 'raced' });
    const plan = planUninstall(read as PodJsonView, ownReasons, '2026-12-07T00:00:00Z');
    assert.deepEqual(plan.released, [gate]);
    // Another writer takes the condition over between the read and the write.
    await strategicPatch(cp.kube, `${podsPath(ns)}/raced/status`, { metadata: { uid: p.uid }, status: { conditions: [{ type: gate, ...foreign }] } });
    const r = await cp.kube.call('PATCH', `${podsPath(ns)}/raced/status`, plan.patch, 'application/json-patch+json');
    assert.ok(r.status === 422 || r.status === 409, `the guarded patch is refused (HTTP ${r.status})`);
    assert.deepEqual(await gateOf(ns, 'raced').then((g) => ({ status: g?.status, reason: g?.reason, message: g?.message })), foreign);
    // The CLI reads it again and leaves it alone.
    assert.deepEqual(await releaseGates(['--kubeconfig', cp.kubeconfigPath, '--namespaces', ns]), { pods: 1, released: 0, foreign: 1, failed: 0 });
  });

  it('orphans: with no live member for longer than the bound, a running replica releases the gates outprobe left False', async () => {
    const ns = `orphan-${Date.now().toString(36)}`;
    await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await cp.kube.create(policiesPath(ns), { apiVersion: 'outprobe.io/v1alpha1', kind: 'ProbePolicy', metadata: { name: 'web', namespace: ns }, spec });
    const lost = await createFakePod(cp.kube, ns, 'lost', { labels: { app: 'web' }, gate });
    const held = await createFakePod(cp.kube, ns, 'held', { labels: { app: 'web' }, gate });
    pods.push(lost, held);
    await strategicPatch(cp.kube, `${podsPath(ns)}/lost/status`, { metadata: { uid: lost.uid }, status: { conditions: [{ type: gate, status: 'False', reason: 'ProbeFailed', message: 'x' }] } });
    await strategicPatch(cp.kube, `${podsPath(ns)}/held/status`, { metadata: { uid: held.uid }, status: { conditions: [{ type: gate, ...foreign }] } });
    // A replica that owns nothing and sees no live member (every shard Lease gone), bound 3 s.
    const boundMs = 3000;
    const client = new KubeClient({ connection: fromKubeconfig(cp.kubeconfigPath), clock: systemClock, random: systemRandom, qps: 50, burst: 100 });
    const controller = new Controller({
      client, clock: systemClock, random: systemRandom, observe: () => undefined,
      probers: { httpGet: createHttpProber({ userAgent: 'kube-probe/1.37' }), tcpSocket: tcpProbe, grpc: createGrpcProber({ userAgent: 'kube-probe/1.37' }) },
      allowedCidrs: ['127.0.0.0/8'], namespaces: [ns], owns: () => false, fleetLive: () => false, orphanAfterMs: boundMs,
    });
    const abort = new AbortController();
    const t0 = Date.now();
    const done = controller.run(abort.signal);
    try {
      const released = await waitFor('the orphaned gate released', async () => {
        const g = await gateOf(ns, 'lost');
        return g?.status === 'True' ? g : undefined;
      }, 15_000, 50);
      const elapsed = Date.now() - t0;
      console.log(`# orphan released after ${elapsed} ms (bound ${boundMs} ms): ${released.message ?? ''}`);
      assert.ok(elapsed >= boundMs, `not before the bound (${elapsed} ms)`);
      assert.equal(released.reason, 'GateReleased');
      assert.equal(released.message, 'No live outprobe replica owned this pod for more than 3 s: outprobe released its gate');
      assert.deepEqual(await gateOf(ns, 'held').then((g) => ({ status: g?.status, reason: g?.reason, message: g?.message })), foreign);
    } finally {
      abort.abort();
      await done;
      await client.close();
    }
  });
});
