// The node agent against a real kube-apiserver (no kwok: the test plays the
// kubelet's runtime and writes pods' status, as kwok would). Probes go to
// servers on 127.x loopback addresses in this process.
import assert from 'node:assert/strict';
import http from 'node:http';
import { describe, it } from 'node:test';
import { systemClock, systemRandom } from '../../src/kernel/index.ts';
import { fromKubeconfig, KubeClient } from '../../src/kube/index.ts';
import { createRunProbe, NodeAgent } from '../support/node-agent/index.ts';
import type { LogEntry } from '../support/node-agent/index.ts';
import { startControlPlane } from '../support/cluster/index.ts';
import type { ControlPlane } from '../support/cluster/index.ts';
import { conditionOf, getPod, strategicPatch, waitFor } from './support/fake-kubelet.ts';
import { logsOnFailure } from '../support/replicas/index.ts';
import { claimLoopbackBlock } from '../support/ports/index.ts';

const NODE = 'agent-node-0';
const ns = `agent-${Date.now().toString(36)}`;
const podsPath = `/api/v1/namespaces/${ns}/pods`;
const minuteAgo = new Date(Date.now() - 60_000).toISOString().replace(/\.\d+Z$/, 'Z');
/** A loopback /24 of our own for this run's pod servers. */
// A loopback block of this process alone (test/support/ports): its servers bind port 8080 there.
const ipBase = `127.${await claimLoopbackBlock()}.${Math.floor(Math.random() * 250) + 1}`;
let nextIp = 1;

interface Running { stop: AbortController; done: Promise<void>; logs: LogEntry[]; client: KubeClient }

