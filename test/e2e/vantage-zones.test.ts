// `vantage: {count: 2, spread: zone}` across two zones (issue 28; docs/adr/0058-several-vantages.md,
// "Count 2 across two zones"), on the pod network (docs/adr/0014-pod-network.md): four nodes, two
// per zone (Node objects labelled `topology.kubernetes.io/zone` a and b, read by the replicas with
// `get nodes`), replica ra on node 0 (zone a) and rb on node 2 (zone b), the pods on nodes 1 (zone
// a) and 3 (zone b). Each pod's two vantages are then one replica per zone: its owner in the other
// zone, the other replica on another node of its own zone. Three policies, one per decision
// (quorum, all, any), each with these pods (readiness every 1 s, failureThreshold 3, second
// opinion on, as by default):
//
// - one:  on node 1 (zone a), cut off from zone b (100 % loss from nodes 2 and 3's subnets);
// - oneA: on node 3 (zone b), cut off from zone a;
// - both: on node 3, cut off from every other node (both zones);
// - ok1, ok3: on nodes 1 and 3, never cut.
//
// ADR 0058: reachable from one zone only, `quorum` and `all` keep the pod Ready and `any` takes
// it out; reachable from neither, False under every decision. "Fewer vantages than count": with rb
// down, count 2 is count 1, ra's own verdict (no pod here loses every vantage: no NoVantage), so
// `one` is True under every decision and `oneA` False; rb back, the two-zone rule again. Nothing
// flaps: ok1/ok3 and one (quorum, all) are reachable from a vantage all along and never leave True
// over the whole run, as the pods' own watch history shows, not a sample.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
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
import { createZonedNodes, GateHistory, membersOf, startNetReplica } from './support/vantage-net.ts';
import type { NetReplica } from './support/vantage-net.ts';

const ns = 'vzones-e2e';
const decisions = ['quorum', 'all', 'any'] as const;
type Decision = (typeof decisions)[number];
const gateOf = (d: Decision): string => `outprobe.io/${d}`;
const roles = ['one', 'oneA', 'both', 'ok1', 'ok3'] as const;
type Role = (typeof roles)[number];
/** Node index of each role's pod: 1 is zone a, 3 is zone b. */
const nodeOfRole: Record<Role, number> = { one: 1, oneA: 3, both: 3, ok1: 1, ok3: 3 };
const zoneOfNode = ['a', 'a', 'b', 'b'];
const replicaNode: Record<string, number> = { ra: 0, rb: 2 };
const periodMs = 1000;
const failureThreshold = 3;
const timeoutMs = 1000;
const leaseMs = 6000;
/** The report's step (a vantage's verdict goes out on the controller's 500 ms step): one second at most. */
const reportMs = 1000;
/** Slack for 2 shared cores, as the other vantage e2e tests allow. */
const slackMs = 8000;
/** A vantage turns a pod False: period × failureThreshold + a probe timeout + one report + slack (vantage-count.test.ts). */
const detectBoundMs = periodMs * failureThreshold + timeoutMs + reportMs + slackMs;
/** How long a judgement must hold: several times what turning False takes. */
const holdMs = 3 * periodMs * failureThreshold + 6000;
/**
 * A vantage gone (kill -9): its Lease expires (leaseMs), the survivor assigns again on its next
 * step and its own next pass (a period and a probe timeout) recomputes the combination without it.
 */
const lossBoundMs = leaseMs + periodMs + timeoutMs + reportMs + slackMs;
const log = (m: string): void => void process.stderr.write(`# ${m}\n`);

/** ADR 0058's rule for this test's pods: the gate each should show with both vantages, and with ra alone. */
function expected(role: Role, d: Decision, rbUp: boolean): 'True' | 'False' {
  if (role === 'ok1' || role === 'ok3') return 'True';
  if (role === 'both') return 'False';
  if (!rbUp) return role === 'one' ? 'True' : 'False'; // ra (zone a) alone: reaches `one`, not `oneA`
  return d === 'any' ? 'False' : 'True';
}

const support = podNetSupport();

