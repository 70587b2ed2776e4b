// `npm run bench:scale -- [--pods 20000] [--policies 1,50] [--period 5]`: issue 18's
// out-of-cluster figures. For each policy count, drives the real Controller (its
// reflectors, target set, scheduler, gate and status writers) against an in-memory
// API (memory-api.ts: no API server, no sockets; probes answer success at once):
// 1. convergence: the policies exist; the pods arrive in batches (500 every 250 ms), every one gated by
//    its policy (pods spread evenly over the policies, one namespace); each gate
//    write and status write comes back on the watch. Event-loop delay is sampled
//    until every gate is True.
// 2. costs, after convergence: one status-only policy update (same generation, new
//    status, as outprobe's own status writes), one spec change (a new generation,
//    the probe path toggled), and one controller step that writes every policy's
//    status (the 2 s status tick).
// Prints progress to stderr and the figures as JSON on the last line of stdout.
import { cpus, loadavg } from 'node:os';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Controller } from '../../src/controller/index.ts';
import { systemRandom } from '../../src/kernel/index.ts';
import type { Clock } from '../../src/kernel/index.ts';
import { MemoryApi } from './memory-api.ts';

const { values } = parseArgs({ options: { pods: { type: 'string', default: '20000' }, policies: { type: 'string', default: '1,50' }, period: { type: 'string', default: '5' }, 'converge-s': { type: 'string', default: '120' } } });
/** The convergence phase ends after this long even if not every gate is True (a controller that cannot keep up). */
const convergeMs = Number(values['converge-s']) * 1000;
const podCount = Number(values.pods);
const periodSeconds = Number(values.period);
const say = (m: string): void => void process.stderr.write(`${new Date().toISOString()} ${m}\n`);
const ns = 'bench';
const gateOf = (p: number): string => `outprobe.io/web-${p}`;

function quantiles(xs: readonly number[]): { p50: number; p99: number; max: number } {
  const s = [...xs].sort((a, b) => a - b);
  const q = (f: number): number => Math.round((s[Math.min(s.length - 1, Math.max(0, Math.ceil(f * s.length) - 1))] ?? Number.NaN) * 100) / 100;
  return { p50: q(0.5), p99: q(0.99), max: q(1) };
}

