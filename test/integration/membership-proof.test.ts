// Issue 27, finding 1 (docs/adr/0036-membership-proven-by-the-api-server.md): anyone who can
// write a Lease in the release namespace forges shard members. Here two real replicas
// (ShardMembership with its PodProof, against a real kube-apiserver) run from Pods of their
// Deployment (Deployment → ReplicaSet → Pod, Running and Ready, created by the shared fleet
// helper), and an attacker writes Leases the way the hostile review did:
//   - a new Lease name and holder (no such pod);
//   - a copy of r1's Lease under another name (copied holder and claim);
//   - a Lease for a Ready pod of the fleet with a far-future renewTime, and one with a huge duration;
//   - a Lease for that pod declaring the wrong node, or the wrong IP;
//   - a Lease for a pod of the Deployment that is Running but not Ready;
//   - a Lease for a Running, Ready pod of another Deployment with the same ServiceAccount;
//   - a Lease for a pod of the Deployment running as another ServiceAccount.
// None becomes a member in either replica: the two keep each other only, own every pod between
// them, ignore the forged counts, know only each other as peers (at the pod's address); each
// forged Lease is counted (outprobe_shard_leases_rejected_total{reason}) and reported once per
// Lease and reason in the log and in a ShardLeaseRejected Warning Event on the Lease.
// Before this (today's ShardMembership): every forged Lease was a member and owned pods.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { systemClock, systemRandom } from '../../src/kernel/index.ts';
import { KubeClient, fromKubeconfig } from '../../src/kube/index.ts';
import type { Pod } from '../../src/kube/index.ts';
import { EventRecorder, Metrics, createLogger } from '../../src/observability/index.ts';
import { PodProof, ShardMembership, countsAnnotation, encodeClaim, leaseName, memberAnnotation, microTime, shardLabel, shardReporter } from '../../src/sharding/index.ts';
import type { ShardEvent } from '../../src/sharding/index.ts';
import { startControlPlane } from '../support/cluster/index.ts';
import type { ControlPlane } from '../support/cluster/index.ts';
import { createFleet, markRunningReady } from '../support/fleet/index.ts';
import type { Fleet, FleetPod } from '../support/fleet/index.ts';
import { waitFor } from './support/fake-kubelet.ts';

const ns = 'proof-it';
const leaseMs = 6000;
const renewMs = 500;
/** Fake pods to shard (only their UIDs matter): every one must be owned by r1 or r2, never by a forged member. */
const podsToShard: Pod[] = Array.from({ length: 200 }, (_, i) => ({ uid: `pod-${i}`, namespace: 'app', name: `p${i}`, phase: 'Running' }) as unknown as Pod);

interface Replica {
  readonly id: string;
  readonly pod: FleetPod;
  readonly m: ShardMembership;
  readonly events: ShardEvent[];
  readonly metrics: Metrics;
  done: Promise<void>;
}

