// `npm run bench:scale:inmemory -- [--pods 20000] [--policies 1,50] [--period 5]`: issue 18's
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
// `--memory` (issue 17): each pods × policies case runs in a child process of its
// own (`node --expose-gc`), with the production observer (metrics, Events, logs)
// and gate-write queue; the child measures RSS and heap after a full GC with the
// controller running and no pods (the empty process), after convergence and a
// settle of `--settle-s`, and once the controller is stopped and dropped (what the
// in-memory API itself holds), and writes a heap snapshot with `--snapshot DIR`.
// Prints progress to stderr and the figures as JSON on the last line of stdout.
import { spawn } from 'node:child_process';
import { Writable } from 'node:stream';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { writeHeapSnapshot } from 'node:v8';
import { Controller, reporter } from '../../src/controller/index.ts';
import type { Observer } from '../../src/controller/index.ts';
import { systemClock, systemRandom } from '../../src/kernel/index.ts';
import type { Clock } from '../../src/kernel/index.ts';
import { EventRecorder, Metrics, createLogger } from '../../src/observability/index.ts';
import type { Outcome } from '../../src/probing/index.ts';
import { WriteQueue } from '../../src/writeback/index.ts';
import { MemoryApi } from './memory-api.ts';

const { values } = parseArgs({
  options: {
    pods: { type: 'string', default: '20000' },
    policies: { type: 'string', default: '1,50' },
    period: { type: 'string', default: '5' },
    'converge-s': { type: 'string', default: '120' },
    memory: { type: 'boolean', default: false },
    /** Internal: one memory case in this process (set by the parent). */
    child: { type: 'boolean', default: false },
    snapshot: { type: 'string' },
    'settle-s': { type: 'string' },
    /** `real`: the production reporter (metrics, Events into the in-memory API, logs to nowhere) and gate-write queue. */
    observer: { type: 'string' },
    /** Extra Node/V8 flags for each memory case's child process, one string (`'--max-semi-space-size=4'`). */
    'node-args': { type: 'string', default: '' },
    /** After convergence, this percent of the pods fail their probes (every 100/N-th pod) before the costs are taken: the panic step and the budget then have failures to decide (issue 17). */
    'failing-percent': { type: 'string', default: '0' },
  },
});
/** The convergence phase ends after this long even if not every gate is True (a controller that cannot keep up). */
const convergeMs = Number(values['converge-s']) * 1000;
const podCounts = values.pods.split(',').map(Number);
const periodSeconds = Number(values.period);
const realObserver = (values.observer ?? (values.memory ? 'real' : 'none')) === 'real';
const settleMs = Number(values['settle-s'] ?? 2 * periodSeconds) * 1000;
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

const podIP = (i: number): string => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;

