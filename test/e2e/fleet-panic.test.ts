// The readiness cap across replicas (issue 26 deliverable 3, docs/adr/0032-fleet-wide-readiness-cap.md)
// on the pod network (docs/adr/0014-pod-network.md): three outprobe replicas, each in a sandbox on
// its own node, two gated ProbePolicies with thresholds unlike the defaults,
//   web: 24 pods, maxUnreadyPercent 40 → at most ⌊40 % × 24⌋ = 9 gates False (the cap),
//   api: 12 pods, maxUnreadyPercent 25 → at most ⌊25 % × 12⌋ = 3,
// and then every replica cut off from every pod for 30 s (`isolateFromPods`: the probers' network
// fails, the replicas still reach each other and the API server; the pods stay healthy and serve).
// A watch of the pods sees every change the API server stores: at no revision may a policy have
// more gates False than its cap. Healed, every gate is True again.
//
// Under ADR 0015's per-replica rule each replica held its own share of its own pods False, and the
// replicas handed pods over as impairment spread (each in turn the outlier of a median up to a renew
// interval old): the new owner counted only the failures its own probes confirmed while the
// previous owner's Falses stayed, and up to 15 of 24 went False (issue 26).
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { startControlPlane } from '../support/cluster/index.ts';
import type { ControlPlane } from '../support/cluster/index.ts';
import { installCrd } from '../integration/support/controller.ts';
import { conditionOf, waitFor } from '../integration/support/fake-kubelet.ts';
import { createPodNet, podNetSupport } from '../support/podnet/index.ts';
import type { FaultHandle, PodNet, Sandbox } from '../support/podnet/index.ts';
import { startPodserve } from '../support/podserve/index.ts';
import type { Podserve } from '../support/podserve/index.ts';
import { logsOnFailure } from '../support/replicas/index.ts';
import { createNetPod, pinNeighbours, podIpOf } from './support/net-pods.ts';
import { createFleet } from '../support/fleet/index.ts';
import type { Fleet, FleetPod } from '../support/fleet/index.ts';

const mainPath = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
const ns = 'fleet-panic-e2e';
const ids = ['r1', 'r2', 'r3'];
const nodeCount = 3;
const cutMs = 30_000;
const log = (m: string): void => void process.stderr.write(`# ${m}\n`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface PolicySpec {
  readonly name: string;
  readonly pods: number;
  readonly maxUnreadyPercent: number;
  readonly failureThreshold: number;
}
const policies: readonly PolicySpec[] = [
  { name: 'web', pods: 24, maxUnreadyPercent: 40, failureThreshold: 3 },
  { name: 'api', pods: 12, maxUnreadyPercent: 25, failureThreshold: 3 },
];
const capOf = (p: PolicySpec): number => Math.floor((p.maxUnreadyPercent * p.pods) / 100);
const gateOf = (name: string): string => `outprobe.io/${name}`;

interface Replica {
  readonly id: string;
  readonly sandbox: Sandbox;
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
}

/** A replica with the product's default lease and impairment settings (the scenario of issue 26). */
function startReplica(cp: ControlPlane, net: PodNet, sandbox: Sandbox, id: string, fleet: Fleet, pod: FleetPod): Replica {
  const args = [mainPath, '--kubeconfig', cp.kubeconfigPath, '--identity', id, '--namespace', ns, '--lease-namespace', ns, ...fleet.args(pod), '--peer-addr', `${sandbox.ip}:9444`,
    '--allowed-probe-cidrs', net.clusterCidr, '--metrics-addr', `${sandbox.ip}:0`, '--metrics-auth', 'none', '--status-interval', '1', '--log-level', 'debug'];
  const child = net.spawnIn(sandbox.netns, process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...fleet.env(pod) } });
  return { id, sandbox, child, exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))) };
}

interface WatchedPod {
  readonly metadata: { readonly name: string; readonly labels?: Record<string, string> };
}

const support = podNetSupport();