describe('shard membership is proven by the API server, not declared by a Lease (forged Leases, real kube-apiserver)', { timeout: 180_000 }, () => {
  let cp: ControlPlane;
  let client: KubeClient;
  let fleet: Fleet;
  const stop = new AbortController();
  const replicas: Replica[] = [];
  const lines: string[] = [];
  let recorder: EventRecorder;

  const lease = (name: string, holder: string, claim: string | undefined, o: { renewTime?: number; durationSeconds?: number; counts?: string } = {}): Record<string, unknown> => ({
    apiVersion: 'coordination.k8s.io/v1', kind: 'Lease',
    metadata: { name, namespace: ns, labels: { [shardLabel]: 'true' }, annotations: { ...(claim === undefined ? {} : { [memberAnnotation]: claim }), [countsAnnotation]: o.counts ?? '{"app/web":[500,0,0]}' } },
    spec: { holderIdentity: holder, leaseDurationSeconds: o.durationSeconds ?? leaseMs / 1000, renewTime: microTime(o.renewTime ?? Date.now()) },
  });

  before(async () => {
    cp = await startControlPlane({ log: () => undefined });
    client = new KubeClient({ connection: fromKubeconfig(cp.kubeconfigPath), clock: systemClock, random: systemRandom });
    await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    fleet = await createFleet(cp.kube, { namespace: ns });
    const stream = new Writable({
      write(chunk: Buffer, _enc, done): void {
        lines.push(...chunk.toString('utf8').split('\n').filter((l) => l !== ''));
        done();
      },
    });
    const log = createLogger({ level: 'info', stream });
    recorder = new EventRecorder({ api: client, clock: systemClock, random: systemRandom, logger: log, reportingInstance: 'proof-it' });
    for (const [i, id] of ['r1', 'r2'].entries()) {
      const pod = await fleet.addReplica(id, { ip: `198.19.0.${i + 10}`, node: `node-${i}` });
      const metrics = new Metrics({ defaultMetrics: false });
      const events: ShardEvent[] = [];
      const report = shardReporter({ log, metrics, events: recorder, namespace: ns });
      const proof = new PodProof({ client, clock: systemClock, random: systemRandom, namespace: ns, self: { podName: pod.name, podUid: pod.uid, nodeName: pod.node, podIP: pod.ip }, leaseDurationMs: leaseMs, peerPort: 9444 });
      const m = new ShardMembership({ client, clock: systemClock, random: systemRandom, namespace: ns, identity: id, leaseDurationMs: leaseMs, renewIntervalMs: renewMs, proof, observe: (e) => {
        events.push(e);
        report(e);
      } });
      replicas.push({ id, pod, m, events, metrics, done: Promise.resolve() });
    }
    for (const r of replicas) r.done = r.m.run(stop.signal, { ready: true, pods: () => podsToShard, localCounts: () => new Map(), resync: () => undefined });
  });

  after(async () => {
    stop.abort();
    await Promise.all(replicas.map((r) => r.done));
    await recorder.close();
    await client.close();
    await cp.stop();
    fleet.cleanup();
    if (process.exitCode !== undefined && process.exitCode !== 0) process.stderr.write(`${lines.join('\n')}\n`);
  });

  it('no forged Lease becomes a member; each is counted and reported once per Lease and reason', async () => {
    await waitFor('r1 and r2 are members of each other', () => Promise.resolve(replicas.every((r) => r.m.members?.join(',') === 'r1,r2')), 30_000, 50);
    const [r1, r2] = replicas as [Replica, Replica];
    const leases = `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`;
    // Pods the attacker controls or names: r3 of the fleet (Running, Ready; no replica renews its Lease),
    // r4 of the fleet (Running, not Ready), imp-0 of another Deployment (Running, Ready, same ServiceAccount),
    // r5 of the fleet running as another ServiceAccount.
    const r3 = await fleet.addReplica('r3', { ip: '198.19.0.13', node: 'node-0' });
    const r4 = await fleet.addReplica('r4', { ip: '198.19.0.14', node: 'node-1' });
    await markRunningReady(cp.kube, ns, 'r4', '198.19.0.14', false);
    const impostor = await createFleet(cp.kube, { namespace: ns, name: 'impostor', labels: { app: 'impostor' } });
    const imp = await impostor.addReplica('imp-0', { ip: '198.19.0.20', node: 'node-0' });
    await cp.kube.create(`/api/v1/namespaces/${ns}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'other' } });
    const r5 = await cp.kube.create(`/api/v1/namespaces/${ns}/pods`, {
      apiVersion: 'v1', kind: 'Pod',
      metadata: { name: 'r5', namespace: ns, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: fleet.replicaSet.name, uid: fleet.replicaSet.uid, controller: true }] },
      spec: { serviceAccountName: 'other', nodeName: 'node-1', containers: [{ name: 'c', image: 'x' }] },
    });
    const r5Uid = (r5['metadata'] as { uid: string }).uid;
    await markRunningReady(cp.kube, ns, 'r5', '198.19.0.15');
    const claimOf = (p: { uid: string; node: string; ip: string }, over: Partial<{ node: string; ip: string }> = {}): string => encodeClaim({ podUid: p.uid, nodeName: over.node ?? p.node, podIP: over.ip ?? p.ip });
    const forged: [string, Record<string, unknown>, string][] = [
      ['new name and holder', lease(leaseName('ghost'), 'ghost', claimOf({ uid: 'u-ghost', node: 'node-0', ip: '198.19.0.99' })), 'pod-not-found'],
      ['copied holder', lease('outprobe-shard-r1-copy', 'r1', claimOf(r1.pod)), 'lease-name'],
      ['far-future renewTime', lease(leaseName('r3'), 'r3', claimOf(r3), { renewTime: Date.now() + 365 * 86_400_000 }), 'renew-time-future'],
      ['a pod that is not Ready', lease(leaseName('r4'), 'r4', claimOf(r4)), 'pod-not-ready'],
      ['pod of another Deployment', lease(leaseName('imp-0'), 'imp-0', claimOf(imp)), 'owner'],
      ['another ServiceAccount', lease(leaseName('r5'), 'r5', claimOf({ uid: r5Uid, node: 'node-1', ip: '198.19.0.15' })), 'service-account'],
    ];
    for (const [, body] of forged) await cp.kube.create(leases, body);
    // A holder naming no pod, with r3's claim; then the wrong node, the wrong IP and a huge duration, each on a Ready pod of the fleet.
    await cp.kube.create(leases, lease(leaseName('r3x'), 'r3x', claimOf(r3)));
    const r6 = await fleet.addReplica('r6', { ip: '198.19.0.16', node: 'node-1' });
    await cp.kube.create(leases, lease(leaseName('r6'), 'r6', claimOf(r6, { node: 'node-0' })));
    const r7 = await fleet.addReplica('r7', { ip: '198.19.0.17', node: 'node-1' });
    await cp.kube.create(leases, lease(leaseName('r7'), 'r7', claimOf(r7, { ip: '198.19.0.250' })));
    const r8 = await fleet.addReplica('r8', { ip: '198.19.0.18', node: 'node-0' });
    await cp.kube.create(leases, lease(leaseName('r8'), 'r8', claimOf(r8), { durationSeconds: 86_400 }));
    const expected = new Map<string, string>([
      ...forged.map(([, body, reason]): [string, string] => [(body['metadata'] as { name: string }).name, reason]),
      [leaseName('r3x'), 'pod-not-found'],
      [leaseName('r6'), 'pod-node'],
      [leaseName('r7'), 'pod-ip'],
      [leaseName('r8'), 'lease-duration'],
    ]);
    const rejectedBy = (r: Replica): Map<string, string[]> => {
      const out = new Map<string, string[]>();
      for (const e of r.events) if (e.type === 'lease-rejected') out.set(e.lease.name, [...(out.get(e.lease.name) ?? []), e.reason]);
      return out;
    };
    await waitFor('every forged Lease rejected by both replicas', () => Promise.resolve(replicas.every((r) => [...expected.keys()].every((n) => rejectedBy(r).has(n)))), 20_000, 50);
    // Let both recompute many times (renews every 0.5 s, forged Leases touched again).
    for (let k = 0; k < 3; k++) {
      for (const name of expected.keys()) await cp.kube.patch(`${leases}/${name}`, { metadata: { annotations: { touched: String(k) } } });
      await new Promise((r) => setTimeout(r, 600));
    }
    for (const r of replicas) {
      const got = rejectedBy(r);
      for (const [name, reason] of expected) assert.deepEqual(got.get(name), [reason], `${r.id}: ${name} rejected once, for ${reason}`);
      assert.deepEqual(r.m.members, ['r1', 'r2'], `${r.id}: members`);
      assert.deepEqual(r.m.peers().map((p) => [p.identity, p.peerAddress]), [[r.id === 'r1' ? 'r2' : 'r1', `${(r.id === 'r1' ? r2 : r1).pod.ip}:9444`]], `${r.id}: its one peer, at its pod's address`);
      assert.deepEqual(r.m.memberRecords().map((m) => [m.identity, m.podName, m.podUid, m.nodeName, m.podIP]).sort(), [r1, r2].map((x) => [x.id, x.pod.name, x.pod.uid, x.pod.node, x.pod.ip]), `${r.id}: the verified member records`);
      // The forged counts (500 failing each) are ignored.
      assert.equal(r.m.aggregate('app/web', { failing: 0, erroring: 0, remediations: 0 }).failing, 0, `${r.id}: forged counts ignored`);
      const text = await r.metrics.registry.metrics();
      for (const reason of new Set(expected.values())) {
        const n = [...expected.values()].filter((x) => x === reason).length;
        assert.match(text, new RegExp(`outprobe_shard_leases_rejected_total\\{reason="${reason}"\\} ${n}\\n`), `${r.id}: counter for ${reason}`);
        assert.match(text, new RegExp(`outprobe_shard_leases_rejected\\{reason="${reason}"\\} ${n}\\n`), `${r.id}: gauge for ${reason}`);
      }
    }
    let owned = 0;
    for (const p of podsToShard) {
      const owners = replicas.filter((r) => r.m.owns(p)).length;
      assert.equal(owners, 1, `pod ${p.uid} owned by exactly one real replica`);
      owned++;
    }
    assert.equal(owned, podsToShard.length);
    // A Warning Event on each forged Lease, once (count 1 per replica: the two replicas write their own).
    await waitFor('ShardLeaseRejected Events', async () => {
      const list = (await cp.kube.get(`/api/v1/namespaces/${ns}/events`))['items'] as { reason?: string; involvedObject?: { kind?: string; name?: string } }[];
      const about = new Set(list.filter((e) => e.reason === 'ShardLeaseRejected' && e.involvedObject?.kind === 'Lease').map((e) => e.involvedObject?.name));
      return [...expected.keys()].every((n) => about.has(n));
    }, 20_000, 200);
    const logged = lines.filter((l) => l.includes('shard Lease rejected'));
    assert.equal(logged.length, 2 * expected.size, `one log line per forged Lease per replica (${logged.length})`);
  });
});
