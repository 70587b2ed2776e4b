// Vantage (issue 28, docs/adr/0040-vantage.md), on the pod network (docs/adr/0014-pod-network.md):
// three outprobe replicas, each in a sandbox on its own node, 12 pods (4 per node) served by
// podserve, a gated ProbePolicy (readiness every 1 s, failureThreshold 3, second opinion on).
//
// 1. The pods that plain rendezvous hashing (sharding before vantage) would have judged from
//    their own node, by their owner or by the peer asked for a second opinion, are each cut off
//    from every other node (`isolatePod`: their own node still reaches them, as in a CNI fault
//    the kubelet cannot see). Every one of them must turn False within period × failureThreshold
//    + second opinion + slack. Before vantage the co-located owner kept reaching its pod (gate
//    True forever), or the co-located peer disagreed with the owner (gate True forever).
// 2. Two replicas are killed (-9): the last one's own node's pods have no vantage. They are not
//    probed from there: their gates go (or stay) True with reason NoVantage, even those cut off
//    and False before; the policy's Degraded condition says NoVantage with their count, each
//    gets a NoVantage Event, and the metric counts them.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { owner, ranked } from '../../src/sharding/index.ts';
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
import { createFleet } from '../support/fleet/index.ts';
import type { Fleet, FleetPod } from '../support/fleet/index.ts';

const mainPath = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
const ns = 'vantage-e2e';
const gate = 'outprobe.io/web';
const podCount = 12;
const nodeCount = 3;
const ids = ['r1', 'r2', 'r3'];
const periodMs = 1000;
const failureThreshold = 3;
const leaseMs = 6000;
/** period × failureThreshold + the second opinion (one probe timeout and the ask) + slack for 2 shared cores. */
const detectBoundMs = periodMs * failureThreshold + 2000 + 8000;
const log = (m: string): void => void process.stderr.write(`# ${m}\n`);

interface Replica {
  readonly id: string;
  readonly sandbox: Sandbox;
  readonly child: ChildProcess;
  readonly lines: { readonly at: number; readonly o: Record<string, unknown> }[];
  readonly exited: Promise<number | null>;
  port: number | undefined;
}