function policy(p: number, generation: number, path: string): Record<string, unknown> & { metadata: { name: string; namespace: string; uid: string; generation: number; creationTimestamp: string } } {
  return {
    apiVersion: 'outprobe.io/v1alpha1', kind: 'ProbePolicy',
    metadata: { name: `web-${p}`, namespace: ns, uid: `policy-${p}`, generation, creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: { selector: { matchLabels: { app: `app-${p}` } }, readiness: { conditionType: gateOf(p), probe: { httpGet: { path, port: 8080 }, periodSeconds } } },
  };
}

function pod(i: number, p: number, startedAt: string): Record<string, unknown> & { metadata: { name: string; namespace: string; uid: string; labels: Record<string, string> } } {
  return {
    metadata: { name: `pod-${i}`, namespace: ns, uid: `uid-${i}`, labels: { app: `app-${p}` } },
    spec: { nodeName: 'n1', readinessGates: [{ conditionType: gateOf(p) }], containers: [{ name: 'web', ports: [{ name: 'http', containerPort: 8080 }] }] },
    status: {
      phase: 'Running', podIP: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
      conditions: [{ type: 'ContainersReady', status: 'True' }],
      containerStatuses: [{ name: 'web', containerID: `containerd://c${i}`, restartCount: 0, started: true, ready: true, state: { running: { startedAt } } }],
    },
  };
}

/** The system clock, with an offset the bench moves to make a step the status tick. */
class SkewClock implements Clock {
  skew = 0;
  now(): number {
    return Date.now() + this.skew;
  }
  sleepUntil(atMs: number, signal?: AbortSignal): Promise<void> {
    return sleep(Math.max(0, atMs - this.now()), undefined, signal === undefined ? {} : { signal });
  }
}

async function scenario(policies: number) {
  const api = new MemoryApi();
  const clock = new SkewClock();
  for (let p = 0; p < policies; p++) api.put('policies', policy(p, 1, '/healthz'));
  const ok = (): Promise<{ kind: 'success'; output: string }> => Promise.resolve({ kind: 'success', output: '' });
  const controller = new Controller({ client: api.client, clock, random: systemRandom, observe: () => undefined, probers: { httpGet: ok, tcpSocket: ok, grpc: ok }, namespaces: [ns] });
  const stop = new AbortController();
  const done = controller.run(stop.signal);
  while (!controller.ready) await sleep(10);

  // 1. Convergence.
  const gatesTrue = (): number => api.gatedTrue.size;
  const eld = monitorEventLoopDelay({ resolution: 10 });
  eld.enable();
  const start = performance.now();
  const startedAt = new Date(Date.now() - 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z');
  const batch = 500;
  for (let i = 0; i < podCount; i += batch) {
    for (let j = i; j < Math.min(podCount, i + batch); j++) api.put('pods', pod(j, j % policies, startedAt));
    if (performance.now() - start < convergeMs) await sleep(250);
  }
  let converged = Number.NaN;
  while (performance.now() - start < convergeMs) {
    if (gatesTrue() === podCount) {
      converged = performance.now() - start;
      break;
    }
    await sleep(250);
  }
  eld.disable();
  const loop = { p50: eld.percentile(50) / 1e6, p99: eld.percentile(99) / 1e6, max: eld.max / 1e6 };
  const gated = gatesTrue();
  say(`${policies} policies: ${gated}/${podCount} gates True after ${Math.round(performance.now() - start)} ms; event-loop delay p99 ${loop.p99.toFixed(1)} ms, max ${loop.max.toFixed(1)} ms; ${api.gateWrites} gate writes, ${api.statusWrites} status writes`);
  await sleep(2_500); // the last status writes and their echoes

  // 2. Costs.
  const handled = new Map<string, number>();
  api.policyFeed.onHandled = (e, ms) => handled.set(e.object.metadata.resourceVersion ?? '', ms);
  const update = async (mutate: (o: Record<string, unknown>) => void): Promise<number> => {
    const o = api.policies.get(`${ns}/web-0`);
    if (o === undefined) throw new Error('no policy');
    mutate(o);
    handled.clear();
    api.put('policies', o, 'MODIFIED');
    // The cost of this very event (the controller's own status writes come back on the same watch).
    const rv = (o['metadata'] as { resourceVersion: string }).resourceVersion;
    while (!handled.has(rv)) await sleep(5);
    return handled.get(rv) ?? Number.NaN;
  };
  const statusOnly: number[] = [];
  for (let k = 0; k < 20; k++) statusOnly.push(await update((o) => void (o['status'] = { ...(o['status'] as object), message: `status ${k}` })));
  const specChange: number[] = [];
  for (let k = 0; k < 6; k++) {
    specChange.push(await update((o) => {
      const next = policy(0, (o['metadata'] as { generation: number }).generation + 1, k % 2 === 0 ? '/ready' : '/healthz');
      Object.assign(o, { metadata: { ...(o['metadata'] as object), generation: next.metadata.generation }, spec: next['spec'] });
    }));
    await sleep(200);
  }
  api.policyFeed.onHandled = undefined;
  const steps: number[] = [];
  const ticks: number[] = [];
  for (let k = 0; k < 10; k++) {
    let t = performance.now();
    controller.step();
    steps.push(performance.now() - t);
    clock.skew += 2_001; // the status interval has passed: this step writes every policy's status
    t = performance.now();
    controller.step();
    ticks.push(performance.now() - t);
    await sleep(50);
  }
  stop.abort();
  await done;
  return {
    policies,
    pods: podCount,
    /** null: not every gate was True within --converge-s. */
    convergedMs: Number.isNaN(converged) ? null : Math.round(converged),
    gatesTrueAtEnd: gated,
    eventLoopDelayMs: { p50: Math.round(loop.p50 * 10) / 10, p99: Math.round(loop.p99 * 10) / 10, max: Math.round(loop.max * 10) / 10 },
    statusOnlyEventMs: quantiles(statusOnly),
    specChangeEventMs: quantiles(specChange),
    stepMs: quantiles(steps),
    statusTickMs: quantiles(ticks),
    gateWrites: api.gateWrites,
    statusWrites: api.statusWrites,
  };
}

const results = [];
for (const p of values.policies.split(',').map(Number)) {
  const r = await scenario(p);
  say(JSON.stringify(r));
  results.push(r);
  await sleep(500);
}
// The machine's load is part of the figures: event-loop delay includes time spent waiting for a core.
process.stdout.write(`${JSON.stringify({ bench: 'scale', node: process.version, cores: cpus().length, loadavg1m: Math.round((loadavg()[0] ?? 0) * 10) / 10, periodSeconds, results })}\n`);
