// Several vantages, one verdict (issue 28 deliverable 3, docs/adr/0058-several-vantages.md), on the
// pod network (docs/adr/0014-pod-network.md): three outprobe replicas, each in a sandbox on its own
// node, 6 pods (2 per node) served by podserve, a gated ProbePolicy with `vantage.count: 2`
// (spread node, decision quorum: with two vantages both must fail) and the second opinion off, so
// that nothing but the combination can keep a gate True. With three nodes each pod's two vantages
// are exactly the two replicas off its node: its owner writes the gate, the other reports to it.
//
// - A: its owner cannot reach it (100 % loss from the owner's sandbox), the other vantage can:
//   the gate stays True, and its message says 1 of 2 vantages fail. (Before count, with the
//   second opinion off, the owner's own verdict turned it False.)
// - B: the other vantage cannot reach it, the owner can: True.
// - C: cut off from every other node: both vantages fail: False within period × failureThreshold
//   + one report + slack; healed, True again.
// - D, of a second policy (count 2, decision any, second opinion on as by default): its owner
//   cannot reach it, the other vantage can: False within the same bound (ADR 0070: before, the
//   owner asked the other vantage for a second opinion, it disagreed, and the gate stayed True).
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { owner } from '../../src/sharding/index.ts';
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
const ns = 'vcount-e2e';
const gate = 'outprobe.io/web';
const anyGate = 'outprobe.io/any';
const podCount = 6;
const nodeCount = 3;
const ids = ['r1', 'r2', 'r3'];
const periodMs = 1000;
const failureThreshold = 3;
const leaseMs = 6000;
/** period × failureThreshold + a probe timeout + one report (sent within a step, 0.5 s) + slack for 2 shared cores. */
const detectBoundMs = periodMs * failureThreshold + 1000 + 1000 + 8000;
/** How long A and B must stay True: several times what turning False takes. */
const holdMs = 3 * periodMs * failureThreshold + 6000;
const log = (m: string): void => void process.stderr.write(`# ${m}\n`);

interface Replica {
  readonly id: string;
  readonly sandbox: Sandbox;
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  members: string | undefined;
}

function startReplica(cp: ControlPlane, net: PodNet, sandbox: Sandbox, id: string, fleet: Fleet, pod: FleetPod): Replica {
  const args = [mainPath, '--kubeconfig', cp.kubeconfigPath, '--identity', id, '--namespace', ns, '--lease-namespace', ns, ...fleet.args(pod), '--peer-addr', `${sandbox.ip}:9444`,
    '--allowed-probe-cidrs', net.clusterCidr, '--metrics-addr', `${sandbox.ip}:0`, '--metrics-auth', 'none',
    '--lease-duration', String(leaseMs / 1000), '--lease-renew-interval', '1', '--status-interval', '1', '--log-level', 'debug'];
  const child = net.spawnIn(sandbox.netns, process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...fleet.env(pod) } });
  const r: Replica = { id, sandbox, child, members: undefined, exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))) };
  createInterface({ input: child.stdout! }).on('line', (line) => {
    try {
      const o = JSON.parse(line) as Record<string, unknown>;
      if (o['msg'] === 'shard membership changed') r.members = (o['members'] as string[]).join(',');
    } catch {
      // not JSON
    }
  });
  return r;
}

const support = podNetSupport();