function startReplica(cp: ControlPlane, net: PodNet, sandbox: Sandbox, id: string, fleet: Fleet, pod: FleetPod): Replica {
  const args = [mainPath, '--kubeconfig', cp.kubeconfigPath, '--identity', id, '--namespace', ns, '--lease-namespace', ns, ...fleet.args(pod), '--peer-addr', `${sandbox.ip}:9444`,
    '--allowed-probe-cidrs', net.clusterCidr, '--metrics-addr', `${sandbox.ip}:0`, '--metrics-auth', 'none',
    '--lease-duration', String(leaseMs / 1000), '--lease-renew-interval', '1', '--status-interval', '1', '--log-level', 'debug'];
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

const membersOf = (r: Replica): string | undefined => {
  const last = r.lines.filter((l) => l.o['msg'] === 'shard membership changed').at(-1);
  return last === undefined ? undefined : (last.o['members'] as string[]).join(',');
};

async function metric(r: Replica, re: RegExp): Promise<number> {
  const res = await fetch(`http://${r.sandbox.ip}:${r.port ?? 0}/metrics`);
  return Number(re.exec(await res.text())?.[1] ?? Number.NaN);
}

const support = podNetSupport();

describe(`vantage: no pod is judged from its own node (${podCount} pods, ${nodeCount} replicas on ${nodeCount} nodes, real kube-apiserver)`, {
  timeout: 300_000,
  skip: support.ok ? false : `no pod network on this machine: ${support.why}`,
}, () => {
  const logs = logsOnFailure('vantage');
  let net: PodNet | undefined;
  let cp: ControlPlane | undefined;
  let podserve: Podserve | undefined;
  const pods: NetPod[] = [];
  const replicas = new Map<string, Replica>();
  const nodeOfReplica = new Map<string, string>();
  let fleet: Fleet | undefined;
  /** Pods cut off from every node but their own (part 1). */
  let victims: NetPod[] = [];

  const gateConditions = async (): Promise<Map<string, { status: string; reason: string; message: string }>> => {
    const list = await cp!.kube.get(`/api/v1/namespaces/${ns}/pods?labelSelector=app%3Dweb`);
    const out = new Map<string, { status: string; reason: string; message: string }>();
    for (const item of (list['items'] ?? []) as Record<string, unknown>[]) {
      const c = conditionOf(item, gate) as { status?: string; reason?: string; message?: string } | undefined;
      out.set((item['metadata'] as { name: string }).name, { status: c?.status ?? 'absent', reason: c?.reason ?? '', message: c?.message ?? '' });
    }
    return out;
  };

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
        // Most pods of a replica may be cut at once here: the panic threshold must not keep them True.
        readiness: { conditionType: gate, maxUnreadyPercent: 100, probe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: periodMs / 1000, failureThreshold, timeoutSeconds: 1 } },
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
      const node = net.nodes[i]!.name;
      nodeOfReplica.set(id, node);
      const sandbox = await net.sandbox(node, `outprobe-${id}`);
      const r = startReplica(cp, net, sandbox, id, fleet, await fleet.addReplica(id, { ip: sandbox.ip, node }));
      logs.record(id, r.child);
      replicas.set(id, r);
    }
    log(`pod network, API server, ${podCount} pods and 3 replicas up in ${Date.now() - t0} ms`);
  });

  logs.teardown(async () => {
    for (const r of replicas.values()) r.child.kill('SIGKILL');
    await Promise.all([...replicas.values()].map((r) => r.exited));
    await podserve?.close();
    await cp?.stop();
    await net?.destroy();
    fleet?.cleanup();
  });

  it('every pod that plain hashing judged from its own node (owner or second opinion) turns False when cut off from every other node', async () => {
    const all = [...replicas.values()];
    await waitFor('3 members everywhere', () => Promise.resolve(all.every((r) => membersOf(r) === ids.join(','))), 60_000, 100);
    await waitFor('every gate True', async () => [...(await gateConditions()).values()].filter((c) => c.status === 'True').length === podCount, 60_000, 250);
    // Who would have judged each pod before vantage: the plain rendezvous owner and the next replica (the second opinion).
    const ownerColocated = pods.filter((p) => nodeOfReplica.get(owner(ids, p.uid) ?? '') === p.node);
    const peerColocated = pods.filter((p) => nodeOfReplica.get(ranked(ids, p.uid)[1] ?? '') === p.node);
    victims = [...new Set([...ownerColocated, ...peerColocated])];
    log(`co-located under plain hashing: owner ${ownerColocated.map((p) => p.name).join(',')}; second-opinion peer ${peerColocated.map((p) => p.name).join(',')}`);
    // The pods' UIDs come from the API server: with 12 pods no plain owner shares a pod's node in
    // about 1 run in 40 (seen once in CI); the second-opinion cases still show the rule then.
    if (ownerColocated.length === 0) log('no pod shares its plain-hashing owner\'s node this run: only second-opinion co-location is shown');
    assert.ok(victims.length >= 3, `too few co-located pods to show anything (${victims.length})`);
    logs.subjects(...victims.map((p) => p.name));
    const cutAt = Date.now();
    for (const p of victims) await net!.faults.isolatePod(p.ip);
    const falseAt = new Map<string, number>();
    await waitFor(`every cut pod False (${victims.length})`, async () => {
      const now = await gateConditions();
      for (const p of victims) if (!falseAt.has(p.name) && now.get(p.name)?.status === 'False') falseAt.set(p.name, Date.now() - cutAt);
      return falseAt.size === victims.length;
    }, detectBoundMs + 20_000, 100).catch((err: unknown) => {
      const missing = victims.filter((p) => !falseAt.has(p.name)).map((p) => `${p.name}@${p.node}`);
      throw new Error(`not False: ${missing.join(', ')} (${String(err)})`);
    });
    const worst = Math.max(...falseAt.values());
    log(`cut → False: ${[...falseAt].map(([n, ms]) => `${n} ${ms} ms`).join(', ')}; worst ${worst} ms (bound ${detectBoundMs} ms)`);
    assert.ok(worst <= detectBoundMs, `slowest ${worst} ms`);
    // Each verdict names a vantage off the pod's node.
    const now = await gateConditions();
    for (const p of victims) {
      const m = now.get(p.name)?.message ?? '';
      const from = /probed from node (\S+)/.exec(m)?.[1];
      assert.ok(from !== undefined && from !== p.node, `${p.name} on ${p.node}: ${m}`);
    }
    // The pods not cut stay True.
    for (const p of pods.filter((x) => !victims.includes(x))) assert.equal(now.get(p.name)?.status, 'True', p.name);
  });

  it('one replica left: the pods of its own node have no vantage, are kept True (NoVantage), counted and reported', async () => {
    const last = replicas.get('r1')!;
    const lastNode = nodeOfReplica.get('r1')!;
    for (const id of ['r2', 'r3']) replicas.get(id)!.child.kill('SIGKILL');
    await Promise.all(['r2', 'r3'].map((id) => replicas.get(id)!.exited));
    const killedAt = Date.now();
    // The killed replicas' Leases expire after leaseMs; r1 may first stand down a while (its peers stopped answering, ADR 0017).
    await waitFor('r1 alone', () => Promise.resolve(membersOf(last) === 'r1'), leaseMs + 40_000, 100);
    const own = pods.filter((p) => p.node === lastNode);
    const cutOwn = own.filter((p) => victims.includes(p));
    log(`r1 alone ${Date.now() - killedAt} ms after the kill; its node's pods: ${own.map((p) => p.name).join(',')} (cut and False before: ${cutOwn.map((p) => p.name).join(',') || 'none'})`);
    await waitFor('r1\'s node\'s pods True with reason NoVantage', async () => {
      const now = await gateConditions();
      return own.every((p) => now.get(p.name)?.status === 'True' && now.get(p.name)?.reason === 'NoVantage');
    }, 30_000, 250);
    // Every other pod is judged from r1's node: the cut ones are False, the others True.
    await waitFor('the other nodes\' pods judged from r1', async () => {
      const now = await gateConditions();
      return pods.filter((p) => p.node !== lastNode).every((p) => now.get(p.name)?.status === (victims.includes(p) ? 'False' : 'True'));
    }, 30_000, 250);
    const policy = await waitFor('Degraded NoVantage with the count', async () => {
      const p = await cp!.kube.get(`/apis/outprobe.io/v1alpha1/namespaces/${ns}/probepolicies/web`);
      const status = (p['status'] ?? {}) as { noVantage?: number; conditions?: { type: string; status: string; reason: string; message: string }[] };
      const degraded = status.conditions?.find((c) => c.type === 'Degraded');
      return status.noVantage === own.length && degraded?.reason === 'NoVantage' ? { status, degraded } : undefined;
    }, 20_000, 250);
    log(`Degraded: ${policy.degraded.message}`);
    assert.match(policy.degraded.message, new RegExp(`^${own.length} pod\\(s\\) have no vantage`));
    const events = await waitFor('a NoVantage Event per pod of r1\'s node', async () => {
      const list = await cp!.kube.get(`/api/v1/namespaces/${ns}/events`);
      const items = (list['items'] ?? []) as { reason?: string; involvedObject?: { name?: string } }[];
      const names = items.filter((e) => e.reason === 'NoVantage').map((e) => e.involvedObject?.name ?? '');
      return own.every((p) => names.includes(p.name)) ? names : undefined;
    }, 20_000, 250);
    // One Event per pod and transition (the Event of a pod is one object, its count raised only by a repeat).
    for (const p of own) assert.equal(events.filter((n) => n === p.name).length, 1, `${p.name}: ${events.join(',')}`);
    assert.equal(await metric(last, /^outprobe_pods_without_vantage\{namespace="vantage-e2e",policy="vantage-e2e\/web"\} (\d+)/m), own.length);
  });
});