describe(`fleet-wide readiness cap: 3 replicas, every one cut off from every pod for ${cutMs / 1000} s (2 policies, real kube-apiserver)`, {
  timeout: 420_000,
  skip: support.ok ? false : `no pod network on this machine: ${support.why}`,
}, () => {
  const logs = logsOnFailure('fleet-panic');
  let net: PodNet | undefined;
  let cp: ControlPlane | undefined;
  let podserve: Podserve | undefined;
  let fleet: Fleet | undefined;
  const replicas: Replica[] = [];
  const faults: FaultHandle[] = [];
  /** Ends the test's pod watch, whatever the test's outcome. */
  const stop = new AbortController();

  logs.setup(async () => {
    const t0 = Date.now();
    net = await createPodNet({ nodes: nodeCount, log });
    cp = await startControlPlane({ log: () => undefined, bindAddress: net.hostIp, serviceCidr: net.serviceCidr });
    logs.plane(cp);
    podserve = await startPodserve({ log });
    await installCrd(cp.kube);
    await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    for (const p of policies) {
      await cp.kube.create(`/apis/outprobe.io/v1alpha1/namespaces/${ns}/probepolicies`, {
        apiVersion: 'outprobe.io/v1alpha1',
        kind: 'ProbePolicy',
        metadata: { name: p.name, namespace: ns },
        spec: {
          selector: { matchLabels: { app: p.name } },
          readiness: {
            conditionType: gateOf(p.name),
            maxUnreadyPercent: p.maxUnreadyPercent,
            probe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 1, failureThreshold: p.failureThreshold, timeoutSeconds: 1 },
          },
        },
      });
    }
    const env = { kube: cp.kube, net, podserve };
    const pods = [];
    let k = 0;
    for (const p of policies) {
      for (let i = 0; i < p.pods; i++, k++) {
        const node = net.nodes[k % nodeCount]!;
        pods.push(await createNetPod(env, { namespace: ns, name: `${p.name}-${i}`, node, ip: podIpOf(node, Math.floor(k / nodeCount)) }, { labels: { app: p.name }, gate: gateOf(p.name) }));
      }
    }
    await pinNeighbours(net, pods);
    fleet = await createFleet(cp.kube, { namespace: ns });
    for (const [i, id] of ids.entries()) {
      const sandbox = await net.sandbox(net.nodes[i]!.name, `outprobe-${id}`);
      const r = startReplica(cp, net, sandbox, id, fleet, await fleet.addReplica(id, { ip: sandbox.ip, node: net.nodes[i]!.name }));
      logs.record(id, r.child);
      replicas.push(r);
    }
    log(`pod network, API server, ${k} pods, 2 policies and 3 replicas up in ${Date.now() - t0} ms`);
  });

  logs.teardown(async () => {
    stop.abort();
    await Promise.all(faults.map((f) => f.heal()));
    for (const r of replicas) r.child.kill('SIGKILL');
    await Promise.all(replicas.map((r) => r.exited));
    await podserve?.close();
    await cp?.stop();
    await net?.destroy();
    fleet?.cleanup();
  });

  it('no policy ever has more gates False than its cap (web 9 of 24, api 3 of 12); healed, every gate is True again', async () => {
    const kube = cp!.kube;
    /** policy → pod name → its gate status, as the watch last showed it. */
    const gates = new Map(policies.map((p) => [p.name, new Map<string, string>()]));
    const falseCount = (policy: string): number => [...(gates.get(policy)?.values() ?? [])].filter((s) => s === 'False').length;
    const show = (pod: Record<string, unknown>): void => {
      const meta = (pod as unknown as WatchedPod).metadata;
      const app = meta.labels?.['app'];
      const byPod = app === undefined ? undefined : gates.get(app);
      if (byPod === undefined || app === undefined) return;
      byPod.set(meta.name, conditionOf(pod, gateOf(app))?.status ?? 'absent');
    };
    const list = await kube.get(`/api/v1/namespaces/${ns}/pods`);
    for (const item of (list['items'] ?? []) as Record<string, unknown>[]) show(item);
    const allTrue = (): boolean => policies.every((p) => [...(gates.get(p.name)?.values() ?? [])].filter((s) => s === 'True').length === p.pods);
    // Every change the API server stores, in order: the most False at once per policy, and when.
    const most = new Map(policies.map((p) => [p.name, { n: 0, at: 0 }]));
    const overCap: string[] = [];
    let cutAt = 0;
    const watching = kube.watch(`/api/v1/namespaces/${ns}/pods`, `resourceVersion=${(list['metadata'] as { resourceVersion: string }).resourceVersion}`, (e) => {
      if (e.type !== 'ADDED' && e.type !== 'MODIFIED') return;
      show(e.object);
      for (const p of policies) {
        const n = falseCount(p.name);
        const m = most.get(p.name)!;
        if (n > m.n) most.set(p.name, { n, at: cutAt === 0 ? 0 : Date.now() - cutAt });
        if (n > capOf(p)) overCap.push(`${p.name}: ${n} False (cap ${capOf(p)}) ${((Date.now() - cutAt) / 1000).toFixed(1)} s after the cut`);
      }
    }, stop.signal).catch(() => undefined); // ends with the plane at teardown

    await waitFor('every gate True', () => Promise.resolve(allTrue()), 90_000, 250);
    await sleep(3000); // a quiet start: every replica has checked its peers and published its counts
    cutAt = Date.now();
    faults.push(...await Promise.all(replicas.map((r) => net!.faults.isolateFromPods(r.sandbox.ip))));
    log(`every replica cut off from every pod for ${cutMs / 1000} s`);
    const timeline: string[] = [];
    for (let s = 0; s < cutMs / 1000; s++) {
      await sleep(1000);
      timeline.push(policies.map((p) => `${p.name}=${falseCount(p.name)}`).join('/'));
    }
    const healAt = Date.now();
    await Promise.all(faults.splice(0).map((f) => f.heal()));
    log(`False gates each second of the cut (web cap ${capOf(policies[0]!)}, api cap ${capOf(policies[1]!)}): ${timeline.join(' ')}`);
    // Healed: impaired replicas rejoin after --impaired-recover-after (10 s, doubled per strike within
    // 10 min: at most 40 s after three), and a member probes its pods True within a period.
    await waitFor('every gate True again after the heal', () => Promise.resolve(allTrue()), 120_000, 250);
    const recovered = Date.now() - healAt;
    stop.abort();
    await watching;
    const seen = policies.map((p) => `${p.name}: at most ${most.get(p.name)!.n} False at once (cap ${capOf(p)}, ${(most.get(p.name)!.at / 1000).toFixed(1)} s after the cut)`).join('; ');
    log(`${seen}; every gate True ${recovered} ms after the heal`);
    const impaired = logs.lines().filter((l) => String(l.o['msg']).startsWith('replica impaired')).length;
    const holds = logs.lines().filter((l) => String(l.o['msg']).startsWith('readiness hold:')).length;
    log(`impairments during the run: ${impaired}; readiness holds: ${holds}`);
    logs.subjects('web', 'api');
    assert.deepEqual(overCap.slice(0, 10), [], `a policy went over its cap (${overCap.length} revisions): ${seen}`);
  });
});
