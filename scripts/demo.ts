// `npm run demo`: the situation outprobe exists for, on a local control plane with a
// real pod network (ADR 0014; needs root).
//
// Where the host can run real nodes (a real kubelet, containerd and runc: ADR 0047), the
// demo runs on them with outprobe's own chart and image (scripts/demo-real.ts); elsewhere,
// or with `--kwok`, it says why and runs the scenario below on simulated nodes.
//
// Four nodes, each a network namespace with a node agent (the kubelet's part for
// readiness) and kube-proxy (nftables). A Deployment of 3 pods, one per node 1-3,
// behind a Service; each pod carries the readiness gate outprobe.io/web and its own
// readinessProbe, run by its node. outprobe runs on node 0, as does a client that
// calls the Service's ClusterIP 20 times a second and counts which pod answers.
// Then one pod is cut off from every other node but its own: its node still calls it
// healthy, outprobe turns its gate False, Ready follows, the EndpointSlice drops it,
// kube-proxy stops routing to it, and the client stops reaching it. Healed, it comes
// back. Everything is printed as it happens, with timestamps. Ctrl-C ends it and
// removes every process, namespace, link, table and the plane's directory it made (a
// failed demo keeps the plane's directory, with every component's and outprobe's logs,
// and says where). `--exit-after-scenario` ends after the scripted scenario.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse } from 'yaml';
import { podNetSupport } from '../test/support/podnet/index.ts';
import { realNodeSupport } from '../test/support/realnode/index.ts';
import { runRealDemo } from './demo-real.ts';
import { breakdown, GATE, startPartitionWorld } from '../test/support/partition/index.ts';
import type { Change, World } from '../test/support/partition/index.ts';

const exitAfterScenario = process.argv.includes('--exit-after-scenario');
const t0 = Date.now();
const stamp = (t = Date.now()): string => `${new Date(t).toISOString().slice(11, 23)} (+${((t - t0) / 1000).toFixed(1)}s)`;
const say = (m: string): void => { process.stdout.write(`\n\x1b[1m== ${m}\x1b[0m\n`); };
const line = (m: string, t?: number): void => { process.stdout.write(`${stamp(t)}  ${m}\n`); };

function kubectl(w: World, args: readonly string[]): string {
  try {
    return execFileSync(w.cp.binaries.kubectl, ['--kubeconfig', w.cp.kubeconfigPath, ...args], { encoding: 'utf8' });
  } catch (err: unknown) {
    return `kubectl ${args.join(' ')}: ${err instanceof Error ? err.message : String(err)}\n`;
  }
}

function show(w: World): void {
  const ns = w.namespace;
  for (const args of [['get', 'probepolicies', '-n', ns, '-o', 'wide'], ['get', 'pods', '-n', ns, '-o', 'wide'], ['get', 'endpointslices', '-n', ns, '-l', 'kubernetes.io/service-name=web',
    '-o', 'custom-columns=NAME:.metadata.name,ADDRESSES:.endpoints[*].addresses[0],READY:.endpoints[*].conditions.ready']]) {
    process.stdout.write(`$ kubectl ${args.join(' ')}\n${kubectl(w, args)}`);
  }
}

const SIGNAL_TEXT: Record<Change['signal'], (v: string) => string> = {
  gate: (v) => `gate ${GATE}=${v}   (written by outprobe, probing from kwok-node-0)`,
  containersReady: (v) => `ContainersReady=${v}   (its own node's readinessProbe)`,
  ready: (v) => `Ready=${v}   (gates folded in by its node agent)`,
  slice: (v) => `EndpointSlice: ${v === 'True' ? 'ready' : 'not ready'}`,
  proxy: (v) => `kube-proxy on kwok-node-0: ${v === 'True' ? 'routes to it again' : 'no longer routes to it'}`,
};

/** One line per second: who answered the client's requests to the ClusterIP. */
function counts(w: World, from: number, to: number): string {
  const per = new Map<string, number>(w.pods.map((p) => [p.name, 0]));
  let errors = 0;
  for (const h of w.client.hits) {
    if (h.t < from || h.t >= to) continue;
    if (h.err !== undefined) errors++;
    else {
      const name = h.pod.slice(h.pod.indexOf('/') + 1);
      per.set(name, (per.get(name) ?? 0) + 1);
    }
  }
  return `client → ClusterIP ${w.clusterIp}: ${[...per].map(([n, c]) => `${n.slice(-5)} ${String(c).padStart(2)}`).join('   ')}   failed ${errors}`;
}