function pod(i: number, p: number, startedAt: string): Record<string, unknown> & { metadata: { name: string; namespace: string; uid: string; labels: Record<string, string> } } {
  return {
    metadata: { name: `pod-${i}`, namespace: ns, uid: `uid-${i}`, labels: { app: `app-${p}` } },
    spec: { nodeName: 'n1', readinessGates: [{ conditionType: gateOf(p) }], containers: [{ name: 'web', ports: [{ name: 'http', containerPort: 8080 }] }] },
    status: {
      phase: 'Running', podIP: podIP(i),
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

interface MemorySample {
  readonly rssMb: number;
  readonly heapUsedMb: number;
  readonly heapTotalMb: number;
  readonly externalMb: number;
}
const mb = (b: number): number => Math.round((b / 1048576) * 10) / 10;
function sample(): MemorySample {
  const m = process.memoryUsage();
  return { rssMb: mb(m.rss), heapUsedMb: mb(m.heapUsed), heapTotalMb: mb(m.heapTotal), externalMb: mb(m.external) };
}
/** Heap and RSS after full collections (needs --expose-gc). */
async function sampleAfterGc(): Promise<MemorySample> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('--memory needs node --expose-gc');
  for (let k = 0; k < 3; k++) {
    gc();
    await sleep(50);
  }
  return sample();
}

/** The production observer (main.ts's reporter) with its sinks, or none. */
function observerFor(api: MemoryApi): { observe: Observer; close: () => Promise<void>; queue: WriteQueue | undefined } {
  if (!realObserver) return { observe: () => undefined, close: () => Promise.resolve(), queue: undefined };
  const nowhere = new Writable({ write: (_chunk, _enc, done) => done() });
  const log = createLogger({ level: 'info', stream: nowhere });
  const metrics = new Metrics();
  const events = new EventRecorder({ api: api.client, clock: systemClock, random: systemRandom, logger: log, metrics, reportingInstance: 'bench' });
  const queue = new WriteQueue({ clock: systemClock, maxInflight: 64 });
  return { observe: reporter({ log, metrics, events }), close: () => events.close(), queue };
}

async function scenario(policies: number, podCount: number) {
  const api = new MemoryApi();
  const memory = values.memory ? await measured(api, policies, podCount) : undefined;
  return { ...(await run(api, policies, podCount, memory)), ...(memory === undefined ? {} : { memory: await memory.finish() }) };
}

/** The memory samples of one case (child mode). */
async function measured(api: MemoryApi, policies: number, podCount: number) {
  const start = await sampleAfterGc();
  let empty: MemorySample | undefined;
  let converged: { before: MemorySample; after: MemorySample; settleMs: number } | undefined;
  return {
    /** The controller runs, with its policies and no pods. */
    async empty(): Promise<void> {
      empty = await sampleAfterGc();
    },
    async converged(): Promise<void> {
      await sleep(settleMs);
      const before = sample();
      const after = await sampleAfterGc();
      converged = { before, after, settleMs };
      if (values.snapshot !== undefined) {
        const file = writeHeapSnapshot(join(values.snapshot, `scale-${podCount}-${policies}.heapsnapshot`));
        say(`heap snapshot: ${file}`);
      }
    },
    /** The controller stopped and dropped: what is left is the in-memory API (and the modules). */
    async finish() {
      const apiOnly = await sampleAfterGc();
      if (empty === undefined || converged === undefined) throw new Error('memory samples missing');
      const apiHeapMb = Math.max(0, apiOnly.heapUsedMb - start.heapUsedMb);
      const perPod = (mbAbove: number): number => Math.round((mbAbove * 1048576) / podCount);
      return {
        start,
        empty,
        converged,
        apiOnly,
        apiPodBytesMb: mb(api.podBytes),
        /** Bytes per pod: controller heap after GC above the empty controller (the API's own heap taken out). */
        heapPerPodBytes: perPod(converged.after.heapUsedMb - apiOnly.heapUsedMb + start.heapUsedMb - empty.heapUsedMb),
        /** Bytes per pod: RSS above the empty controller, less what the in-memory API holds. */
        rssPerPodBytes: perPod(converged.after.rssMb - empty.rssMb - apiHeapMb),
      };
    },
  };
}

async function run(api: MemoryApi, policies: number, podCount: number, memory: Awaited<ReturnType<typeof measured>> | undefined) {
  const clock = new SkewClock();
  for (let p = 0; p < policies; p++) api.put('policies', policy(p, 1, '/healthz'));
  const failingPercent = Number(values['failing-percent']);
  const failingIps = new Set<string>();
  const answer = (ip: string): Promise<Outcome> => Promise.resolve(failingIps.has(ip) ? { kind: 'failure', output: 'HTTP probe failed with statuscode: 503' } : { kind: 'success', output: '' });
  const ok = (): Promise<Outcome> => Promise.resolve({ kind: 'success', output: '' });
  const sinks = observerFor(api);
  const controller = new Controller({
    client: api.client, clock, random: systemRandom, observe: sinks.observe, probers: { httpGet: (req) => answer(req.ip), tcpSocket: ok, grpc: ok }, namespaces: [ns],
    ...(sinks.queue === undefined ? {} : { gateWrites: { client: api.client, queue: sinks.queue } }),
  });
  const stop = new AbortController();
  const done = controller.run(stop.signal);
  while (!controller.ready) await sleep(10);
  await memory?.empty();
  const cpuStart = process.cpuUsage();

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
  const cpu = process.cpuUsage(cpuStart);
  const convergeCpuUsPerPod = Math.round((cpu.user + cpu.system) / podCount);
  const loop = { p50: eld.percentile(50) / 1e6, p99: eld.percentile(99) / 1e6, max: eld.max / 1e6 };
  const gated = gatesTrue();
  say(`${policies} policies: ${gated}/${podCount} gates True after ${Math.round(performance.now() - start)} ms; event-loop delay p99 ${loop.p99.toFixed(1)} ms, max ${loop.max.toFixed(1)} ms; ${api.gateWrites} gate writes, ${api.statusWrites} status writes`);
  await sleep(2_500); // the last status writes and their echoes
  await memory?.converged();
  if (failingPercent > 0) {
    const every = Math.max(1, Math.round(100 / failingPercent));
    for (let i = 0; i < podCount; i += every) failingIps.add(podIP(i));
    // failureThreshold (3) periods and one more: every failing pod is confirmed failing, its gate False or failed open.
    await sleep((3 + 1) * periodSeconds * 1000 + 2_000);
    say(`${failingIps.size} pods failing: ${podCount - api.gatedTrue.size} gates not True`);
  }
  const gatesNotTrueInCosts = podCount - api.gatedTrue.size;

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
  await sinks.close();
  return {
    policies,
    pods: podCount,
    /** null: not every gate was True within --converge-s. */
    convergedMs: Number.isNaN(converged) ? null : Math.round(converged),
    gatesTrueAtEnd: gated,
    /** Process CPU (user + system) from the first pod to convergence, per pod: watch, planning, the first probes, gate writes and their echoes. */
    convergeCpuUsPerPod,
    /** Pods whose probes failed during the costs (`--failing-percent`), and gates not True then. */
    failingPods: failingIps.size,
    gatesNotTrueInCosts,
    eventLoopDelayMs: { p50: Math.round(loop.p50 * 10) / 10, p99: Math.round(loop.p99 * 10) / 10, max: Math.round(loop.max * 10) / 10 },
    statusOnlyEventMs: quantiles(statusOnly),
    specChangeEventMs: quantiles(specChange),
    stepMs: quantiles(steps),
    statusTickMs: quantiles(ticks),
    gateWrites: api.gateWrites,
    statusWrites: api.statusWrites,
    eventWrites: api.eventWrites,
  };
}

/** Runs one memory case in a child process of its own (so each starts from an empty process) and returns its JSON line. */
async function child(policies: number, pods: number): Promise<unknown> {
  const args = ['--expose-gc', ...values['node-args'].split(' ').filter((a) => a !== ''), process.argv[1] ?? '', '--memory', '--child', '--pods', String(pods), '--policies', String(policies), '--period', String(periodSeconds), '--converge-s', String(convergeMs / 1000), '--settle-s', String(settleMs / 1000)];
  if (values.snapshot !== undefined) args.push('--snapshot', values.snapshot);
  if (values.observer !== undefined) args.push('--observer', values.observer);
  args.push('--failing-percent', values['failing-percent']);
  const p = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  p.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  const code = await new Promise<number | null>((resolve) => p.once('exit', resolve));
  if (code !== 0) throw new Error(`memory case ${pods} pods x ${policies} policies exited ${String(code)}`);
  return (JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as { results: unknown[] }).results[0];
}

const results = [];
for (const pods of podCounts) {
  for (const p of values.policies.split(',').map(Number)) {
    const r = values.memory && !values.child ? await child(p, pods) : await scenario(p, pods);
    say(JSON.stringify(r));
    results.push(r);
    await sleep(500);
  }
}
// The machine's load is part of the figures: event-loop delay includes time spent waiting for a core.
process.stdout.write(`${JSON.stringify({ bench: values.memory ? 'scale-memory' : 'scale', node: process.version, cores: cpus().length, loadavg1m: Math.round((loadavg()[0] ?? 0) * 10) / 10, periodSeconds, observer: realObserver ? 'real' : 'none', nodeArgs: values['node-args'], results })}\n`);
