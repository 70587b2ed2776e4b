// Self-partition detection (issue 13, deliver 2; docs/adr/0017-self-partition-detection.md), on
// the pod network (docs/adr/0014-pod-network.md): three outprobe replicas, each in a sandbox on
// its own node, 30 pods on those nodes served by podserve, a gated ProbePolicy (readiness every
// 1 s, failureThreshold 3) with an Evict liveness probe. One replica is cut off from every pod and
// every other sandbox but still reaches the API server (`isolateFromPodNetwork`: the sandboxes
// sit outside the podCIDRs, so `isolateFromPods` would leave the replicas reaching each other,
// which a replica whose node lost the pod network could not: replicas are pods). Without the guard it would turn the gates
// of its ~10 pods False within 3 s and evict them (10 of 30 failing is below the 50 % halt).
// With it: no False, no eviction; it declares itself impaired, fails /readyz, deletes its Lease;
// the others probe its pods within lease duration + one period; healed, it rejoins.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { assign } from '../../src/vantage/index.ts';
import { startControlPlane } from '../support/cluster/index.ts';
import type { ControlPlane } from '../support/cluster/index.ts';
import { installCrd } from '../integration/support/controller.ts';
import { conditionOf, waitFor } from '../integration/support/fake-kubelet.ts';
import { createPodNet, podNetSupport } from '../support/podnet/index.ts';
import type { PodNet, Sandbox } from '../support/podnet/index.ts';
import { startPodserve } from '../support/podserve/index.ts';
import { logsOnFailure } from '../support/replicas/index.ts';
import type { Podserve } from '../support/podserve/index.ts';
import { createNetPod, pinNeighbours, podIpOf } from './support/net-pods.ts';
import type { NetPod } from './support/net-pods.ts';
import { createFleet, markRunningReady } from '../support/fleet/index.ts';
import { alertsOf, dashboardExpressions, findPromtool, metricFamilies, renderRules, samplesOf, scrapedAlertTest, testRules, undeclared } from '../support/alerts/index.ts';
import type { Fleet, FleetPod } from '../support/fleet/index.ts';

const mainPath = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
const ns = 'selfcut-e2e';
const gate = 'outprobe.io/web';
const podCount = 30;
const nodeCount = 3;
const ids = ['r1', 'r2', 'r3'];
const periodMs = 1000;
const leaseMs = 8000;
const recoverMs = 5000;
/**
 * Declared impaired only after 5 s (default 3 s): the first False gate of the cut replica is due
 * ~3-4 s after the cut (3 failed probes of 1 s timeout), so the test sees that the write guard,
 * not a quick detection, keeps it from going out. Without the guard the default 3 s races it.
 */
const unreachableMs = 5000;
const victim = 'r1';
const log = (m: string): void => void process.stderr.write(`# ${m}\n`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Replica {
  readonly id: string;
  readonly sandbox: Sandbox;
  readonly child: ChildProcess;
  readonly lines: { readonly at: number; readonly o: Record<string, unknown> }[];
  readonly exited: Promise<number | null>;
  port: number | undefined;
}

/** A replica of the fleet's Deployment, from its Pod (ADR 0036: its membership is proven against it). */
function startReplica(cp: ControlPlane, net: PodNet, sandbox: Sandbox, id: string, fleet: Fleet, pod: FleetPod): Replica {
  const args = [mainPath, '--kubeconfig', cp.kubeconfigPath, '--identity', id, '--namespace', ns, '--lease-namespace', ns, ...fleet.args(pod), '--peer-addr', `${sandbox.ip}:9444`,
    '--allowed-probe-cidrs', net.clusterCidr, '--metrics-addr', `${sandbox.ip}:0`, '--metrics-auth', 'none',
    '--lease-duration', String(leaseMs / 1000), '--lease-renew-interval', '1', '--status-interval', '1', '--impaired-recover-after', String(recoverMs / 1000),
    '--impaired-unreachable-after', String(unreachableMs / 1000),
    '--log-level', 'debug'];
  const child = net.spawnIn(sandbox.netns, process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...fleet.env(pod) } });
  const r: Replica = { id, sandbox, child, lines: [], port: undefined, exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))) };
  createInterface({ input: child.stdout! }).on('line', (line) => {
    try {
      const o = JSON.parse(line) as Record<string, unknown>;
      r.lines.push({ at: Date.now(), o });
      if (o['msg'] === 'outprobe started') r.port = o['metricsPort'] as number;
    } catch {
      r.lines.push({ at: Date.now(), o: { msg: line } });
    }
  });
  createInterface({ input: child.stderr! }).on('line', (line) => r.lines.push({ at: Date.now(), o: { msg: `stderr: ${line}` } }));
  return r;
}