async function tick(w: World, seconds: number): Promise<void> {
  for (let i = 0; i < seconds; i++) {
    const from = Date.now();
    await sleep(1000);
    line(counts(w, from - 600, Date.now() - 600)); // requests finish up to 500 ms after they start
  }
}

async function scenario(w: World, watching: { on: boolean }): Promise<void> {
  show(w);
  say(`Steady state: the client reaches all 3 pods (pod names shortened to their last 5 characters)`);
  await tick(w, 4);
  const victim = w.pods[1];
  if (victim === undefined) throw new Error('expected 3 pods');
  say(`Cutting ${victim.name} (${victim.ip}, on ${victim.node}) off from every other node; its own node still reaches it`);
  watching.on = true;
  const cutting = w.cut(victim, 30_000);
  await tick(w, 6);
  const { result, heal } = await cutting;
  const b = breakdown(result);
  say(`${victim.name} left the Service ${b.total} ms after the cut: outprobe detected ${b.detection} ms, gate write ${b.gateWrite} ms, ` +
    `Ready fold ${b.readyFold} ms, EndpointSlice ${b.endpointSlice} ms, kube-proxy ${b.kubeProxy} ms; its node kept ContainersReady=${result.containersReadyDuringCut ?? '?'}`);
  show(w);
  say(`Healing the partition`);
  const healing = heal(30_000);
  await tick(w, 4);
  const h = await healing;
  say(`${victim.name} answers again ${h.firstAnswer - h.healStart} ms after the heal`);
  watching.on = false;
  show(w);
  say('Scenario done: the partitioned pod left the Service and came back');
}

async function main(): Promise<void> {
  if (!process.argv.includes('--kwok')) {
    const real = realNodeSupport();
    if (real.ok) {
      await runRealDemo(exitAfterScenario);
      return;
    }
    say(`No real nodes on this host (${real.why}): the demo runs on simulated (kwok) nodes, where a node agent plays the kubelet's part`);
  }
  const support = podNetSupport();
  if (!support.ok) {
    process.stderr.write(`demo: ${support.why}. The demo needs the pod network (network namespaces, nftables); run it as root: sudo npm run demo\n`);
    process.exitCode = 1;
    return;
  }
  say('Starting the local control plane on a pod network of 4 nodes (builds Kubernetes from Go modules on the first run: many minutes)');
  const watching = { on: false };
  let world: World | undefined;
  let stopping = false;
  const stop = async (o: { keepDir?: boolean } = {}): Promise<void> => {
    if (stopping) return;
    stopping = true;
    say('Stopping: client, outprobe, simulated pods, node agents, kube-proxies, control plane, pod network');
    await world?.stop(o);
    if (o.keepDir === true && world !== undefined) process.stderr.write(`demo: kept ${world.cp.dir} (the logs of every component and of outprobe, in logs/) to find why it failed; remove it with rm -r\n`);
  };
  // Our own handler (kept for every signal, not once): the plane and the pod network then clean up
  // at once without re-raising the signal, and the demo exits when stop() is done.
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.on(sig, () => { void stop().then(() => process.exit(0)); });
  }
  try {
    const policyFile = path.join(import.meta.dirname, 'demo-policy.yaml');
    const policyText = readFileSync(policyFile, 'utf8');
    world = await startPartitionWorld({
      policy: parse(policyText) as Record<string, unknown>,
      log: (m) => { process.stdout.write(`   ${m}\n`); },
      onChange: (c, pod) => { if (watching.on) line(`\x1b[33m${pod}: ${SIGNAL_TEXT[c.signal](c.value)}\x1b[0m`, c.t); },
    });
    say(`Applied ${path.relative(process.cwd(), policyFile)}:`);
    process.stdout.write(policyText);
    say(`outprobe runs on kwok-node-0 in its own sandbox (${world.outprobe.sandbox.ip}); JSON logs in ${world.outprobe.logFile}`);
    await scenario(world, watching);
    if (exitAfterScenario) {
      await stop();
      return;
    }
    say('Watching the client every second; press Ctrl-C to stop');
    for (;;) await tick(world, 10);
  } catch (err: unknown) {
    process.stderr.write(`demo failed: ${err instanceof Error ? err.message : String(err)}\n`);
    await stop({ keepDir: true });
    process.exitCode = 1;
  }
}

await main();
