// Fleet-wide remediation guards (issue 26, ADR 0033) on the pod network: a real kube-apiserver,
// 12 pods on 4 nodes served by one podserve, three outprobe replicas each in a sandbox on a node,
// one ProbePolicy with an Evict liveness probe, remediation halt above 40 % and maxUnavailable 2
// (the defaults are 50 % and 1). The test plays the kubelet: an evicted pod's server stops and
// its Pod object is removed, as its node would once the container exited.
//
// (a) a shared dependency fails: every pod answers 503 for 18 s. Each replica owns about 4 of
//     the 12 pods; on today's per-replica count (4 of 12, 33 %) none reached the 40 % halt and
//     each evicted pod after pod. The halt counts the policy's failing pods across the replicas:
//     no eviction, the halt reported.
// (b) two pods fail liveness for real: exactly those two are remediated, never more than
//     maxUnavailable at once.
// (c) kill -9 of a replica while three of its pods are unreachable (replies delayed past the
//     probe timeout) around the handover: no pod evicted (a handover in progress is a wait).
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { owner } from '../../src/sharding/index.ts';
import { startControlPlane } from '../support/cluster/index.ts';
import type { ControlPlane } from '../support/cluster/index.ts';
import { installCrd } from '../integration/support/controller.ts';
import { conditionOf, statusBody, strategicPatch, waitFor } from '../integration/support/fake-kubelet.ts';
import { createPodNet, podNetSupport } from '../support/podnet/index.ts';
import type { PodNet, Sandbox } from '../support/podnet/index.ts';
import { startPodserve } from '../support/podserve/index.ts';
import type { Podserve } from '../support/podserve/index.ts';
import { logsOnFailure } from '../support/replicas/index.ts';
import { createFleet } from '../support/fleet/index.ts';
import type { Fleet, FleetPod } from '../support/fleet/index.ts';
import { createNetPod, pinNeighbours, podIpOf } from './support/net-pods.ts';
import type { NetPod } from './support/net-pods.ts';

const mainPath = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
const ns = 'fleet-rem-e2e';
const podCount = 12;
const nodeCount = 4;
const replicaNodes: Record<string, number> = { r1: 0, r2: 1, r3: 2 };
const ids = Object.keys(replicaNodes);
const periodMs = 1000;
const leaseMs = 4000;
const maxUnavailable = 2;
const haltPercent = 40;
const log = (m: string): void => void process.stderr.write(`# ${m}\n`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Replica {
  readonly id: string;
  readonly child: ChildProcess;
  readonly lines: { readonly at: number; readonly o: Record<string, unknown> }[];
  readonly exited: Promise<number | null>;
}

function startReplica(cp: ControlPlane, net: PodNet, sandbox: Sandbox, id: string, fleet: Fleet, pod: FleetPod): Replica {
  const args = [mainPath, '--kubeconfig', cp.kubeconfigPath, '--identity', id, '--namespace', ns, '--lease-namespace', ns, ...fleet.args(pod), '--peer-addr', `${sandbox.ip}:9444`,
    '--allowed-probe-cidrs', net.clusterCidr, '--metrics-addr', `${sandbox.ip}:0`, '--metrics-auth', 'none', '--lease-duration', String(leaseMs / 1000),
    '--lease-renew-interval', '1', '--status-interval', '1', '--log-level', 'debug'];
  const child = net.spawnIn(sandbox.netns, process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...fleet.env(pod) } });
  const r: Replica = { id, child, lines: [], exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))) };
  createInterface({ input: child.stdout! }).on('line', (line) => {
    try {
      r.lines.push({ at: Date.now(), o: JSON.parse(line) as Record<string, unknown> });
    } catch {
      r.lines.push({ at: Date.now(), o: { msg: line } });
    }
  });
  return r;
}

const membersOf = (r: Replica): string | undefined => {
  const last = r.lines.filter((l) => l.o['msg'] === 'shard membership changed').at(-1);
  return last === undefined ? undefined : (last.o['members'] as string[]).join(',');
};

const support = podNetSupport();