const logged = (r: Replica, msg: string, since = 0): { at: number; o: Record<string, unknown> } | undefined => r.lines.find((l) => l.at >= since && l.o['msg'] === msg);
const membersOf = (r: Replica): string | undefined => {
  const last = r.lines.filter((l) => l.o['msg'] === 'shard membership changed').at(-1);
  return last === undefined ? undefined : (last.o['members'] as string[]).join(',');
};
/** Gate writes of False and evictions this replica logged since `since`. */
const falseWrites = (r: Replica, since: number): number => r.lines.filter((l) => l.at >= since && l.o['msg'] === 'gate written' && l.o['status'] === 'False').length;
const evictions = (r: Replica, since: number): number => r.lines.filter((l) => l.at >= since && (l.o['result'] === 'evicted' || l.o['result'] === 'deleted')).length;

async function scrape(r: Replica): Promise<string> {
  return (await fetch(`http://${r.sandbox.ip}:${r.port ?? 0}/metrics`)).text();
}
async function metric(r: Replica, re: RegExp): Promise<number> {
  return Number(re.exec(await scrape(r))?.[1] ?? Number.NaN);
}

/**
 * The chart's alert `alert` evaluated by promtool on what replica `r` exposes now (its samples
 * held for 10 minutes, past every default `for`): the labels of the alerts that fire.
 */
async function alertOn(cp: ControlPlane, r: Replica, alert: string, firing: readonly Record<string, string>[]): Promise<void> {
  const rules = renderRules(cp.binaries.helm);
  const rule = alertsOf(rules).find((a) => a.alert === alert)!;
  const samples = samplesOf(await scrape(r), metricFamilies(rule.expr));
  assert.ok(samples.length > 0, `${r.id} exposes samples for ${alert}: ${rule.expr}`);
  const run = testRules(findPromtool(), rules, scrapedAlertTest({ samples, instance: r.id, alert, minutes: 10, firing }));
  assert.equal(run.status, 0, `${alert} on ${r.id}'s samples (${samples.map((s) => `${s.series} ${s.value}`).join(', ')}): ${run.output}`);
}

const support = podNetSupport();

