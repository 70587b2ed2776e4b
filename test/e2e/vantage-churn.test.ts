// Vantage under replica churn (issue 28; docs/adr/0040-vantage.md), on the pod network
// (docs/adr/0014-pod-network.md), asserted from the pods' side: podserve keeps each pod's access
// log (the time and source address of every HTTP request its server saw), and each replica runs in
// a sandbox on its own node, so a probe's source address says which node it came from.
//
// Three nodes, 12 pods with a count-1 policy (`web`, 4 per node) and 6 with a count-2 one (`two`, 2
// per node: their second vantage probes too), readiness every 2 s, failureThreshold 3, lease 4 s
// (the sharding e2e's figures, so its bounds hold as they are):
//
// 1. r1 alone (node 0): node 0's pods have no vantage: never probed, gate True (NoVantage).
// 2. r2 joins (node 1): node 0's pods are probed from it within one period (+ 500 ms of jitter, as
//    the sharding e2e allows a handover) of its joining, and no gate is ever False.
// 3. r3 joins (node 2); rolling restart (SIGTERM, restart) of each replica: no pod of `web` is left
//    unprobed longer than the sharding e2e's bound for a rolling restart (2 × period + 1 s).
// 4. kill -9 of the replica owning the most `web` pods: they are probed again within lease + period + 500 ms (the sharding e2e's
//    bound); it restarts.
// Throughout: no request of any pod ever came from its own node, and no gate ever left True.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assign } from '../../src/vantage/index.ts';
import { startControlPlane } from '../support/cluster/index.ts';
import type { ControlPlane } from '../support/cluster/index.ts';
import { installCrd } from '../integration/support/controller.ts';
import { waitFor } from '../integration/support/fake-kubelet.ts';
import { createPodNet, podNetSupport } from '../support/podnet/index.ts';
import type { PodNet, Sandbox } from '../support/podnet/index.ts';
import { startPodserve } from '../support/podserve/index.ts';
import { logsOnFailure } from '../support/replicas/index.ts';
import type { Podserve } from '../support/podserve/index.ts';
import { createNetPod, pinNeighbours, podIpOf } from './support/net-pods.ts';
import type { NetPod } from './support/net-pods.ts';
import { createFleet } from '../support/fleet/index.ts';
import type { Fleet, FleetPod } from '../support/fleet/index.ts';
import { AccessLogs, GateHistory, membersOf, membersSince, startNetReplica } from './support/vantage-net.ts';
import type { NetReplica } from './support/vantage-net.ts';