describe(`fleet-wide remediation: 3 replicas, ${podCount} pods, halt above ${haltPercent} %, maxUnavailable ${maxUnavailable}`, {
  timeout: 240_000,
  skip: support.ok ? false : `no pod network on this machine: ${support.why}`,
}, () => {
  const logs = logsOnFailure('fleet-remediation');
  let net: PodNet | undefined;
  let cp: ControlPlane | undefined;
  let podserve: Podserve | undefined;
  let fleet: Fleet | undefined;
  const pods: NetPod[] = [];
  const replicas = new Map<string, Replica>();
  /** The kubelet the test plays: pods it removed after an eviction, when, and the most terminating at once. */
  const removed = new Map<string, number>();
  let mostTerminating = 0;
  let kubelet: Promise<void> | undefined;
  let stopped = false;

  /** Evictions every replica logged since `since`, by pod name. */
  const evictedSince = (since: number): string[] => [...replicas.values()].flatMap((r) => r.lines.filter((l) => l.at >= since && l.o['result'] === 'evicted').map((l) => String(l.o['pod']).split('/')[1] ?? ''));
  const halts = (since: number): string[] => [...replicas.values()].flatMap((r) => r.lines.filter((l) => l.at >= since && (l.o['result'] === 'halted' || String(l.o['msg']).includes('remediation halted'))).map((l) => `${r.id}: ${String(l.o['msg'])}`));

  /** Plays the kubelet for terminating pods: the container stops, the Pod object goes. */
  const playKubelet = async (): Promise<void> => {
    while (!stopped) {
      const list = await cp!.kube.get(`/api/v1/namespaces/${ns}/pods?labelSelector=app%3Dweb`).catch(() => ({ items: [] }));
      const terminating = ((list['items'] ?? []) as { metadata: { name: string; deletionTimestamp?: string } }[]).filter((p) => p.metadata.deletionTimestamp !== undefined);
      mostTerminating = Math.max(mostTerminating, terminating.length);
      for (const p of terminating) {
        await podserve!.remove(p.metadata.name).catch(() => undefined);
        await cp!.kube.call('DELETE', `/api/v1/namespaces/${ns}/pods/${p.metadata.name}?gracePeriodSeconds=0`);
        if (!removed.has(p.metadata.name)) removed.set(p.metadata.name, Date.now());
      }
      await sleep(100);
    }
  };

  logs.setup(async () => {
    net = await createPodNet({ nodes: nodeCount, log });
    cp = await startControlPlane({ log: () => undefined, bindAddress: net.hostIp, serviceCidr: net.serviceCidr });
    logs.plane(cp);
    podserve = await startPodserve({ log });
    await installCrd(cp.kube);
    await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    fleet = await createFleet(cp.kube, { namespace: ns });
    await cp.kube.create(`/apis/outprobe.io/v1alpha1/namespaces/${ns}/probepolicies`, {
      apiVersion: 'outprobe.io/v1alpha1', kind: 'ProbePolicy', metadata: { name: 'web', namespace: ns },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        mode: 'Enforce',
        // The guards are under test, not the vantage (ADR 0040, test/e2e/vantage.test.ts): every
        // replica may probe every pod, so ownership is plain rendezvous over the replicas.
        vantage: { spread: 'any' },
        liveness: { action: 'Evict', probe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: periodMs / 1000, failureThreshold: 2, timeoutSeconds: 1 } },
        remediation: { maxUnavailable, haltAbovePercentFailing: haltPercent },
      },
    });
    const env = { kube: cp.kube, net, podserve };
    for (let k = 0; k < podCount; k++) {
      const node = net.nodes[k % nodeCount]!;
      pods.push(await createNetPod(env, { namespace: ns, name: `web-${k}`, node, ip: podIpOf(node, Math.floor(k / nodeCount)) }, { terminationGracePeriodSeconds: 1 }));
    }
    await pinNeighbours(net, pods);
    for (const [id, node] of Object.entries(replicaNodes)) {
      const sandbox = await net.sandbox(net.nodes[node]!.name, `outprobe-${id}`);
      const pod = await fleet.addReplica(id, { ip: sandbox.ip, node: net.nodes[node]!.name });
      const r = startReplica(cp, net, sandbox, id, fleet, pod);
      logs.record(id, r.child);
      replicas.set(id, r);
    }
    kubelet = playKubelet();
    await waitFor('the 3 replicas agree on members', () => Promise.resolve([...replicas.values()].every((r) => membersOf(r) === ids.join(','))), 60_000, 100);
    // A membership change is a handover in progress for lease + one period (ADR 0033): let it end.
    await sleep(leaseMs + 2 * periodMs);
    log(`pods per owner: ${ids.map((id) => `${id} ${pods.filter((p) => owner(ids, p.uid) === id).length}`).join(', ')}`);
  });

  logs.teardown(async () => {
    stopped = true;
    await kubelet;
    for (const r of replicas.values()) r.child.kill('SIGKILL');
    await Promise.all([...replicas.values()].map((r) => r.exited));
    await podserve?.close();
    await cp?.stop();
    await net?.destroy();
    fleet?.cleanup();
  });

  it('(a) every pod answers 503 for 18 s (a shared dependency): no eviction, the halt reported', async () => {
    logs.subjects('web', ...pods.map((p) => p.name));
    const t0 = Date.now();
    for (const p of pods) await podserve!.setHealthy(p.name, false);
    let haltedCondition = false;
    const end = Date.now() + 18_000;
    while (Date.now() < end) {
      const policy = await cp!.kube.get(`/apis/outprobe.io/v1alpha1/namespaces/${ns}/probepolicies/web`);
      if (conditionOf(policy, 'RemediationHalted')?.status === 'True') haltedCondition = true;
      await sleep(250);
    }
    for (const p of pods) if (!removed.has(p.name)) await podserve!.setHealthy(p.name, true);
    // Requests queued during the failure are dropped once the pods pass again (settle: period + timeout).
    await sleep(3 * periodMs + 1000);
    const evicted = evictedSince(t0);
    log(`(a) evictions: ${evicted.length} (${evicted.join(', ') || 'none'}); halts logged: ${halts(t0).length}; RemediationHalted True seen: ${haltedCondition}`);
    assert.deepEqual(evicted, [], 'no pod evicted while every pod of the policy fails');
    assert.equal(removed.size, 0, 'no pod removed');
    assert.ok(haltedCondition || halts(t0).length > 0, 'the halt is reported (RemediationHalted)');
    // A liveness Failure holds its target until the container restarts (the kubelet's rule,
    // §3.3): every pod stays failing, and the policy halted, until then. The test restarts
    // them as the kubelet would, so (b) and (c) start from healthy pods.
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    for (const p of pods) await strategicPatch(cp!.kube, `/api/v1/namespaces/${ns}/pods/${p.name}/status`, statusBody(p.uid, p.ip, 1, now, net!.nodeOf(p.node).ip));
    await waitFor('the halt over once the containers restarted', () => Promise.resolve([...replicas.values()].some((r) => r.lines.some((l) => l.at >= t0 && l.o['msg'] === 'Remediation resumed'))), 20_000, 200);
  });

  it('(b) two pods fail liveness for real: exactly those two remediated, at most maxUnavailable at once', async () => {
    const dying = [pods[1]!, pods[6]!];
    logs.subjects(...dying.map((p) => p.name));
    const t0 = Date.now();
    for (const p of dying) await podserve!.setHealthy(p.name, false);
    await waitFor('both failing pods remediated', () => Promise.resolve(dying.every((p) => removed.has(p.name))), 60_000, 200);
    await sleep(3000);
    const evicted = evictedSince(t0).sort();
    log(`(b) evicted ${evicted.join(', ')} in ${Math.max(...dying.map((p) => removed.get(p.name) ?? 0)) - t0} ms; most terminating at once ${mostTerminating}`);
    assert.deepEqual(evicted, dying.map((p) => p.name).sort(), 'exactly the failing pods, each once');
    assert.deepEqual([...removed.keys()].sort(), dying.map((p) => p.name).sort());
    assert.ok(mostTerminating <= maxUnavailable, `${mostTerminating} terminating at once`);
  });

  it('(c) kill -9 of a replica while 3 of its pods are unreachable around the handover: no healthy pod evicted', async () => {
    // The replica that owns the most of the pods still there (10 pods on 3 replicas: at least 4).
    const left = pods.filter((p) => !removed.has(p.name));
    const ownedBy = (id: string): typeof left => left.filter((p) => owner(ids, p.uid) === id);
    const victim = [...ids].sort((a, b) => ownedBy(b).length - ownedBy(a).length)[0]!;
    const cut = ownedBy(victim).slice(0, 3);
    assert.equal(cut.length, 3, `${victim} owns 3 pods still there`);
    logs.subjects(...cut.map((p) => p.name));
    const before = removed.size;
    const killedAt = Date.now();
    for (const p of cut) await podserve!.setDelay(p.name, 3000); // beyond the probe's 1 s timeout: unreachable
    replicas.get(victim)!.child.kill('SIGKILL');
    await replicas.get(victim)!.exited;
    // Unreachable until the survivors have taken the pods over (lease) and probed them past failureThreshold.
    await sleep(leaseMs + 2 * periodMs);
    for (const p of cut) await podserve!.setDelay(p.name, 0);
    await sleep(leaseMs + 4 * periodMs);
    const evicted = evictedSince(killedAt);
    const waited = [...replicas.values()].flatMap((r) => r.lines.filter((l) => l.at >= killedAt && l.o['result'] === 'waiting')).length;
    log(`(c) kill -9 of ${victim}: evictions ${evicted.length} (${evicted.join(', ') || 'none'}), RemediationWaiting ${waited}`);
    assert.deepEqual(evicted, [], 'no healthy pod evicted around the handover');
    assert.equal(removed.size, before);
  });
});