describe(`self-partition: one of 3 replicas cut off from every pod (${podCount} pods on ${nodeCount} nodes, real kube-apiserver)`, {
  timeout: 240_000,
  skip: support.ok ? false : `no pod network on this machine: ${support.why}`,
}, () => {
  const logs = logsOnFailure('self-partition');
  let net: PodNet | undefined;
  let cp: ControlPlane | undefined;
  let podserve: Podserve | undefined;
  const pods: NetPod[] = [];
  const replicas = new Map<string, Replica>();
  let fleet: Fleet | undefined;
  /** Every gate status seen False by the watcher (pod → first time). */
  const seenFalse = new Map<string, number>();
  let watching = true;
  let watcher: Promise<void> | undefined;

  /** The workload's gates (the namespace also holds the replicas' own Pods, which carry none). */
  const gateConditions = async (): Promise<Map<string, string>> => {
    const list = await cp!.kube.get(`/api/v1/namespaces/${ns}/pods?labelSelector=app%3Dweb`);
    const out = new Map<string, string>();
    for (const item of (list['items'] ?? []) as Record<string, unknown>[]) out.set((item['metadata'] as { name: string }).name, conditionOf(item, gate)?.status ?? 'absent');
    return out;
  };
  const leaseNames = async (): Promise<string[]> => {
    const list = await cp!.kube.get(`/apis/coordination.k8s.io/v1/namespaces/${ns}/leases?labelSelector=outprobe.io%2Fshard%3Dtrue`);
    return ((list['items'] ?? []) as { metadata: { name: string } }[]).map((l) => l.metadata.name).sort();
  };
  const hits = async (): Promise<Map<string, number>> => new Map([...(await podserve!.stats())].map(([pod, c]) => [pod, c.http]));

  logs.setup(async () => {
    const t0 = Date.now();
    net = await createPodNet({ nodes: nodeCount, log });
    cp = await startControlPlane({ log: () => undefined, bindAddress: net.hostIp, serviceCidr: net.serviceCidr });
    logs.plane(cp);
    podserve = await startPodserve({ log });
    await installCrd(cp.kube);
    await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await cp.kube.create(`/apis/outprobe.io/v1alpha1/namespaces/${ns}/probepolicies`, {
      apiVersion: 'outprobe.io/v1alpha1',
      kind: 'ProbePolicy',
      metadata: { name: 'web', namespace: ns },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        readiness: { conditionType: gate, probe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 1, failureThreshold: 3, timeoutSeconds: 1 } },
        liveness: { action: 'Evict', probe: { tcpSocket: { port: 'http' }, periodSeconds: 1, failureThreshold: 3, timeoutSeconds: 1 } },
        // Nothing but the guard holds back the cut replica: its ~10 failing pods of 30 are below the halt.
        remediation: { maxUnavailable: 100, haltAbovePercentFailing: 50 },
      },
    });
    const env = { kube: cp.kube, net, podserve };
    for (let k = 0; k < podCount; k++) {
      const node = net.nodes[k % nodeCount]!;
      pods.push(await createNetPod(env, { namespace: ns, name: `web-${k}`, node, ip: podIpOf(node, Math.floor(k / nodeCount)) }, { gate }));
    }
    await pinNeighbours(net, pods);
    fleet = await createFleet(cp.kube, { namespace: ns });
    for (const [i, id] of ids.entries()) {
      const sandbox = await net.sandbox(net.nodes[i]!.name, `outprobe-${id}`);
      const r = startReplica(cp, net, sandbox, id, fleet, await fleet.addReplica(id, { ip: sandbox.ip, node: net.nodes[i]!.name }));
      logs.record(id, r.child);
      replicas.set(id, r);
    }
    log(`pod network, API server, ${podCount} pods and 3 replicas up in ${Date.now() - t0} ms`);
  });

  logs.teardown(async () => {
    watching = false;
    await watcher?.catch(() => undefined);
    for (const r of replicas.values()) r.child.kill('SIGKILL');
    await Promise.all([...replicas.values()].map((r) => r.exited));
    await podserve?.close();
    await cp?.stop();
    await net?.destroy();
    fleet?.cleanup();
  });

  it('writes no False and evicts nothing from the cut replica; it stands down, the others take its pods, it rejoins when healed', async () => {
    const all = [...replicas.values()];
    await waitFor('3 members everywhere', () => Promise.resolve(all.every((r) => membersOf(r) === ids.join(','))), 60_000, 100);
    await waitFor('every gate True', async () => [...(await gateConditions()).values()].filter((s) => s === 'True').length === podCount, 60_000, 250);
    // From now on any False gate is a failure of the guard: watch every 200 ms.
    watcher = (async () => {
      while (watching) {
        for (const [pod, s] of await gateConditions()) if (s !== 'True' && !seenFalse.has(pod)) seenFalse.set(pod, Date.now());
        await sleep(200);
      }
    })();
    const r1 = replicas.get(victim)!;
    // What the victim owns: rendezvous over the replicas off the pod's node (vantage, ADR 0040; replica i on node i).
    const members = ids.map((id, i) => ({ identity: id, node: net!.nodes[i]!.name, zone: undefined }));
    const theirs = pods.filter((p) => {
      const a = assign(members, p.uid, { node: p.node, zone: undefined }, 'node');
      return a.kind === 'owner' && a.identity === victim;
    });
    log(`${victim} owns ${theirs.length} pods`);
    assert.ok(theirs.length > 0);
    await sleep(2000); // a quiet start: every replica has checked its peers
    const before = await hits();
    const cutAt = Date.now();
    const fault = await net!.faults.isolateFromPodNetwork(r1.sandbox.ip);
    // The others take over: each of the victim's pods answers a probe (from r2 or r3: r1 reaches no pod).
    const firstHit = new Map<string, number>();
    await waitFor(`${victim}'s pods probed by the others`, async () => {
      const now = await hits();
      for (const p of theirs) if (!firstHit.has(p.name) && (now.get(p.name) ?? 0) > (before.get(p.name) ?? 0)) firstHit.set(p.name, Date.now());
      return firstHit.size === theirs.length;
    }, 30_000, 100);
    const takeover = Math.max(...firstHit.values()) - cutAt;
    await waitFor(`${victim} impaired`, () => Promise.resolve(logged(r1, 'replica impaired: writing no False gate, remediating nothing, giving up the shard lease', cutAt) !== undefined), 30_000, 100);
    const impairedAt = logged(r1, 'replica impaired: writing no False gate, remediating nothing, giving up the shard lease', cutAt)!.at - cutAt;
    await waitFor(`${victim}'s Lease gone`, async () => !(await leaseNames()).includes(`outprobe-shard-${victim}`), 10_000, 100);
    await waitFor('r2 and r3 agree on 2 members', () => Promise.resolve(['r2', 'r3'].every((id) => membersOf(replicas.get(id)!) === 'r2,r3')), 10_000, 100);
    assert.equal(await metric(r1, /^outprobe_replica_impaired (\d+)/m), 1);
    // The chart's alerts on the live replicas (ADR 0061): every metric an alert or a dashboard panel
    // reads is exposed (a renamed metric fails here), OutprobeReplicaImpaired fires on the cut
    // replica's samples and not on a healthy one's; OutprobeUnownedPods fires on neither (the others own r1's pods).
    const families = [...new Set([...alertsOf(renderRules(cp!.binaries.helm)).map((a) => a.expr), ...dashboardExpressions()].flatMap(metricFamilies))];
    for (const r of all) assert.deepEqual(undeclared(families, await scrape(r)), [], `${r.id} exposes every metric the alerts and the dashboard read`);
    await alertOn(cp!, r1, 'OutprobeReplicaImpaired', [{ severity: 'warning', instance: victim }]);
    await alertOn(cp!, replicas.get('r2')!, 'OutprobeReplicaImpaired', []);
    for (const r of all) await alertOn(cp!, r, 'OutprobeUnownedPods', []);
    const readyz = await fetch(`http://${r1.sandbox.ip}:${r1.port ?? 0}/readyz`);
    assert.equal(readyz.status, 503, 'an impaired replica fails /readyz');
    await sleep(5 * periodMs); // long enough for three failures of every probe it still had
    const held = await metric(r1, /^outprobe_peer_guard_held_total\{action="gate_false"\} (\d+)/m);
    log(`cut → ${victim} impaired ${impairedAt} ms, its ${theirs.length} pods all probed by the others ${takeover} ms after the cut (bound: lease ${leaseMs} + period ${periodMs}); False writes held by the guard: ${Number.isNaN(held) ? 0 : held}`);
    assert.ok(takeover <= leaseMs + periodMs, `took ${takeover} ms`);
    const healAt = Date.now();
    await fault.heal();
    await waitFor(`${victim} recovered`, () => Promise.resolve(logged(r1, 'replica recovered: rejoining the shard', healAt) !== undefined), 60_000, 100);
    await waitFor(`${victim}'s Lease back`, async () => (await leaseNames()).includes(`outprobe-shard-${victim}`), 10_000, 100);
    await waitFor('3 members everywhere again', () => Promise.resolve(all.every((r) => membersOf(r) === ids.join(','))), 20_000, 100);
    const rejoin = Date.now() - healAt;
    assert.equal(await metric(r1, /^outprobe_replica_impaired (\d+)/m), 0);
    await alertOn(cp!, r1, 'OutprobeReplicaImpaired', []);
    await sleep(3 * periodMs);
    log(`heal → ${victim} back in the shard (Lease, 3 members) ${rejoin} ms (recover-after ${recoverMs} ms)`);
    watching = false;
    await watcher;
    const byVictim = { falseWrites: falseWrites(r1, cutAt), evictions: evictions(r1, cutAt) };
    const byAll = all.map((r) => `${r.id}: ${falseWrites(r, cutAt)} False, ${evictions(r, cutAt)} evictions`).join('; ');
    log(`after the cut: ${byAll}; gates seen not True: ${seenFalse.size}`);
    logs.subjects(...seenFalse.keys(), ...theirs.map((p) => p.name));
    assert.deepEqual(byVictim, { falseWrites: 0, evictions: 0 });
    assert.deepEqual([...seenFalse.keys()], [], 'no gate turned False');
    const items = ((await cp!.kube.get(`/api/v1/namespaces/${ns}/pods?labelSelector=app%3Dweb`))['items'] ?? []) as { metadata: { deletionTimestamp?: string } }[];
    assert.equal(items.filter((i) => i.metadata.deletionTimestamp === undefined).length, podCount, 'no pod evicted');

    // OutprobeUnownedPods (ADR 0061). A 4th replica whose own Pod is not Ready cannot prove its
    // membership, writes no Lease and owns nothing; while live peers own every pod it reports none
    // unowned (it used to count every pod of the namespaces, replicas included: 34, and page).
    // Once no live member is left, it counts the selected pods nobody probes, and the alert fires.
    const sandbox = await net!.sandbox(net!.nodes[1]!.name, 'outprobe-r4');
    const pod4 = await fleet!.addReplica('r4', { ip: sandbox.ip, node: net!.nodes[1]!.name });
    await markRunningReady(cp!.kube, ns, 'r4', sandbox.ip, false);
    const r4 = startReplica(cp!, net!, sandbox, 'r4', fleet!, pod4);
    logs.record('r4', r4.child);
    replicas.set('r4', r4);
    await waitFor('r4 serves /metrics', async () => r4.port !== undefined && !Number.isNaN(await metric(r4, /^outprobe_unowned_pods (\d+)/m)), 30_000, 250);
    await sleep(3 * periodMs);
    assert.equal(await metric(r4, /^outprobe_shard_self_proven (\d+)/m), 0);
    assert.equal(await metric(r4, /^outprobe_unowned_pods (\d+)/m), 0, 'the live members own every pod');
    await alertOn(cp!, r4, 'OutprobeUnownedPods', []);
    for (const r of all) r.child.kill('SIGKILL');
    const counted = await waitFor('r4 counts the selected pods once no member is live', async () => {
      const n = await metric(r4, /^outprobe_unowned_pods (\d+)/m);
      return n > 0 ? n : undefined;
    }, leaseMs + 20_000, 250);
    assert.equal(counted, podCount, 'the selected pods, not the replicas\' own');
    await alertOn(cp!, r4, 'OutprobeUnownedPods', [{ severity: 'critical', instance: 'r4' }]);
    log(`r4 (not Ready, unproven): outprobe_unowned_pods 0 while r1-r3 live; ${counted} once they are gone, and OutprobeUnownedPods fires on its samples`);
  });
});