describe('vantage count 2, spread zone, across two zones (4 nodes, 2 zones, 2 replicas, 3 decisions, real kube-apiserver)', {
  timeout: 300_000,
  skip: support.ok ? false : `no pod network on this machine: ${support.why}`,
}, () => {
  const logs = logsOnFailure('vantage-zones');
  let net: PodNet | undefined;
  let cp: ControlPlane | undefined;
  let podserve: Podserve | undefined;
  let fleet: Fleet | undefined;
  let history: GateHistory | undefined;
  const pods = new Map<string, NetPod>();
  const replicas = new Map<string, NetReplica>();
  const sandboxes = new Map<string, Sandbox>();
  const fleetPods = new Map<string, FleetPod>();
  const podName = (role: Role, d: Decision): string => `${role.toLowerCase()}-${d}`;
  const expectedOf = (name: string, rbUp: boolean): 'True' | 'False' => {
    for (const d of decisions) for (const role of roles) if (podName(role, d) === name) return expected(role, d, rbUp);
    throw new Error(`no pod ${name}`);
  };

  const start = (id: string): NetReplica => {
    const r = startNetReplica(cp!, net!, sandboxes.get(id)!, id, fleet!, fleetPods.get(id)!, { namespace: ns, leaseMs });
    logs.record(id, r.child);
    replicas.set(id, r);
    return r;
  };
  const states = (): string => decisions.flatMap((d) => roles.map((r) => `${podName(r, d)}=${history!.now(podName(r, d), gateOf(d))?.status ?? '?'}`)).join(' ');
  /** Waits until every pod shows `expected(…, rbUp)`; returns when each pod first did, after `from`. */
  const settle = async (what: string, rbUp: boolean, from: number, boundMs: number): Promise<Map<string, number>> => {
    const at = new Map<string, number>();
    await waitFor(what, () => {
      for (const d of decisions) {
        for (const role of roles) {
          const name = podName(role, d);
          const want = expected(role, d, rbUp);
          if (history!.now(name, gateOf(d))?.status === want) {
            if (!at.has(name)) at.set(name, (history!.firstAfter(name, gateOf(d), want, from) ?? from) - from);
          } else at.delete(name);
        }
      }
      return Promise.resolve(at.size === decisions.length * roles.length);
    }, boundMs + 20_000, 100).catch((err: unknown) => { throw new Error(`${String(err)}: ${states()}`); });
    return at;
  };

  logs.setup(async () => {
    const t0 = Date.now();
    net = await createPodNet({ nodes: 4, log });
    cp = await startControlPlane({ log: () => undefined, bindAddress: net.hostIp, serviceCidr: net.serviceCidr });
    logs.plane(cp);
    podserve = await startPodserve({ log });
    await installCrd(cp.kube);
    await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await createZonedNodes(cp.kube, new Map(net.nodes.map((n, i) => [n.name, zoneOfNode[i]])));
    for (const d of decisions) {
      const policy = await cp.kube.create(`/apis/outprobe.io/v1alpha1/namespaces/${ns}/probepolicies`, {
        apiVersion: 'outprobe.io/v1alpha1',
        kind: 'ProbePolicy',
        metadata: { name: d, namespace: ns },
        spec: {
          selector: { matchLabels: { app: d } },
          vantage: { spread: 'zone', count: 2, decision: d },
          readiness: { conditionType: gateOf(d), maxUnreadyPercent: 100, probe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: periodMs / 1000, failureThreshold, timeoutSeconds: timeoutMs / 1000 } },
        },
      });
      assert.deepEqual((policy['spec'] as { vantage: unknown }).vantage, { spread: 'zone', count: 2, decision: d });
    }
    const env = { kube: cp.kube, net, podserve };
    const slot = [0, 0, 0, 0];
    for (const d of decisions) {
      for (const role of roles) {
        const node = net.nodes[nodeOfRole[role]]!;
        const name = podName(role, d);
        pods.set(name, await createNetPod(env, { namespace: ns, name, node, ip: podIpOf(node, slot[node.index]!++) }, { gate: gateOf(d), labels: { app: d } }));
      }
    }
    await pinNeighbours(net, [...pods.values()]);
    fleet = await createFleet(cp.kube, { namespace: ns });
    for (const [id, n] of Object.entries(replicaNode)) {
      const node = net.nodes[n]!.name;
      sandboxes.set(id, await net.sandbox(node, `outprobe-${id}`));
      fleetPods.set(id, await fleet.addReplica(id, { ip: sandboxes.get(id)!.ip, node }));
      start(id);
    }
    history = await GateHistory.start(cp.kube, ns, decisions.map(gateOf));
    log(`pod network (4 nodes, zones ${zoneOfNode.join(',')}), API server, ${pods.size} pods and 2 replicas up in ${Date.now() - t0} ms`);
  });

  logs.teardown(async () => {
    await history?.stop();
    for (const r of replicas.values()) r.child.kill('SIGKILL');
    await Promise.all([...replicas.values()].map((r) => r.exited));
    await podserve?.close();
    await cp?.stop();
    await net?.destroy();
    fleet?.cleanup();
  });

  it('reachable from one zone: True under quorum and all, False under any; from neither: False; rb down: count 1 from ra, nothing flaps; rb back: the two-zone rule again', async () => {
    await waitFor('2 members everywhere', () => Promise.resolve([...replicas.values()].every((r) => membersOf(r) === 'ra,rb')), 60_000, 100);
    await waitFor('every gate True', () => Promise.resolve(decisions.every((d) => roles.every((r) => history!.now(podName(r, d), gateOf(d))?.status === 'True'))), 60_000, 100)
      .catch((err: unknown) => { throw new Error(`${String(err)}: ${states()}`); });
    // The replicas read the zones when they learn the members and the pods (get nodes, 200 ms batches): a step or two.
    await new Promise((r) => setTimeout(r, 2000));
    const watchFrom = Date.now();
    logs.subjects(...[...pods.keys()]);

    // 1. Both vantages up: the cuts.
    const ip = (role: Role, d: Decision): string => pods.get(podName(role, d))!.ip;
    const [n0, n1, n2, n3] = net!.nodes;
    for (const d of decisions) {
      for (const from of [n2!, n3!]) await net!.faults.degrade({ from: from.subnet, to: ip('one', d) });
      for (const from of [n0!, n1!]) await net!.faults.degrade({ from: from.subnet, to: ip('oneA', d) });
    }
    const cutAt = Date.now();
    for (const d of decisions) await net!.faults.isolatePod(ip('both', d));
    const judged = await settle('the two-zone rule', true, cutAt, detectBoundMs);
    const falseAfter = [...judged].filter(([n]) => expectedOf(n, true) === 'False');
    log(`cut → False: ${falseAfter.map(([n, ms]) => `${n} ${ms} ms`).join(', ')} (bound ${detectBoundMs} ms)`);
    for (const [n, ms] of falseAfter) assert.ok(ms <= detectBoundMs, `${n} False after ${ms} ms`);
    // Held over several detection times: a judgement, not a moment.
    await new Promise((r) => setTimeout(r, holdMs));
    const holdEnd = Date.now();
    for (const d of decisions) {
      for (const role of roles) {
        const name = podName(role, d);
        const want = expected(role, d, true);
        const since = want === 'False' ? cutAt + (judged.get(name) ?? 0) : watchFrom;
        assert.deepEqual(history!.departures(name, gateOf(d), want, since, holdEnd), [], `${name} left ${want} while both vantages were up`);
      }
    }
    // Who said what, from where: one vantage per zone (the zones came from the Nodes).
    for (const d of ['quorum', 'all'] as const) {
      const m = history!.now(podName('one', d), gateOf(d))?.message ?? '';
      log(`${podName('one', d)}: ${m}`);
      assert.match(m, new RegExp(`1 of 2 vantages failing \\(vantage\\.decision ${d}\\): succeeded from replica ra on node ${n0!.name} \\(zone a\\).*\\[probed from node ${n2!.name} \\(zone b\\)\\]`));
      const mA = history!.now(podName('oneA', d), gateOf(d))?.message ?? '';
      assert.match(mA, new RegExp(`1 of 2 vantages failing \\(vantage\\.decision ${d}\\): succeeded from replica rb on node ${n2!.name} \\(zone b\\).*\\[probed from node ${n0!.name} \\(zone a\\)\\]`));
    }
    log(`${podName('one', 'any')}: ${history!.now(podName('one', 'any'), gateOf('any'))?.message ?? ''}`);
    log(`${podName('both', 'quorum')}: ${history!.now(podName('both', 'quorum'), gateOf('quorum'))?.message ?? ''}`);
    assert.match(history!.now(podName('both', 'quorum'), gateOf('quorum'))?.message ?? '', /2 of 2 vantages failing/);

    // 2. rb (zone b) killed: ra is every pod's only vantage (count 2 is count 1, ADR 0058).
    const rb = replicas.get('rb')!;
    rb.child.kill('SIGKILL');
    await rb.exited;
    const killedAt = Date.now();
    await waitFor('ra alone', () => Promise.resolve(membersOf(replicas.get('ra')!) === 'ra'), leaseMs + 40_000, 100);
    log(`ra alone ${Date.now() - killedAt} ms after the kill`);
    const degraded = await settle('ra alone judges every pod', false, killedAt, lossBoundMs);
    const changed = [...degraded].filter(([n]) => expectedOf(n, true) !== expectedOf(n, false));
    log(`rb killed → ra's verdict alone: ${changed.map(([n, ms]) => `${n} ${expectedOf(n, false)} after ${ms} ms`).join(', ')} (bound ${lossBoundMs} ms)`);
    for (const [n, ms] of changed) assert.ok(ms <= lossBoundMs, `${n} changed after ${ms} ms`);
    // No pod lost every vantage: no NoVantage, on the pods or the policies.
    for (const d of decisions) {
      const p = await cp!.kube.get(`/apis/outprobe.io/v1alpha1/namespaces/${ns}/probepolicies/${d}`);
      assert.equal(((p['status'] ?? {}) as { noVantage?: number }).noVantage ?? 0, 0, `${d}: noVantage`);
      for (const role of roles) assert.notEqual(history!.now(podName(role, d), gateOf(d))?.reason, 'NoVantage', podName(role, d));
    }
    await new Promise((r) => setTimeout(r, holdMs));
    const downEnd = Date.now();
    for (const d of decisions) {
      for (const role of roles) {
        const name = podName(role, d);
        const want = expected(role, d, false);
        const since = want === expected(role, d, true) ? killedAt : killedAt + (degraded.get(name) ?? 0);
        assert.deepEqual(history!.departures(name, gateOf(d), want, since, downEnd), [], `${name} left ${want} with rb down`);
      }
    }
    // A True ra inherited is not written again (ADR 0022: no write per handed-over pod), so its message may still be rb's.
    log(`one-quorum with rb down: ${history!.now(podName('one', 'quorum'), gateOf('quorum'))?.message ?? ''}`);
    log(`onea-quorum with rb down: ${history!.now(podName('oneA', 'quorum'), gateOf('quorum'))?.message ?? ''}`);

    // 3. rb back (the same pod, restarted): the two-zone rule again.
    const restartedAt = Date.now();
    start('rb');
    await waitFor('2 members again', () => Promise.resolve([...replicas.values()].every((r) => membersOf(r) === 'ra,rb')), 60_000, 100);
    const rejoinedAt = Date.now();
    const back = await settle('the two-zone rule again', true, rejoinedAt, detectBoundMs);
    log(`rb back (members again ${rejoinedAt - restartedAt} ms after its start): ${[...back].filter(([n]) => n.startsWith('one')).map(([n, ms]) => `${n} ${ms} ms`).join(', ')}`);
    await new Promise((r) => setTimeout(r, holdMs));

    // Over the whole run: the pods a vantage reached all along never left True.
    const end = Date.now();
    const steady = decisions.flatMap((d) => [...(['ok1', 'ok3'] as const), ...(d === 'any' ? [] : (['one'] as const))].map((role) => ({ name: podName(role, d), d })));
    for (const { name, d } of steady) assert.deepEqual(history!.departures(name, gateOf(d), 'True', watchFrom, end), [], `${name} flapped`);
    log(`never left True over ${end - watchFrom} ms: ${steady.map((s) => s.name).join(', ')}`);
    for (const d of decisions) assert.deepEqual(history!.departures(podName('both', d), gateOf(d), 'False', cutAt + (judged.get(podName('both', d)) ?? 0), end), [], `${podName('both', d)} left False`);
  });
});