describe('node agent against a real kube-apiserver', () => {
  const logs = logsOnFailure('node-agent');
  let cp: ControlPlane;
  let agent: Running;
  const servers: http.Server[] = [];

  const startAgent = (): Running => {
    const client = new KubeClient({ connection: fromKubeconfig(cp.kubeconfigPath), clock: systemClock, random: systemRandom, qps: 500, burst: 1000 });
    const logs: LogEntry[] = [];
    const a = new NodeAgent({ client, nodeName: NODE, clock: systemClock, random: systemRandom, runProbe: createRunProbe(systemRandom), log: (e) => logs.push(e) });
    const stop = new AbortController();
    return { stop, done: a.run(stop.signal), logs, client };
  };
  const stopAgent = async (r: Running): Promise<void> => {
    r.stop.abort();
    await r.done;
    await r.client.close();
  };

  /** A pod as kwok leaves it Running: ContainersReady True, Ready with kwok's wrong gate message. */
  const createPod = async (name: string, o: { node?: string; gates?: string[]; container?: Record<string, unknown>; ip?: string; finalizer?: boolean } = {}): Promise<void> => {
    await cp.kube.create(podsPath, {
      apiVersion: 'v1', kind: 'Pod',
      metadata: { name, namespace: ns, ...(o.finalizer === true ? { finalizers: ['example.com/hold'] } : {}) },
      spec: { nodeName: o.node ?? NODE, readinessGates: (o.gates ?? []).map((g) => ({ conditionType: g })), containers: [{ name: 'web', image: 'example/web:1', ...o.container }] },
    });
    const gated = (o.gates ?? []).length > 0;
    const pod = await cp.kube.get(`${podsPath}/${name}`);
    const uid = (pod['metadata'] as { uid: string }).uid;
    await strategicPatch(cp.kube, `${podsPath}/${name}/status`, { status: {
      phase: 'Running', podIP: o.ip ?? '10.0.0.1', hostIP: '10.0.0.100', startTime: minuteAgo,
      conditions: [
        { type: 'Ready', status: gated ? 'False' : 'True', ...(gated ? { reason: 'ReadinessGatesNotReady', message: 'the status of pod readiness gate is not "True"' } : {}), lastTransitionTime: minuteAgo },
        { type: 'ContainersReady', status: 'True', lastTransitionTime: minuteAgo },
      ],
      containerStatuses: [{ name: 'web', image: 'example/web:1', imageID: 'x', containerID: `kwok://${uid}-web-0`, ready: true, started: true, restartCount: 0, state: { running: { startedAt: minuteAgo } } }],
    } });
  };
  const setGate = (name: string, gate: string, status: string): Promise<void> =>
    strategicPatch(cp.kube, `${podsPath}/${name}/status`, { status: { conditions: [{ type: gate, status, lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') }] } });
  const cond = async (name: string, type: string): Promise<{ status: string; reason?: string; message?: string; lastTransitionTime?: string } | undefined> =>
    conditionOf(await getPod(cp.kube, { namespace: ns, name }), type);
  const rv = async (name: string): Promise<string> => ((await cp.kube.get(`${podsPath}/${name}`))['metadata'] as { resourceVersion: string }).resourceVersion;
  const serve = async (health: { ok: boolean; hits: number }): Promise<string> => {
    const ip = `${ipBase}.${nextIp++}`;
    const server = http.createServer((_req, res) => { health.hits++; res.writeHead(health.ok ? 200 : 503); res.end(); });
    await new Promise<void>((resolve) => server.listen(8080, ip, resolve));
    servers.push(server);
    return ip;
  };

  logs.setup(async () => {
    cp = await startControlPlane({ log: () => undefined });
    logs.plane(cp);
    await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    agent = startAgent();
  });
  logs.teardown(async () => {
    await stopAgent(agent);
    for (const s of servers) { s.closeAllConnections(); s.close(); }
    await cp.stop();
  });

  it('folds gates into Ready with the kubelet\'s messages; lastTransitionTime moves only on a status change', async () => {
    await createPod('fold', { gates: ['example.com/a', 'example.com/b'] });
    const msg = 'corresponding condition of pod readiness gate "example.com/a" does not exist., corresponding condition of pod readiness gate "example.com/b" does not exist.';
    await waitFor('Ready message rewritten', async () => (await cond('fold', 'Ready'))?.message === msg);
    const r1 = await cond('fold', 'Ready');
    assert.equal(r1?.reason, 'ReadinessGatesNotReady');
    assert.equal(r1.lastTransitionTime, minuteAgo, 'Ready stayed False: its time is kept');
    await setGate('fold', 'example.com/a', 'False');
    await waitFor('message for a False gate', async () => (await cond('fold', 'Ready'))?.message === 'the status of pod readiness gate "example.com/a" is not "True", but False, corresponding condition of pod readiness gate "example.com/b" does not exist.');
    await setGate('fold', 'example.com/a', 'True');
    await setGate('fold', 'example.com/b', 'True');
    await waitFor('Ready True', async () => (await cond('fold', 'Ready'))?.status === 'True');
    const r2 = await cond('fold', 'Ready');
    assert.equal(r2?.reason, undefined);
    assert.equal(r2?.message, undefined);
    assert.notEqual(r2?.lastTransitionTime, minuteAgo, 'Ready changed: a new time');
    assert.equal((await cond('fold', 'ContainersReady'))?.lastTransitionTime, minuteAgo, 'ContainersReady never changed');
    assert.equal((await cond('fold', 'example.com/a'))?.status, 'True', 'the gate is never written by the agent');
  });

  it('Ready follows a gate flip within 100 ms (50 flips, p50/p99 reported)', async () => {
    await createPod('flip', { gates: ['example.com/g'] });
    await waitFor('settled', async () => (await cond('flip', 'Ready'))?.message?.includes('does not exist') === true);
    const seen: { at: number; status: string }[] = [];
    const stop = new AbortController();
    const watch = cp.kube.watch(podsPath, `fieldSelector=metadata.name=flip`, (e) => {
      const conds = ((e.object['status'] as { conditions?: { type: string; status: string }[] } | undefined)?.conditions) ?? [];
      const ready = conds.find((c) => c.type === 'Ready');
      if (ready !== undefined) seen.push({ at: performance.now(), status: ready.status });
    }, stop.signal).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 300));
    const latencies: number[] = [];
    for (let i = 0; i < 50; i++) {
      const want = i % 2 === 0 ? 'True' : 'False';
      const t0 = performance.now();
      await setGate('flip', 'example.com/g', want);
      const deadline = Date.now() + 5000;
      let hit: { at: number } | undefined;
      while (hit === undefined && Date.now() < deadline) {
        hit = seen.find((s) => s.at >= t0 && s.status === want);
        if (hit === undefined) await new Promise((r) => setTimeout(r, 2));
      }
      assert.ok(hit !== undefined, `flip ${i}: Ready never became ${want}`);
      latencies.push(hit.at - t0);
    }
    stop.abort();
    await watch;
    latencies.sort((a, b) => a - b);
    const p = (q: number): number => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
    process.stdout.write(`# gate flip → Ready observed: p50 ${p(0.5).toFixed(1)} ms, p99 ${p(0.99).toFixed(1)} ms, max ${p(1).toFixed(1)} ms (n=${latencies.length}, includes the test's own patch round trip)\n`);
    assert.ok(p(0.5) < 100, `p50 ${p(0.5)} ms`);
  });

  it('a readiness probe drives ContainersReady with its thresholds (success 2, failure 2, period 1 s)', async () => {
    const health = { ok: true, hits: 0 };
    const ip = await serve(health);
    await createPod('probed', { ip, container: { readinessProbe: { httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 1, successThreshold: 2, failureThreshold: 2, timeoutSeconds: 1 } } });
    // The seed (container started long before the agent) keeps it ready; then health fails.
    // The agent may see the pod before its status says the container runs: then readiness starts False
    // and needs successThreshold (2) successes, as the kubelet's would.
    await waitFor('probed twice', () => Promise.resolve(health.hits >= 2), 10_000);
    await waitFor('ContainersReady True', async () => (await cond('probed', 'ContainersReady'))?.status === 'True', 5_000);
    health.ok = false;
    const failedAt = health.hits;
    await waitFor('ContainersReady False', async () => (await cond('probed', 'ContainersReady'))?.status === 'False', 10_000);
    assert.ok(health.hits - failedAt >= 2, `went False after ${health.hits - failedAt} failed probes`);
    assert.equal((await cond('probed', 'ContainersReady'))?.message, 'containers with unready status: [web]');
    assert.equal((await cond('probed', 'Ready'))?.status, 'False');
    health.ok = true;
    const okAt = health.hits;
    await waitFor('ContainersReady True', async () => (await cond('probed', 'ContainersReady'))?.status === 'True', 10_000);
    assert.ok(health.hits - okAt >= 2, `went True after ${health.hits - okAt} successful probes`);
    assert.equal((await cond('probed', 'Ready'))?.status, 'True');
  });

  it('a liveness failure restarts the container in status (restartCount, containerID, lastState)', async () => {
    const health = { ok: true, hits: 0 };
    const ip = await serve(health);
    await createPod('live', { ip, container: { livenessProbe: { tcpSocket: { port: 8081 }, periodSeconds: 1, failureThreshold: 1, timeoutSeconds: 1 } } });
    const pod = await waitFor('restarted', async () => {
      const p = await getPod(cp.kube, { namespace: ns, name: 'live' });
      const s = ((p?.['status'] as { containerStatuses?: Record<string, unknown>[] }).containerStatuses ?? [])[0];
      return s !== undefined && s['restartCount'] === 1 ? s : undefined;
    }, 10_000);
    assert.match(String(pod['containerID']), /-web-1$/);
    assert.equal((pod['lastState'] as { terminated: { exitCode: number } }).terminated.exitCode, 137);
  });

  it('leaves a pod of another node alone', async () => {
    await createPod('other', { node: 'some-other-node', gates: ['example.com/x'] });
    const before = await rv('other');
    await setGate('other', 'example.com/x', 'True');
    const afterGate = await rv('other');
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(await rv('other'), afterGate);
    assert.notEqual(before, afterGate);
    assert.equal((await cond('other', 'Ready'))?.message, 'the status of pod readiness gate is not "True"');
  });

  it('leaves a pod being deleted alone', async () => {
    await createPod('leaving', { gates: ['example.com/x'], finalizer: true });
    await waitFor('folded', async () => (await cond('leaving', 'Ready'))?.message?.includes('does not exist') === true);
    await cp.kube.delete(`${podsPath}/leaving`);
    await setGate('leaving', 'example.com/x', 'True');
    const settled = await rv('leaving');
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(await rv('leaving'), settled);
    assert.equal((await cond('leaving', 'Ready'))?.status, 'False');
    await cp.kube.patch(`${podsPath}/leaving`, { metadata: { finalizers: null } });
  });

  it('a restarted agent converges without writing (no flapping)', async () => {
    const names = ['fold', 'flip', 'probed'];
    await new Promise((r) => setTimeout(r, 1500));
    const before = await Promise.all(names.map(rv));
    await stopAgent(agent);
    agent = startAgent();
    await new Promise((r) => setTimeout(r, 3000));
    assert.deepEqual(await Promise.all(names.map(rv)), before, 'no pod was written by the new agent');
    assert.deepEqual(agent.logs.filter((l) => l.msg === 'condition written'), []);
  });
});