describe(`vantage.count 2: one verdict from two vantages (${podCount} pods, ${nodeCount} replicas on ${nodeCount} nodes, real kube-apiserver)`, {
  timeout: 300_000,
  skip: support.ok ? false : `no pod network on this machine: ${support.why}`,
}, () => {
  const logs = logsOnFailure('vantage-count');
  let net: PodNet | undefined;
  let cp: ControlPlane | undefined;
  let podserve: Podserve | undefined;
  const pods: NetPod[] = [];
  let anyPod: NetPod | undefined;
  const replicas = new Map<string, Replica>();
  const nodeOfReplica = new Map<string, string>();
  let fleet: Fleet | undefined;

  const gateConditions = async (): Promise<Map<string, { status: string; reason: string; message: string }>> => {
    const list = await cp!.kube.get(`/api/v1/namespaces/${ns}/pods?labelSelector=app%3Dweb`);
    const out = new Map<string, { status: string; reason: string; message: string }>();
    for (const item of (list['items'] ?? []) as Record<string, unknown>[]) {
      const c = conditionOf(item, gate) as { status?: string; reason?: string; message?: string } | undefined;
      out.set((item['metadata'] as { name: string }).name, { status: c?.status ?? 'absent', reason: c?.reason ?? '', message: c?.message ?? '' });
    }
    return out;
  };

  /** A pod's two vantages: the replicas off its node, owner first (rendezvous over them, as ADR 0040 and 0058 assign). */
  const vantagesOf = (p: NetPod): [string, string] => {
    const off = ids.filter((id) => nodeOfReplica.get(id) !== p.node);
    const first = owner(off, p.uid)!;
    return [first, off.find((id) => id !== first)!];
  };

  logs.setup(async () => {
    const t0 = Date.now();
    net = await createPodNet({ nodes: nodeCount, log });
    cp = await startControlPlane({ log: () => undefined, bindAddress: net.hostIp, serviceCidr: net.serviceCidr });
    logs.plane(cp);
    podserve = await startPodserve({ log });
    await installCrd(cp.kube);
    await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    const policy = await cp.kube.create(`/apis/outprobe.io/v1alpha1/namespaces/${ns}/probepolicies`, {
      apiVersion: 'outprobe.io/v1alpha1',
      kind: 'ProbePolicy',
      metadata: { name: 'web', namespace: ns },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        secondOpinion: false,
        vantage: { count: 2 },
        readiness: { conditionType: gate, maxUnreadyPercent: 100, probe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: periodMs / 1000, failureThreshold, timeoutSeconds: 1 } },
      },
    });
    // The API server defaulted the rest (the CRD's schema): spread node, decision quorum.
    assert.deepEqual((policy['spec'] as { vantage: unknown }).vantage, { spread: 'node', count: 2, decision: 'quorum' });
    // decision any, second opinion on (the default): ADR 0070.
    await cp.kube.create(`/apis/outprobe.io/v1alpha1/namespaces/${ns}/probepolicies`, {
      apiVersion: 'outprobe.io/v1alpha1',
      kind: 'ProbePolicy',
      metadata: { name: 'any', namespace: ns },
      spec: {
        selector: { matchLabels: { app: 'any' } },
        vantage: { count: 2, decision: 'any' },
        readiness: { conditionType: anyGate, maxUnreadyPercent: 100, probe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: periodMs / 1000, failureThreshold, timeoutSeconds: 1 } },
      },
    });
    const env = { kube: cp.kube, net, podserve };
    for (let k = 0; k < podCount; k++) {
      const node = net.nodes[k % nodeCount]!;
      pods.push(await createNetPod(env, { namespace: ns, name: `web-${k}`, node, ip: podIpOf(node, Math.floor(k / nodeCount)) }, { gate }));
    }
    anyPod = await createNetPod(env, { namespace: ns, name: 'any-0', node: net.nodes[0]!, ip: podIpOf(net.nodes[0]!, podCount / nodeCount) }, { gate: anyGate, labels: { app: 'any' } });
    await pinNeighbours(net, [...pods, anyPod]);
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

  it('rejects a count outside 1..3 at the API server (CRD schema and CEL)', async () => {
    for (const count of [0, 4]) {
      await assert.rejects(
        cp!.kube.create(`/apis/outprobe.io/v1alpha1/namespaces/${ns}/probepolicies`, {
          apiVersion: 'outprobe.io/v1alpha1',
          kind: 'ProbePolicy',
          metadata: { name: `bad-${count}`, namespace: ns },
          spec: { selector: { matchLabels: { app: 'none' } }, vantage: { count }, readiness: { conditionType: 'outprobe.io/none', probe: { tcpSocket: { port: 80 } } } },
        }),
        /vantage.count/,
      );
    }
  });

  it('quorum of 2: one vantage failing keeps the gate True (either one); both failing turn it False; healed, True', async () => {
    const all = [...replicas.values()];
    await waitFor('3 members everywhere', () => Promise.resolve(all.every((r) => r.members === ids.join(','))), 60_000, 100);
    await waitFor('every gate True', async () => [...(await gateConditions()).values()].filter((c) => c.status === 'True').length === podCount, 60_000, 250);
    const [a, b, c] = [pods[0]!, pods[1]!, pods[2]!];
    const [aOwner] = vantagesOf(a);
    const [, bOther] = vantagesOf(b);
    log(`A ${a.name}@${a.node}: cut from its owner ${aOwner}; B ${b.name}@${b.node}: cut from its other vantage ${bOther}; C ${c.name}@${c.node}: cut from every other node`);
    logs.subjects(a.name, b.name, c.name);
    await net!.faults.degrade({ from: replicas.get(aOwner)!.sandbox.ip, to: a.ip });
    await net!.faults.degrade({ from: replicas.get(bOther)!.sandbox.ip, to: b.ip });
    const cutAt = Date.now();
    await net!.faults.isolatePod(c.ip);
    let cFalseAt: number | undefined;
    const flips: string[] = [];
    // Watch all three for holdMs: C must turn False in time, A and B must never leave True.
    while (Date.now() - cutAt < Math.max(holdMs, detectBoundMs)) {
      const now = await gateConditions();
      if (cFalseAt === undefined && now.get(c.name)?.status === 'False') cFalseAt = Date.now() - cutAt;
      for (const p of [a, b]) if (now.get(p.name)?.status !== 'True') flips.push(`${p.name} ${now.get(p.name)?.status ?? '?'} at ${Date.now() - cutAt} ms: ${now.get(p.name)?.message ?? ''}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.deepEqual(flips, [], 'A and B stay True');
    log(`C False after ${cFalseAt ?? 'never'} ms (bound ${detectBoundMs} ms)`);
    assert.ok(cFalseAt !== undefined && cFalseAt <= detectBoundMs, `C False after ${cFalseAt ?? 'never'} ms`);
    const now = await gateConditions();
    log(`A: ${now.get(a.name)?.message ?? ''}`);
    log(`C: ${now.get(c.name)?.message ?? ''}`);
    // A's owner fails it and writes what the other vantage saw.
    assert.match(now.get(a.name)?.message ?? '', /1 of 2 vantages failing \(vantage\.decision quorum\)/);
    assert.match(now.get(c.name)?.message ?? '', /2 of 2 vantages failing/);
    await net!.faults.healAll();
    await waitFor('C True again once healed', async () => (await gateConditions()).get(c.name)?.status === 'True', 20_000, 250);
    const end = await gateConditions();
    assert.equal([...end.values()].filter((x) => x.status === 'True').length, podCount);
  });
  it('decision any, second opinion on: its owner alone failing takes the pod out, though the other vantage passes (ADR 0070)', async () => {
    const p = anyPod!;
    const anyStatus = async (): Promise<{ status: string; message: string }> => {
      const c = conditionOf(await cp!.kube.get(`/api/v1/namespaces/${ns}/pods/${p.name}`), anyGate) as { status?: string; message?: string } | undefined;
      return { status: c?.status ?? 'absent', message: c?.message ?? '' };
    };
    await waitFor('the any pod True', async () => (await anyStatus()).status === 'True', 30_000, 250);
    const [pOwner] = vantagesOf(p);
    logs.subjects(p.name);
    const cutAt = Date.now();
    const fault = await net!.faults.degrade({ from: replicas.get(pOwner)!.sandbox.ip, to: p.ip });
    // Before ADR 0070 the owner asked the pod's other vantage for a second opinion; it passed, disagreed, and held the False back for good.
    await waitFor('False under any', async () => (await anyStatus()).status === 'False', detectBoundMs + 20_000, 100);
    const ms = Date.now() - cutAt;
    const now = await anyStatus();
    log(`any: cut from its owner ${pOwner} only → False after ${ms} ms (bound ${detectBoundMs} ms): ${now.message}`);
    assert.ok(ms <= detectBoundMs, `False after ${ms} ms`);
    assert.match(now.message, /1 of 2 vantages failing \(vantage\.decision any\)/);
    await fault.heal();
    await waitFor('True again once healed', async () => (await anyStatus()).status === 'True', 20_000, 250);
  });
});
