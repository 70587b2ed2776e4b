// The demo on real nodes (issue 29; docs/adr/0047-real-nodes.md), what `npm run demo` runs
// where the host can run a real kubelet: a local control plane with three real nodes
// (kubelet, containerd, runc) and one kwok node; outprobe installed with its chart and its
// own image on real-node-1 and real-node-2; a Deployment of 3 pods on real-node-0 with its
// own readinessProbe, gated by outprobe's webhook; a client on the kwok node calling the
// Service 20 times a second. `kubectl get pods -A -o wide` shows outprobe's own pods
// beside the workload. One pod is cut off from every other node: its kubelet still calls it
// ready, outprobe's gate goes False, the real kubelet folds Ready False, the EndpointSlice
// drops it, kube-proxy stops routing to it. Healed, it comes back.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse } from 'yaml';
import { startServiceClient } from '../test/support/netclient/index.ts';
import type { ServiceClient } from '../test/support/netclient/index.ts';
import { condition, createNamespace, deployWeb, installChart, listPods, startRealPlane, until } from '../test/e2e-nodes/support.ts';
import type { PodJson, RealPlane } from '../test/e2e-nodes/support.ts';

const t0 = Date.now();
const stamp = (t = Date.now()): string => `${new Date(t).toISOString().slice(11, 23)} (+${((t - t0) / 1000).toFixed(1)}s)`;
const say = (m: string): void => { process.stdout.write(`\n\x1b[1m== ${m}\x1b[0m\n`); };
const line = (m: string, t?: number): void => { process.stdout.write(`${stamp(t)}  ${m}\n`); };
const NS = 'shop';
const GATE = 'outprobe.io/web';

function kubectl(p: RealPlane, args: readonly string[]): string {
  try {
    return execFileSync(p.cp.binaries.kubectl, ['--kubeconfig', p.cp.kubeconfigPath, ...args], { encoding: 'utf8' });
  } catch (err: unknown) {
    return `kubectl ${args.join(' ')}: ${err instanceof Error ? err.message : String(err)}\n`;
  }
}

function show(p: RealPlane, what: readonly (readonly string[])[]): void {
  for (const args of what) process.stdout.write(`$ kubectl ${args.join(' ')}\n${kubectl(p, args)}`);
}

const everything = [['get', 'nodes', '-o', 'wide'], ['get', 'pods', '-A', '-o', 'wide'], ['get', 'probepolicies', '-n', NS, '-o', 'wide']] as const;
const workload = [['get', 'pods', '-n', NS, '-o', 'wide'], ['get', 'probepolicies', '-n', NS, '-o', 'wide'], ['get', 'endpointslices', '-n', NS, '-l', 'kubernetes.io/service-name=web',
  '-o', 'custom-columns=NAME:.metadata.name,ADDRESSES:.endpoints[*].addresses[0],READY:.endpoints[*].conditions.ready']] as const;

function counts(c: ServiceClient, pods: readonly PodJson[], from: number, to: number): string {
  const per = new Map<string, number>(pods.map((x) => [x.metadata.name, 0]));
  let errors = 0;
  for (const h of c.hits) {
    if (h.t < from || h.t >= to) continue;
    if (h.err !== undefined) errors++;
    else per.set(h.pod, (per.get(h.pod) ?? 0) + 1);
  }
  return `client → Service web: ${[...per].map(([n, k]) => `${n.slice(-5)} ${String(k).padStart(2)}`).join('   ')}   failed ${errors}`;
}

/** Prints each change of the pod's conditions as it happens, until `stop.on` is false. */
async function watchConditions(p: RealPlane, uid: string, stop: { on: boolean }): Promise<void> {
  const last = new Map<string, string>();
  while (stop.on) {
    const pod = (await listPods(p.cp, NS, 'app=web')).find((x) => x.metadata.uid === uid);
    for (const [type, who] of [[GATE, 'written by outprobe, probing from real-node-1/2'], ['ContainersReady', 'its kubelet\'s readinessProbe'], ['Ready', 'folded by the real kubelet']] as const) {
      const v = pod === undefined ? undefined : condition(pod, type);
      if (v !== undefined && last.get(type) !== v) {
        if (last.has(type)) line(`\x1b[33m${pod?.metadata.name ?? ''}: ${type}=${v}   (${who})\x1b[0m`);
        last.set(type, v);
      }
    }
    await sleep(100);
  }
}

