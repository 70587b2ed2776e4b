// Sharding across replicas (issue 5), measured from the targets' side, on the pod network
// (docs/adr/0014-pod-network.md): a real kube-apiserver on the fabric, 900 simulated pods
// spread over 8 node namespaces, each pod in its own namespace with an IP from its node's
// podCIDR, all served by one podserve that counts the probes each pod receives; three
// outprobe processes, each in a sandbox on a node (nodes 0, 1, 2), so every probe crosses a
// node's forwarding path. The test plays the kubelet (test/e2e/support/net-pods.ts).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { assign } from '../../src/vantage/index.ts';
import { spreadDueAt } from '../../src/probing/index.ts';
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
const ns = 'shard-e2e';
const gate = 'outprobe.io/web';
// 900, not 300: the split of random UIDs is binomial (relative σ = √(2/n) per replica), and
// "within 15 % of even" must hold at 3σ, not at 1.8σ as it would with 300 pods.
const podCount = 900;
const nodeCount = 8; // a node's podCIDR is a /25: at most 126 pods each; 900 round-robin is 113
/** Where each replica runs: a sandbox of its own on node 0, 1, 2 (reused when it restarts). */
const replicaNodes: Record<string, number> = { r1: 0, r2: 1, r3: 2 };
const periodMs = 2000;
const leaseMs = 4000;
const log = (m: string): void => void process.stderr.write(`# ${m}\n`);

interface Replica {
  readonly id: string;
  readonly sandbox: Sandbox;
  readonly child: ChildProcess;
  readonly lines: Record<string, unknown>[];
  readonly exited: Promise<number | null>;
  port: number | undefined;
}

/** outprobe in the replica's sandbox (`ip netns exec` execs node: the child is outprobe itself), from its Pod of the fleet (ADR 0036). */
function startReplica(cp: ControlPlane, net: PodNet, sandbox: Sandbox, id: string, fleet: Fleet, pod: FleetPod): Replica {
  const args = [mainPath, '--kubeconfig', cp.kubeconfigPath, '--identity', id, '--namespace', ns, '--lease-namespace', ns, ...fleet.args(pod), '--peer-addr', `${sandbox.ip}:9444`,
    '--allowed-probe-cidrs', net.clusterCidr, '--metrics-addr', `${sandbox.ip}:0`, '--metrics-auth', 'none', '--lease-duration', String(leaseMs / 1000),
    '--lease-renew-interval', '1', '--status-interval', '1', '--kube-api-qps', '200', '--kube-api-burst', '400', '--log-level', 'debug'];
  const child = net.spawnIn(sandbox.netns, process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...fleet.env(pod) } });
  const r: Replica = { id, sandbox, child, lines: [], port: undefined, exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))) };
  createInterface({ input: child.stdout! }).on('line', (line) => {
    try {
      const o = JSON.parse(line) as Record<string, unknown>;
      r.lines.push(o);
      if (o['msg'] === 'outprobe started') r.port = o['metricsPort'] as number;
    } catch {
      r.lines.push({ msg: line });
    }
  });
  createInterface({ input: child.stderr! }).on('line', (line) => r.lines.push({ msg: `stderr: ${line}` }));
  return r;
}

/** The members this replica last logged, or undefined before it joined. */
function membersOf(r: Replica): string[] | undefined {
  const last = r.lines.filter((l) => l['msg'] === 'shard membership changed').at(-1);
  return last === undefined ? undefined : (last['members'] as string[]);
}

function ownedPodsOf(r: Replica): number | undefined {
  const last = r.lines.filter((l) => l['msg'] === 'shard membership changed').at(-1);
  return last === undefined ? undefined : (last['ownedPods'] as number);
}