const ns = 'vchurn-e2e';
const gates = { web: 'outprobe.io/web', two: 'outprobe.io/two' } as const;
const ids = ['r1', 'r2', 'r3'];
const replicaNode: Record<string, number> = { r1: 0, r2: 1, r3: 2 };
/** The sharding e2e's figures (test/e2e/sharding.test.ts), so its bounds apply unchanged. */
const periodMs = 2000;
const leaseMs = 4000;
const failureThreshold = 3;
/** Sharding e2e: a graceful rolling restart leaves no pod unprobed longer than this. */
const rollingGapMs = 2 * periodMs + 1000;
/** Sharding e2e: after a kill -9, the victim's pods are probed again within this. */
const killHandoverMs = leaseMs + periodMs + 500;
/** A joining replica probes the pods it gains within one period (+ the same 500 ms of jitter). */
const joinMs = periodMs + 500;
const log = (m: string): void => void process.stderr.write(`# ${m}\n`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const support = podNetSupport();

describe('vantage under churn: join, rolling restart, kill -9 (3 nodes, 18 pods, access logs, real kube-apiserver)', {
  timeout: 300_000,
  skip: support.ok ? false : `no pod network on this machine: ${support.why}`,
}, () => {
  const logs = logsOnFailure('vantage-churn');
  let net: PodNet | undefined;
  let cp: ControlPlane | undefined;
  let podserve: Podserve | undefined;
  let fleet: Fleet | undefined;
  let history: GateHistory | undefined;
  let access: AccessLogs | undefined;
  const pods: (NetPod & { readonly policy: keyof typeof gates })[] = [];
  const replicas = new Map<string, NetReplica>();
  const sandboxes = new Map<string, Sandbox>();
  const fleetPods = new Map<string, FleetPod>();
  let watchFrom = 0;
  /** Every gate True from here on (r1 alone wrote them). */
  let trueFrom = 0;

  const start = (id: string): NetReplica => {
    const r = startNetReplica(cp!, net!, sandboxes.get(id)!, id, fleet!, fleetPods.get(id)!, { namespace: ns, leaseMs });
    logs.record(id, r.child);
    replicas.set(id, r);
    return r;
  };
  const converged = async (members: readonly string[]): Promise<number> => {
    const want = [...members].sort().join(',');
    await waitFor(`members ${want} everywhere`, () => Promise.resolve(members.every((id) => {
      const r = replicas.get(id);
      return r !== undefined && r.child.exitCode === null && membersOf(r) === want;
    })), 30_000, 100);
    return Date.now();
  };
  const stopGracefully = async (id: string): Promise<number | null> => {
    const r = replicas.get(id)!;
    r.child.kill('SIGTERM');
    const code = await r.exited;
    replicas.delete(id);
    return code;
  };
  /** The owner of a `web` pod among `members` (vantage, spread node: rendezvous over the replicas off its node). */
  const ownerOf = (members: readonly string[], p: NetPod): string | undefined => {
    const a = assign(members.map((id) => ({ identity: id, node: net!.nodes[replicaNode[id]!]!.name, zone: undefined })), p.uid, { node: p.node, zone: undefined }, 'node');
    return a.kind === 'owner' ? a.identity : undefined;
  };
  /** The longest time each pod of `which` went unprobed within [from, to] (the open gap at `to` included). */
  const maxGap = (which: readonly NetPod[], from: number, to: number): { pod: string; ms: number; at: number } => {
    let worst = { pod: '', ms: 0, at: 0 };
    for (const p of which) {
      const times = [from, ...access!.of(p.name).map((e) => e.t).filter((t) => t > from && t <= to), to];
      for (let i = 1; i < times.length; i++) {
        const ms = times[i]! - times[i - 1]!;
        if (ms > worst.ms) worst = { pod: p.name, ms, at: times[i - 1]! - from };
      }
    }
    return worst;
  };

  logs.setup(async () => {
    const t0 = Date.now();
    net = await createPodNet({ nodes: 3, log });
    cp = await startControlPlane({ log: () => undefined, bindAddress: net.hostIp, serviceCidr: net.serviceCidr });
    logs.plane(cp);
    podserve = await startPodserve({ log });
    await installCrd(cp.kube);
    await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    for (const [name, count] of [['web', 1], ['two', 2]] as const) {
      await cp.kube.create(`/apis/outprobe.io/v1alpha1/namespaces/${ns}/probepolicies`, {
        apiVersion: 'outprobe.io/v1alpha1',
        kind: 'ProbePolicy',
        metadata: { name, namespace: ns },
        spec: {
          selector: { matchLabels: { app: name } },
          vantage: { count },
          readiness: { conditionType: gates[name], maxUnreadyPercent: 100, probe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: periodMs / 1000, failureThreshold, timeoutSeconds: 1 } },
        },
      });
    }
    const env = { kube: cp.kube, net, podserve };
    const slot = [0, 0, 0];
    for (const [policy, n] of [['web', 12], ['two', 6]] as const) {
      for (let k = 0; k < n; k++) {
        const node = net.nodes[k % 3]!;
        const p = await createNetPod(env, { namespace: ns, name: `${policy}-${k}`, node, ip: podIpOf(node, slot[node.index]!++) }, { gate: gates[policy], labels: { app: policy } }, { accessLog: true });
        pods.push({ ...p, policy });
      }
    }
    await pinNeighbours(net, pods);
    access = new AccessLogs(podserve);
    fleet = await createFleet(cp.kube, { namespace: ns });
    for (const id of ids) {
      const node = net.nodes[replicaNode[id]!]!.name;
      sandboxes.set(id, await net.sandbox(node, `outprobe-${id}`));
      fleetPods.set(id, await fleet.addReplica(id, { ip: sandboxes.get(id)!.ip, node }));
    }
    history = await GateHistory.start(cp.kube, ns, Object.values(gates));
    watchFrom = Date.now();
    log(`pod network (3 nodes), API server, ${pods.length} pods with access logs up in ${Date.now() - t0} ms`);
  });

  logs.teardown(async () => {
    await access?.stop();
    await history?.stop();
    for (const r of replicas.values()) r.child.kill('SIGKILL');
    await Promise.all([...replicas.values()].map((r) => r.exited));
    await podserve?.close();
    await cp?.stop();
    await net?.destroy();
    fleet?.cleanup();
  });

  it('one replica: its node\'s pods NoVantage and True; a second joins: probed from it within one period, no False', async () => {
    const r1Node = net!.nodes[0]!.name;
    const own = pods.filter((p) => p.node === r1Node);
    start('r1');
    await converged(['r1']);
    await waitFor('r1\'s node\'s pods True (NoVantage), the others True', () => Promise.resolve(pods.every((p) => {
      const s = history!.now(p.name, gates[p.policy]);
      return s?.status === 'True' && (p.node === r1Node) === (s.reason === 'NoVantage');
    })), 30_000, 100);
    trueFrom = Date.now();
    // A few periods alone: nothing probes them (no vantage, not probed from their own node).
    await sleep(2 * periodMs);
    await access!.drain();
    for (const p of own) assert.equal(access!.of(p.name).length, 0, `${p.name} was probed while it had no vantage`);
    const r2 = start('r2');
    await converged(['r1', 'r2']);
    const joinedAt = membersSince(r2, 'r1,r2')!;
    await waitFor('node 0\'s pods probed from r2', async () => {
      await access!.drain();
      return own.every((p) => access!.of(p.name).length > 0);
    }, joinMs + 10_000, 100);
    const firsts = own.map((p) => ({ p, first: access!.of(p.name)[0]! }));
    for (const { p, first } of firsts) assert.equal(first.from, sandboxes.get('r2')!.ip, `${p.name} first probed from ${first.from}`);
    const worst = Math.max(...firsts.map(({ first }) => first.t - joinedAt));
    log(`r2 joined: node 0's ${own.length} pods first probed from r2 ${firsts.map(({ p, first }) => `${p.name} +${first.t - joinedAt}`).join(', ')} ms; worst ${worst} ms (bound ${joinMs} ms)`);
    assert.ok(worst <= joinMs, `probed ${worst} ms after r2 joined`);
    // Their first verdict replaces NoVantage, never through False.
    await waitFor('node 0\'s pods judged from r2', () => Promise.resolve(own.every((p) => history!.now(p.name, gates[p.policy])?.reason === 'ProbeSucceeded')), 3 * periodMs + 5000, 100);
    for (const p of pods) assert.deepEqual(history!.departures(p.name, gates[p.policy], 'True', trueFrom), [], `${p.name} left True`);
  });

  it('rolling restart and kill -9: no pod ever probed from its own node; handover gaps within the sharding e2e\'s bounds; no gate ever False', async () => {
    for (const id of ids) if (!replicas.has(id)) start(id);
    await converged(ids);
    await sleep(periodMs + 500);
    const web = pods.filter((p) => p.policy === 'web');

    // Rolling restart, one replica at a time (the chart's maxSurge 0).
    const rollFrom = Date.now();
    for (const id of ids) {
      assert.equal(await stopGracefully(id), 0, `${id} exits 0`);
      await sleep(500);
      start(id);
      await converged(ids);
      await sleep(periodMs);
    }
    const rollTo = Date.now();
    await access!.drain();
    const roll = maxGap(web, rollFrom, rollTo);
    log(`rolling restart (${rollTo - rollFrom} ms): longest gap between two probes of a web pod ${roll.ms} ms (${roll.pod}, ${roll.at} ms in; bound ${rollingGapMs} ms)`);
    assert.ok(roll.ms <= rollingGapMs, `${roll.pod} unprobed for ${roll.ms} ms`);

    // kill -9 of the replica that owns the most web pods (never none): the survivors take its pods once its Lease expires.
    const victim = [...ids].sort((x, y) => web.filter((p) => ownerOf(ids, p) === y).length - web.filter((p) => ownerOf(ids, p) === x).length)[0]!;
    const victims = web.filter((p) => ownerOf(ids, p) === victim);
    assert.ok(victims.length > 0);
    const killed = replicas.get(victim)!;
    killed.child.kill('SIGKILL');
    await killed.exited;
    const killedAt = Date.now();
    replicas.delete(victim);
    await waitFor(`every pod ${victim} owned probed again`, async () => {
      await access!.drain();
      return victims.every((p) => access!.of(p.name).some((e) => e.t > killedAt));
    }, killHandoverMs + 10_000, 100);
    const handover = Math.max(...victims.map((p) => access!.of(p.name).find((e) => e.t > killedAt)!.t - killedAt));
    log(`kill -9 of ${victim}: its ${victims.length} web pods probed again ${handover} ms after the kill (bound lease ${leaseMs} + period ${periodMs} + 500 = ${killHandoverMs} ms)`);
    assert.ok(handover <= killHandoverMs, `handover took ${handover} ms`);
    await converged(ids.filter((id) => id !== victim));
    start(victim);
    await converged(ids);
    await sleep(2 * periodMs);
    await access!.drain();

    // From the pods' own access logs: every request came from a replica's sandbox off the pod's node.
    const sources = new Set([...sandboxes.values()].map((s) => s.ip));
    let requests = 0;
    const wrong: string[] = [];
    for (const p of pods) {
      for (const e of access!.of(p.name)) {
        requests++;
        if (!sources.has(e.from) || net!.nodeOf(e.from).name === p.node) wrong.push(`${p.name}@${p.node} from ${e.from} at ${e.t}`);
      }
    }
    log(`${requests} probe requests over ${Date.now() - watchFrom} ms in the pods' access logs (${access!.dropped} dropped): ${wrong.length} from the pod's own node or a stranger`);
    assert.equal(access!.dropped, 0);
    assert.deepEqual(wrong, []);
    // The count-2 pods were probed from both other nodes (their second vantage too).
    for (const p of pods.filter((x) => x.policy === 'two')) {
      const from = new Set(access!.of(p.name).filter((e) => e.t > killedAt).map((e) => net!.nodeOf(e.from).name));
      assert.equal(from.size, 2, `${p.name}@${p.node} probed from ${[...from].join(',')}`);
    }
    for (const p of pods) assert.deepEqual(history!.departures(p.name, gates[p.policy], 'True', trueFrom), [], `${p.name} left True`);
  });
});