async function tick(c: ServiceClient, pods: readonly PodJson[], seconds: number): Promise<void> {
  for (let i = 0; i < seconds; i++) {
    const from = Date.now();
    await sleep(1000);
    line(counts(c, pods, from - 600, Date.now() - 600));
  }
}

export async function runRealDemo(exitAfterScenario: boolean): Promise<void> {
  say('Starting the local control plane with 3 real nodes (a real kubelet, containerd and runc each) and 1 kwok node; the first run builds Kubernetes from Go modules (many minutes)');
  const p = await startRealPlane(3);
  let client: ServiceClient | undefined;
  let stopping = false;
  const stop = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    say('Stopping: client, pods, kubelets, containerd, control plane, pod network');
    await client?.stop();
    await p.stop();
  };
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => { void stop().then(() => process.exit(0)); });
  try {
    say(`Installing outprobe with its Helm chart and its own image (${p.cp.images?.outprobe.name ?? '?'}), one replica on real-node-1 and one on real-node-2`);
    await installChart(p, ['real-node-1', 'real-node-2']);
    await createNamespace(p, NS, true);
    const policyFile = path.join(import.meta.dirname, 'demo-policy.yaml');
    const policyText = readFileSync(policyFile, 'utf8');
    const policy = parse(policyText) as { spec: { readiness: Record<string, unknown> } };
    // Two replicas share the 3 pods: the panic cap is per replica (ADR 0015), and a replica owning 1 pod may hold
    // 50 % of 1 = 0 of them unready. The demo cuts one pod, so it lets each replica hold all of its own.
    policy.spec.readiness['maxUnreadyPercent'] = 100;
    await p.cp.kube.create(`/apis/outprobe.io/v1alpha1/namespaces/${NS}/probepolicies`, policy);
    say(`Applied ${path.relative(process.cwd(), policyFile)} with readiness.maxUnreadyPercent 100 (two replicas share its pods); namespace ${NS} is labelled outprobe.io/inject-readiness-gates=enabled:`);
    process.stdout.write(policyText);
    const { clusterIp } = await deployWeb(p, { namespace: NS, replicas: 3, nodes: ['real-node-0'] });
    const pods = await until('3 web pods Ready with their gate True', async () => {
      const ps = await listPods(p.cp, NS, 'app=web');
      return ps.length === 3 && ps.every((x) => condition(x, 'Ready') === 'True' && condition(x, GATE) === 'True') ? ps : undefined;
    }, 180_000);
    show(p, everything);
    const net = p.cp.net;
    const clientNode = net?.nodes.find((n) => n.kind === 'kwok');
    if (net === undefined || clientNode === undefined) throw new Error('no pod network');
    client = startServiceClient({ spawnIn: (ns, cmd, args, opts) => net.spawnIn(ns, cmd, args, opts), netns: clientNode.netns, ip: clusterIp, port: 80, intervalMs: 50, timeoutMs: 500 });
    say(`Steady state: a client on ${clientNode.name} reaches all 3 pods through kube-proxy (pod names shortened to their last 5 characters)`);
    await tick(client, pods, 4);
    const victim = pods[1];
    if (victim?.status.podIP === undefined) throw new Error('expected 3 pods with IPs');
    say(`Cutting ${victim.metadata.name} (${victim.status.podIP}, on ${victim.spec.nodeName ?? '?'}) off from every other node; its own kubelet still reaches it`);
    const watching = { on: true };
    const watcher = watchConditions(p, victim.metadata.uid, watching);
    const fault = await net.faults.isolatePod(victim.status.podIP);
    await tick(client, pods, 10);
    show(p, workload);
    say('Healing the partition');
    await fault.heal();
    await tick(client, pods, 6);
    watching.on = false;
    await watcher;
    show(p, workload);
    say('Scenario done: the cut pod left the Service by outprobe\'s gate, folded by the real kubelet, and came back');
    if (exitAfterScenario) {
      await stop();
      return;
    }
    say('Watching the client every second; press Ctrl-C to stop');
    for (;;) await tick(client, pods, 10);
  } catch (err: unknown) {
    process.stderr.write(`demo failed: ${err instanceof Error ? err.message : String(err)}\n`);
    await stop();
    process.exitCode = 1;
  }
}
