import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { owner } from '../../src/sharding/index.ts';
import { startControlPlane } from '../support/cluster/index.ts';
import type { ControlPlane } from '../support/cluster/index.ts';
import { installCrd, startController } from './support/controller.ts';
import type { RunningController } from './support/controller.ts';
import { conditionOf, createFakePod, waitFor } from './support/fake-kubelet.ts';
import type { FakePod } from './support/fake-kubelet.ts';
import { logsOnFailure } from '../support/replicas/index.ts';

/**
 * The readiness cap counted across replicas (issue 26 deliverable 3, ADR 0032) against a real
 * kube-apiserver: ten gated pods on loopback, maxUnreadyPercent 30 (cap 3), two in-process
 * controllers a and b sharing them by rendezvous over a fixed membership, as sharded replicas
 * do. b is mid-handover: three of its pods carry the False gates a previous owner wrote, and b
 * has not started yet. Every pod fails. Under ADR 0015's per-replica rule a held its own
 * ⌊30 % × its pods⌋ on top of the three: four False. Now a counts the three (its allowance is
 * cap − False elsewhere = 0); b, started, keeps what its share allows and fails the rest open;
 * at no moment more than 3.
 */
const gate = 'outprobe.io/web';
const members = ['a', 'b'];
const policiesPath = (ns: string): string => `/apis/outprobe.io/v1alpha1/namespaces/${ns}/probepolicies`;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('readiness cap across replicas against a real kube-apiserver', () => {
  const logs = logsOnFailure('panic-fleet');
  let cp: ControlPlane;
  const pods: FakePod[] = [];
  const running: RunningController[] = [];
  /** Ends the test's pod watch, whatever the test's outcome. */
  const stop = new AbortController();

  logs.setup(async () => {
    cp = await startControlPlane({ log: () => undefined });
    logs.plane(cp);
    await installCrd(cp.kube);
  });
  logs.teardown(async () => {
    stop.abort();
    await Promise.all(running.map((c) => c.stop()));
    await Promise.all(pods.map((p) => p.close()));
    await cp.stop();
  });

  it('False gates a previous owner left count against the cap: a adds none while b\'s three are False; never more than 3 of 10', async () => {
    const ns = `panicfleet-${Date.now().toString(36)}`;
    await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await cp.kube.create(policiesPath(ns), {
      apiVersion: 'outprobe.io/v1alpha1',
      kind: 'ProbePolicy',
      metadata: { name: 'web', namespace: ns },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        readiness: { conditionType: gate, maxUnreadyPercent: 30, probe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 1, failureThreshold: 2, timeoutSeconds: 1 } },
      },
    });
    // Ten pods, at least four of each (a's ⌊30 % × 4⌋ ≥ 1 under the per-replica rule; b: three inherited Falses and one more).
    for (let i = 0; pods.length < 10; i++) {
      const p = await createFakePod(cp.kube, ns, `web-${i}`, { labels: { app: 'web' }, gate });
      const o = owner(members, p.uid);
      if (pods.filter((x) => owner(members, x.uid) === o).length < 6) {
        pods.push(p);
        continue;
      }
      await p.close(); // this owner has six already: the other needs four
      await cp.kube.delete(`/api/v1/namespaces/${ns}/pods/${p.name}`, { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0 });
    }
    const ofB = pods.filter((p) => owner(members, p.uid) === 'b');
    const ofA = pods.filter((p) => owner(members, p.uid) === 'a');
    const now = new Date(Date.now() - 60_000).toISOString().replace(/\.\d+Z$/, 'Z');
    const cond = (status: 'True' | 'False'): Record<string, unknown> => ({ type: gate, status, reason: status === 'True' ? 'ProbeSucceeded' : 'ProbeFailed', message: status === 'True' ? 'Readiness probe of container web succeeded' : 'Readiness probe failed: HTTP probe failed with statuscode: 503', lastTransitionTime: now, lastProbeTime: now });
    const inherited = ofB.slice(0, 3);
    for (const p of pods) {
      await cp.kube.patch(`/api/v1/namespaces/${ns}/pods/${p.name}/status`, { status: { conditions: [cond(inherited.includes(p) ? 'False' : 'True')] } }, 'strategic');
      p.healthy = false;
    }
    // Every change the API server stores, in order.
    const gates = new Map<string, string>();
    let most = 0;
    const list = await cp.kube.get(`/api/v1/namespaces/${ns}/pods`);
    const kept = new Set(pods.map((p) => p.name));
    const show = (o: Record<string, unknown>): void => {
      const name = (o['metadata'] as { name: string }).name;
      if (!kept.has(name)) return; // a pod picked and deleted above
      gates.set(name, conditionOf(o, gate)?.status ?? 'absent');
      most = Math.max(most, [...gates.values()].filter((s) => s === 'False').length);
    };
    for (const item of (list['items'] ?? []) as Record<string, unknown>[]) show(item);
    const watching = cp.kube.watch(`/api/v1/namespaces/${ns}/pods`, `resourceVersion=${(list['metadata'] as { resourceVersion: string }).resourceVersion}`, (e) => {
      if (e.type === 'ADDED' || e.type === 'MODIFIED') show(e.object);
    }, stop.signal).catch(() => undefined);
    const start = (id: string): RunningController => {
      const c = startController(cp.kubeconfigPath, ns, { log: logs.logger(id), options: { identity: id, owns: (p) => owner(members, p.uid) === id, fleet: { members: () => members, owner } } });
      running.push(c);
      return c;
    };
    logs.subjects('web', ...inherited.map((p) => p.name));
    // a alone for 6 s: three periods past its failure threshold (2 × 1 s) and its hold.
    const a = start('a');
    await sleep(6000);
    const falseOfA = ofA.filter((p) => gates.get(p.name) === 'False').length;
    assert.equal(falseOfA, 0, `a wrote ${falseOfA} False with b's 3 inherited Falses standing (cap 3)`);
    assert.ok(a.events.some((e) => e.type === 'readiness-panic' && e.panic), 'a is in panic: its failing pods fail open');
    // b takes its pods: its inherited Falses count against its share (1 or 2 of the 3 seats), the
    // rest fail open; a, in panic since it had no seat, keeps its pods True (panic never turns one
    // False). The policy settles within its cap.
    start('b');
    await waitFor('b\'s inherited Falses within its share', () => Promise.resolve(ofB.filter((p) => gates.get(p.name) === 'False').length <= 2), 20_000, 100);
    await sleep(4000);
    const settled = [...gates.values()].filter((s) => s === 'False').length;
    process.stderr.write(`# settled: ${settled} False (a ${ofA.filter((p) => gates.get(p.name) === 'False').length}, b ${ofB.filter((p) => gates.get(p.name) === 'False').length})\n`);
    assert.ok(settled <= 3);
    for (const p of pods) p.healthy = true;
    await waitFor('all ten True', () => Promise.resolve([...gates.values()].every((s) => s === 'True')), 20_000, 100);
    stop.abort();
    await watching;
    process.stderr.write(`# ${ofA.length} pods of a, ${ofB.length} of b; at most ${most} False at once (cap 3)\n`);
    assert.ok(most <= 3, `${most} gates False at once (cap 3)`);
  });
});