/** From the root namespace, across the fabric and the replica's node. */
async function ownedTargets(r: Replica): Promise<number> {
  const res = await fetch(`http://${r.sandbox.ip}:${r.port ?? 0}/metrics`);
  const m = /^outprobe_owned_targets (\d+)/m.exec(await res.text());
  return Number(m?.[1] ?? Number.NaN);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Readiness probes (HTTP requests; liveness is tcpSocket) each pod has answered, by pod name. */
async function httpHits(podserve: Podserve): Promise<Map<string, number>> {
  return new Map([...(await podserve.stats())].map(([pod, c]) => [pod, c.http]));
}

/**
 * Every pod's hit count, sampled every 100 ms (one podserve stats call for all pods): when
 * each pod was last probed and the longest gap. A removed pod drops out of the stats and
 * keeps its last count.
 */
class HitMonitor {
  readonly lastHit = new Map<string, number>();
  readonly #seen = new Map<string, number>();
  readonly #maxGap = new Map<string, number>();
  /** Each pod's hit times since the last reset(), and what the test did meanwhile: a failure says where a gap fell. */
  readonly #hits = new Map<string, number[]>();
  readonly #marks: { readonly t: number; readonly what: string }[] = [];
  #resetAt = Date.now();
  get resetAt(): number {
    return this.#resetAt;
  }
  readonly #pods: readonly NetPod[];
  readonly #podserve: Podserve;
  #stopped = false;
  readonly #loop: Promise<void>;

  static async start(podserve: Podserve, pods: readonly NetPod[]): Promise<HitMonitor> {
    return new HitMonitor(podserve, pods, await httpHits(podserve));
  }

  private constructor(podserve: Podserve, pods: readonly NetPod[], first: Map<string, number>) {
    this.#podserve = podserve;
    this.#pods = pods;
    const now = Date.now();
    for (const p of pods) {
      this.#seen.set(p.uid, first.get(p.name) ?? 0);
      this.lastHit.set(p.uid, now);
    }
    this.#loop = this.#run();
  }

  async #run(): Promise<void> {
    // Bounded by stop(): each turn sleeps 100 ms, then ends once stopped.
    for (;;) {
      await sleep(100);
      if (this.#stopped) return;
      const hits = await httpHits(this.#podserve);
      const t = Date.now();
      for (const p of this.#pods) {
        const n = hits.get(p.name);
        if (n === undefined || n === this.#seen.get(p.uid)) continue;
        this.#seen.set(p.uid, n);
        this.#maxGap.set(p.uid, Math.max(this.#maxGap.get(p.uid) ?? 0, t - (this.lastHit.get(p.uid) ?? t)));
        this.lastHit.set(p.uid, t);
        const times = this.#hits.get(p.uid);
        if (times === undefined) this.#hits.set(p.uid, [t]);
        else times.push(t);
      }
    }
  }

  /** The longest gap between two probes of any of `uids` (including the open one now). */
  maxGap(uids: Iterable<string>): { uid: string; ms: number } {
    let worst = { uid: '', ms: 0 };
    const now = Date.now();
    for (const uid of uids) {
      const ms = Math.max(this.#maxGap.get(uid) ?? 0, now - (this.lastHit.get(uid) ?? now));
      if (ms > worst.ms) worst = { uid, ms };
    }
    return worst;
  }

  reset(): void {
    this.#maxGap.clear();
    this.#hits.clear();
    this.#marks.length = 0;
    this.#resetAt = Date.now();
  }

  /** Notes what the test does now, for story(). */
  mark(what: string): void {
    this.#marks.push({ t: Date.now(), what });
  }

  /** A pod's hits and the test's marks since the last reset, in ms from it, in time order. */
  story(uid: string): string {
    const rows = [...(this.#hits.get(uid) ?? []).map((t) => ({ t, what: 'hit' })), ...this.#marks].sort((a, b) => a.t - b.t);
    return rows.map((r) => `+${r.t - this.#resetAt} ${r.what}`).join(', ');
  }

  /** Ends the sampling; rejects if a sample failed (podserve gone). */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#loop;
  }
}

/** Probes per pod per period over a window: every pod is probed, none by two replicas. */
async function probeRate(podserve: Podserve, pods: readonly NetPod[], windowMs: number): Promise<{ min: number; max: number }> {
  const before = await httpHits(podserve);
  await sleep(windowMs);
  const now = await httpHits(podserve);
  const rates = pods.map((p) => (((now.get(p.name) ?? 0) - (before.get(p.name) ?? 0)) * periodMs) / windowMs);
  return { min: Math.min(...rates), max: Math.max(...rates) };
}

/** This run's network namespaces still present (`ip netns list`). */
function namespacesOf(prefix: string): string[] {
  return execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' }).split('\n').map((l) => l.split(' ')[0] ?? '').filter((n) => n.startsWith(`${prefix}-`));
}

const support = podNetSupport();

function evictions(replicas: readonly Replica[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of replicas) for (const l of r.lines) if (l['result'] === 'evicted') out.set(String(l['pod']), (out.get(String(l['pod'])) ?? 0) + 1);
  return out;
}

describe(`sharding across 3 replicas (${podCount} pods on ${nodeCount} nodes of the pod network, real kube-apiserver)`, {
  timeout: 240_000,
  skip: support.ok ? false : `no pod network on this machine: ${support.why}`,
}, () => {
  const logs = logsOnFailure('sharding');
  let net: PodNet | undefined;
  let cp: ControlPlane | undefined;
  let podserve: Podserve | undefined;
  const sandboxes = new Map<string, Sandbox>();
  const pods: NetPod[] = [];
  const replicas = new Map<string, Replica>();
  const everyReplica: Replica[] = [];
  let monitor: HitMonitor | undefined;
  const closed = new Set<string>();
  const open = (): NetPod[] => pods.filter((p) => !closed.has(p.uid));
  const served = (): Podserve => podserve!;

  let fleet: Fleet | undefined;
  /** One Pod per replica, made once: a restarted replica is a restarted container of the same pod. */
  const fleetPods = new Map<string, FleetPod>();
  /** pod UID → its node (the workload's pods and the replicas' own). */
  const nodeOfUid = new Map<string, string>();
  /**
   * Who owns a pod as every replica computes it: rendezvous over the replicas off the pod's
   * node (vantage, ADR 0040; `node` spread); a pod of the only replicas' node is kept by the
   * plain rendezvous owner (NoVantage).
   */
  const owner = (members: readonly string[], uid: string): string | undefined => {
    const a = assign(members.map((id) => ({ identity: id, node: net!.nodes[replicaNodes[id] ?? -1]?.name, zone: undefined })), uid, { node: nodeOfUid.get(uid), zone: undefined }, 'node');
    return a.kind === 'owner' ? a.identity : a.keeper;
  };
  const start = (id: string): Replica => {
    const r = startReplica(cp!, net!, sandboxes.get(id)!, id, fleet!, fleetPods.get(id)!);
    logs.record(id, r.child);
    replicas.set(id, r);
    everyReplica.push(r);
    return r;
  };
  const stopGracefully = async (id: string): Promise<number | null> => {
    const r = replicas.get(id)!;
    const t = Date.now();
    r.child.kill('SIGTERM');
    const code = await r.exited;
    replicas.delete(id);
    if (code !== 0) {
      // What the replica said last, so a failed graceful stop can be told apart (hang, crash, signal).
      log(`${id} exited ${code} (signal ${r.child.signalCode}) ${Date.now() - t} ms after SIGTERM; its last lines:\n${r.lines.slice(-30).map((l) => JSON.stringify(l)).join('\n')}`);
    }
    return code;
  };
  const converged = async (ids: readonly string[], expectTargets?: number): Promise<void> => {
    await waitFor(`replicas ${ids.join(',')} agree on members`, () => Promise.resolve(ids.every((id) => {
      const r = replicas.get(id);
      return r?.port !== undefined && membersOf(r)?.join(',') === [...ids].sort().join(',');
    })), 30_000, 100);
    if (expectTargets === undefined) return;
    await waitFor(`${expectTargets} targets owned in total`, async () => {
      const counts = await Promise.all(ids.map((id) => ownedTargets(replicas.get(id)!)));
      return counts.reduce((a, b) => a + b, 0) === expectTargets;
    }, 30_000, 250);
  };
  const leaseNames = async (): Promise<string[]> => {
    const list = await cp!.kube.get(`/apis/coordination.k8s.io/v1/namespaces/${ns}/leases?labelSelector=outprobe.io%2Fshard%3Dtrue`);
    return ((list['items'] ?? []) as { metadata: { name: string } }[]).map((l) => l.metadata.name).sort();
  };
  /** Every pod's gate condition, from one LIST (900 GETs per poll would load the API server the test measures). */
  const gateConditions = async (): Promise<Map<string, { status: string; reason?: string; message?: string }>> => {
    const list = await cp!.kube.get(`/api/v1/namespaces/${ns}/pods`);
    const out = new Map<string, { status: string; reason?: string; message?: string }>();
    for (const item of (list['items'] ?? []) as Record<string, unknown>[]) {
      const c = conditionOf(item, gate);
      if (c !== undefined) out.set((item['metadata'] as { name: string }).name, c);
    }
    return out;
  };
  /** Waits until every pod of `which` has the gate `want`; on timeout, says which did not and what they show. */
  const waitGates = async (what: string, want: string, which: readonly NetPod[], timeoutMs: number): Promise<void> => {
    let last = new Map<string, { status: string; reason?: string; message?: string }>();
    await waitFor(what, async () => {
      last = await gateConditions();
      return which.every((p) => last.get(p.name)?.status === want);
    }, timeoutMs, 250).catch((err: unknown) => {
      const wrong = which.filter((p) => last.get(p.name)?.status !== want);
      const detail = wrong.slice(0, 10).map((p) => {
        const owners = [...replicas.keys()].sort();
        return `${p.name} (owner ${owners.length > 0 ? owner(owners, p.uid) : '-'}): ${JSON.stringify(last.get(p.name) ?? null)}`;
      });
      // What the replicas logged about the first of them, for a failure seen only in CI.
      const first = wrong[0];
      const logged = first === undefined ? [] : everyReplica.flatMap((r) => r.lines.filter((l) => JSON.stringify(l).includes(`${first.name}"`)).slice(-6).map((l) => `${r.id}: ${JSON.stringify(l)}`));
      assert.fail(`${String(err)}: ${wrong.length} of ${which.length} pods not ${want}: ${detail.join('; ')}\n${logged.join('\n')}`);
    });
  };

  logs.setup(async () => {
    const t0 = Date.now();
    net = await createPodNet({ nodes: nodeCount, log });
    cp = await startControlPlane({ log: () => undefined, bindAddress: net.hostIp, serviceCidr: net.serviceCidr });
    logs.plane(cp);
    podserve = await startPodserve({ log });
    for (const [id, node] of Object.entries(replicaNodes)) sandboxes.set(id, await net.sandbox(net.nodes[node]!.name, `outprobe-${id}`));
    log(`pod network ${net.prefix} (${net.clusterCidr}), API server ${cp.server}, podserve and sandboxes up in ${Date.now() - t0} ms`);
    await installCrd(cp.kube);
    await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    fleet = await createFleet(cp.kube, { namespace: ns });
    for (const [id, node] of Object.entries(replicaNodes)) fleetPods.set(id, await fleet.addReplica(id, { ip: sandboxes.get(id)!.ip, node: net.nodes[node]!.name }));
    await cp.kube.create(`/apis/outprobe.io/v1alpha1/namespaces/${ns}/probepolicies`, {
      apiVersion: 'outprobe.io/v1alpha1',
      kind: 'ProbePolicy',
      metadata: { name: 'web', namespace: ns },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        readiness: { conditionType: gate, probe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: periodMs / 1000, failureThreshold: 1, timeoutSeconds: 1 } },
        // TCP: does not reach the HTTP handler, so hits count readiness probes only.
        liveness: { action: 'Evict', probe: { tcpSocket: { port: 'http' }, periodSeconds: periodMs / 1000, failureThreshold: 2, timeoutSeconds: 1 } },
        remediation: { maxUnavailable: 100, haltAbovePercentFailing: 50 },
      },
    });
    // Pod k on node k mod 8, as that node's (k div 8)-th pod: .1 upward in its podCIDR.
    const env = { kube: cp.kube, net, podserve };
    const t1 = Date.now();
    for (let i = 0; i < podCount; i += 25) {
      const batch = await Promise.all(Array.from({ length: Math.min(25, podCount - i) }, (_, j) => {
        const k = i + j;
        const node = net!.nodes[k % nodeCount]!;
        return createNetPod(env, { namespace: ns, name: `web-${k}`, node, ip: podIpOf(node, Math.floor(k / nodeCount)) }, { gate });
      }));
      pods.push(...batch);
    }
    for (const p of pods) nodeOfUid.set(p.uid, p.node);
    for (const p of fleetPods.values()) nodeOfUid.set(p.uid, p.node);
    log(`${podCount} pods created, attached and served in ${Date.now() - t1} ms`);
    const t2 = Date.now();
    await pinNeighbours(net, pods);
    log(`ARP entries of ${podCount} pods pinned in ${Date.now() - t2} ms`);
    monitor = await HitMonitor.start(podserve, pods);
  });

  logs.teardown(async () => {
    // A failed sample (podserve gone) is reported after the clean-up, not instead of it.
    const sampling = await monitor?.stop().then(() => undefined, (err: unknown) => new Error('a hit sample failed', { cause: err }));
    for (const r of replicas.values()) r.child.kill('SIGKILL');
    await Promise.all([...replicas.values()].map((r) => r.exited));
    await podserve?.close();
    await cp?.stop();
    const prefix = net?.prefix;
    await net?.destroy();
    fleet?.cleanup();
    if (prefix !== undefined) assert.deepEqual(namespacesOf(prefix), [], `namespaces of ${prefix} left behind`);
    if (sampling !== undefined) throw sampling;
  });

  it('splits the pods evenly and probes every pod from exactly one replica', async () => {
    const t0 = Date.now();
    for (const id of ['r1', 'r2', 'r3']) start(id);
    await converged(['r1', 'r2', 'r3'], 2 * podCount);
    log(`3 replicas converged in ${Date.now() - t0} ms`);
    const owned = await Promise.all(['r1', 'r2', 'r3'].map((id) => ownedTargets(replicas.get(id)!)));
    log(`owned targets r1/r2/r3: ${owned.join('/')} (even: ${(2 * podCount) / 3})`);
    for (const n of owned) assert.ok(Math.abs(n - (2 * podCount) / 3) < ((2 * podCount) / 3) * 0.15, `owned ${owned.join('/')}`);
    for (const id of ['r1', 'r2', 'r3']) {
      // Every pod of the namespace is sharded, the replicas' own Pods (no policy selects them) included.
      const uids = [...pods.map((p) => p.uid), ...[...fleetPods.values()].map((p) => p.uid)];
      const expected = uids.filter((uid) => owner(['r1', 'r2', 'r3'], uid) === id).length;
      assert.equal(ownedPodsOf(replicas.get(id)!), expected, `${id} owns the pods every replica computes for it`);
    }
    const tGates = Date.now();
    await waitGates('every gate True', 'True', pods, 60_000);
    log(`every gate True ${Date.now() - tGates} ms after the owned targets added up`);
    const rate = await probeRate(served(), pods, 3 * periodMs);
    log(`probes per pod per period: min ${rate.min.toFixed(2)} max ${rate.max.toFixed(2)}`);
    assert.ok(rate.min >= 0.6, `a pod went unprobed: ${rate.min}`);
    assert.ok(rate.max <= 1.4, `a pod was probed by two replicas: ${rate.max}`);
  });

  it('kill -9 of a replica: survivors take its pods within lease + one period, remediate once, end with right gates', async () => {
    const victims = pods.filter((p) => owner(['r1', 'r2', 'r3'], p.uid) === 'r2');
    const others = pods.filter((p) => owner(['r1', 'r2', 'r3'], p.uid) !== 'r2');
    // Liveness failures around the kill: remediated exactly once, by whoever owns the pod then.
    const dying = [...victims.slice(0, 2), ...others.slice(0, 2)];
    for (const p of dying) {
      closed.add(p.uid);
      await served().remove(p.name);
    }
    // Readiness flips across the kill, to be finished by the survivors.
    const goBad = victims.slice(2, 7);
    const goGood = victims.slice(7, 12);
    for (const p of goGood) await served().setHealthy(p.name, false);
    await waitGates('gates False before the kill', 'False', goGood, 15_000);
    await sleep(1000);
    const killedAt = Date.now();
    replicas.get('r2')!.child.kill('SIGKILL');
    await replicas.get('r2')!.exited;
    replicas.delete('r2');
    for (const p of goBad) await served().setHealthy(p.name, false);
    for (const p of goGood) await served().setHealthy(p.name, true);
    const live = victims.filter((p) => !closed.has(p.uid));
    await waitFor('every victim pod probed again', () => Promise.resolve(live.every((p) => (monitor!.lastHit.get(p.uid) ?? 0) > killedAt)), leaseMs + periodMs + 5000, 100);
    const handover = Math.max(...live.map((p) => (monitor!.lastHit.get(p.uid) ?? 0) - killedAt));
    log(`kill -9: all of r2's ${live.length} pods probed again ${handover} ms after the kill (lease ${leaseMs} ms + period ${periodMs} ms)`);
    assert.ok(handover <= leaseMs + periodMs + 500, `handover took ${handover} ms`);
    await converged(['r1', 'r3']);
    await waitGates('the gates flipped bad follow health', 'False', goBad, 15_000);
    await waitGates('the gates flipped good follow health', 'True', goGood, 15_000);
    await waitFor('each dying pod evicted', () => Promise.resolve(dying.every((p) => (evictions(everyReplica).get(`${ns}/${p.name}`) ?? 0) >= 1)), 30_000, 250);
    await sleep(3000);
    const counts = evictions(everyReplica);
    // On a failure, the harness prints the decisions about the pods evicted (the dying ones and any other).
    logs.subjects(...[...counts.keys()].map((k) => k.slice(k.indexOf('/') + 1)), ...dying.map((p) => p.name));
    for (const p of dying) assert.equal(counts.get(`${ns}/${p.name}`), 1, `${p.name} evicted once`);
    const besides = [...counts.keys()].filter((k) => !dying.some((p) => k === `${ns}/${p.name}`));
    assert.equal([...counts.values()].reduce((a, b) => a + b, 0), dying.length, `no other pod evicted (evicted besides the dying: ${besides.join(', ') || 'none'})`);
    // Ends True: a probe that timed out under the handover load may flip a gate for one period (failureThreshold 1).
    const healthy = open().filter((p) => !goBad.includes(p));
    await waitGates('every healthy pod ends True', 'True', healthy, 15_000);
    // Status: one writer, counts summed over the live replicas' Leases.
    const status = await waitFor('policy status settled', async () => {
      const st = (await cp!.kube.get(`/apis/outprobe.io/v1alpha1/namespaces/${ns}/probepolicies/web`))['status'] as Record<string, number> | undefined;
      return st?.['pods'] === podCount - dying.length && st['ready'] === podCount - dying.length - goBad.length && st['failing'] === 0 ? st : undefined;
    }, 15_000, 250);
    log(`policy status after the kill: pods ${status['pods']} ready ${status['ready']} failing ${status['failing']} remediations ${status['remediations']}`);
    for (const p of goBad) await served().setHealthy(p.name, true);
    await waitGates('goBad gates True again', 'True', goBad, 15_000);
  });

  it('graceful rolling restart: no pod unprobed longer than a period plus jitter, no Lease left behind', async () => {
    start('r2');
    await converged(['r1', 'r2', 'r3']);
    await sleep(periodMs + 500);
    monitor!.reset();
    for (const id of ['r1', 'r2', 'r3']) {
      monitor!.mark(`SIGTERM ${id}`);
      assert.equal(await stopGracefully(id), 0, `${id} exits 0`);
      monitor!.mark(`${id} exited`);
      assert.ok(!(await leaseNames()).includes(`outprobe-shard-${id}`), `${id} released its Lease`);
      await sleep(500);
      monitor!.mark(`start ${id}`);
      start(id);
      await converged(['r1', 'r2', 'r3']);
      monitor!.mark(`${id} rejoined`);
      await sleep(periodMs);
    }
    const gap = monitor!.maxGap(open().map((p) => p.uid));
    const uid = gap.uid;
    const first = owner(['r1', 'r2', 'r3'], uid);
    const story = `pod ${uid} (owner ${first}, else ${owner(['r1', 'r2', 'r3'].filter((r) => r !== first), uid)}; its readiness phase ${spreadDueAt(`${ns}/web/${uid}/web/readiness`, periodMs, 0)} ms into each period, reset at ${monitor!.resetAt % periodMs} ms into one): ${monitor!.story(uid)}`;
    log(`rolling restart: longest gap between two probes of a pod ${gap.ms} ms: ${story}`);
    assert.ok(gap.ms <= 2 * periodMs + 1000, `unprobed for ${gap.ms} ms: ${story}`);
    assert.deepEqual(await leaseNames(), ['outprobe-shard-r1', 'outprobe-shard-r2', 'outprobe-shard-r3']);
    const rate = await probeRate(served(), open(), 2 * periodMs);
    assert.ok(rate.max <= 1.5 && rate.min >= 0.5, `after the restart: ${JSON.stringify(rate)}`);
  });

  it('scaling 3 → 1 → 3 → 1 moves only the expected share', async () => {
    const all = (await cp!.kube.get(`/api/v1/namespaces/${ns}/pods`))['items'] as { metadata: { uid: string } }[];
    const uids = all.map((p) => p.metadata.uid);
    await stopGracefully('r2');
    await stopGracefully('r3');
    await converged(['r1']);
    assert.equal(ownedPodsOf(replicas.get('r1')!), uids.length, 'one replica owns every pod');
    assert.deepEqual(await leaseNames(), ['outprobe-shard-r1']);
    const t0 = Date.now();
    start('r2');
    start('r3');
    await converged(['r1', 'r2', 'r3']);
    const kept = uids.filter((u) => owner(['r1', 'r2', 'r3'], u) === 'r1').length;
    const ownedAfter = ownedPodsOf(replicas.get('r1')!);
    log(`1 → 3 in ${Date.now() - t0} ms: r1 kept ${ownedAfter}/${uids.length}, moved ${(1 - (ownedAfter ?? 0) / uids.length).toFixed(3)} (expected 0.667)`);
    assert.equal(ownedAfter, kept, 'r1 keeps exactly the pods it wins among three');
    assert.ok(Math.abs(kept / uids.length - 1 / 3) < 0.05, `kept ${kept}`);
    await sleep(periodMs + 500);
    let rate = await probeRate(served(), open(), 2 * periodMs);
    assert.ok(rate.max <= 1.5 && rate.min >= 0.5, `after 1 → 3: ${JSON.stringify(rate)}`);
    await stopGracefully('r2');
    await stopGracefully('r3');
    await converged(['r1']);
    assert.equal(ownedPodsOf(replicas.get('r1')!), uids.length);
    await sleep(500);
    // Alone, r1 never probes the pods of its own node (vantage, ADR 0040: NoVantage, kept True): every other pod it does.
    const r1Node = net!.nodes[replicaNodes['r1'] ?? 0]!.name;
    rate = await probeRate(served(), open().filter((p) => p.node !== r1Node), 2 * periodMs);
    assert.ok(rate.max <= 1.5 && rate.min >= 0.5, `after 3 → 1: ${JSON.stringify(rate)}`);
    const own = await probeRate(served(), open().filter((p) => p.node === r1Node), 2 * periodMs);
    assert.equal(own.max, 0, `a pod of r1's own node was probed from it: ${JSON.stringify(own)}`);
    assert.equal(await stopGracefully('r1'), 0);
    assert.deepEqual(await leaseNames(), [], 'no Lease left behind');
  });
});
