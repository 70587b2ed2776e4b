/**
 * `npm run bench:probes -- --controller` (issue 16, deliverable 4): the
 * controller's CPU per probe on its full pass (decide, probe, record, hooks),
 * against the executor alone on the same targets, in one process.
 *
 * 1. controller: the real Controller (reflectors, target set, Scheduler,
 *    runPass, gate writer, status writer) with the real reporter (prom-client
 *    Metrics, the EventRecorder, a logger at `warn`), the real HTTP/TCP
 *    executors and the stall guard (EventLoopMonitor), as src/main.ts wires
 *    them, against bench/scale's in-memory API (no API server, no sockets to
 *    it). `--pods` pods, each on one of the target processes' ports (its pod
 *    IP and its `http` container port), one ProbePolicy (readiness,
 *    `httpGet /healthz` on port `http`, or `tcpSocket`, `periodSeconds` from
 *    `--period-ms`). Once every gate is True and one more period has passed,
 *    CPU (process.cpuUsage) and probe attempts are counted over `--periods`
 *    periods.
 * 2. executor: a bare Scheduler with as many targets, the same period and
 *    concurrency, calling the same executor (no decide, record or hooks),
 *    jittered over one period, then measured the same way. It runs first,
 *    and a full GC (--expose-gc, which run.ts passes) separates the two, so
 *    neither pays for the other's garbage.
 *
 * The last stdout line is JSON: `controller_cpu_us_per_probe`,
 * `executor_cpu_us_per_probe` and their difference, the controller's share
 * of the full pass.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Controller, reporter } from '../../src/controller/index.ts';
import { systemClock, systemRandom } from '../../src/kernel/index.ts';
import { createLogger, EventRecorder, Metrics } from '../../src/observability/index.ts';
import { createGrpcProber, createHttpProber, EventLoopMonitor, Scheduler, tcpProbe } from '../../src/probing/index.ts';
import type { Outcome } from '../../src/probing/index.ts';
import { MemoryApi } from '../scale/memory-api.ts';
import { interrupted, killAll } from './children.ts';
import { startFleet } from './fleet.ts';
import type { Listener } from './targets.ts';

const userAgent = 'kube-probe/1.37';
const ns = 'bench';
const gate = 'outprobe.io/bench';

function flag(name: string, fallback: string): string {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  return arg === undefined ? fallback : arg.slice(name.length + 3);
}
function intFlag(name: string, fallback: number): number {
  const value = Number(flag(name, String(fallback)));
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer`);
  return value;
}

const pods = intFlag('pods', 10_000);
const periodMs = intFlag('period-ms', 10_000);
const periods = intFlag('periods', 3);
const concurrency = intFlag('concurrency', 256);
const targetProcs = intFlag('target-procs', 2);
const kind = flag('probe', 'http');
if (kind !== 'http' && kind !== 'tcp') throw new Error('--probe must be http or tcp');
if (periodMs % 1000 !== 0) throw new Error('--period-ms must be whole seconds (periodSeconds)');
const log = (line: string): void => {
  process.stdout.write(`${line}\n`);
};
const round = (n: number, digits = 0): number => Math.round(n * 10 ** digits) / 10 ** digits;

function policy(): Record<string, unknown> & { metadata: { name: string; namespace: string; uid: string; generation: number; creationTimestamp: string } } {
  const probe = kind === 'http' ? { httpGet: { path: '/healthz', port: 'http' } } : { tcpSocket: { port: 'http' } };
  return {
    apiVersion: 'outprobe.io/v1alpha1',
    kind: 'ProbePolicy',
    metadata: { name: 'bench', namespace: ns, uid: 'policy-bench', generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: { selector: { matchLabels: { app: 'bench' } }, readiness: { conditionType: gate, probe: { ...probe, periodSeconds: periodMs / 1000, timeoutSeconds: 1 } } },
  };
}

function pod(i: number, target: Listener, startedAt: string): Record<string, unknown> & { metadata: { name: string; namespace: string; uid: string; labels: Record<string, string> } } {
  return {
    metadata: { name: `pod-${String(i)}`, namespace: ns, uid: `uid-${String(i)}`, labels: { app: 'bench' } },
    spec: { nodeName: 'n1', readinessGates: [{ conditionType: gate }], containers: [{ name: 'web', ports: [{ name: 'http', containerPort: target.port }] }] },
    status: {
      phase: 'Running',
      podIP: target.ip,
      conditions: [{ type: 'ContainersReady', status: 'True' }],
      containerStatuses: [{ name: 'web', containerID: `containerd://c${String(i)}`, restartCount: 0, started: true, ready: true, state: { running: { startedAt } } }],
    },
  };
}

interface Window {
  readonly probes: number;
  readonly cpuUs: number;
  readonly wallS: number;
  readonly outcomes: Record<Outcome['kind'], number>;
}

/** Counts executor calls and their outcomes; `measure` reads CPU and counts over `periods` periods. */
class Counter {
  probes = 0;
  outcomes: Record<Outcome['kind'], number> = { success: 0, warning: 0, failure: 0, errored: 0 };
  wrap<R>(executor: (req: R, signal: AbortSignal) => Promise<Outcome>): (req: R, signal: AbortSignal) => Promise<Outcome> {
    return async (req, signal) => {
      const outcome = await executor(req, signal);
      this.probes++;
      this.outcomes[outcome.kind]++;
      return outcome;
    };
  }
  async measure(): Promise<Window> {
    const probesBefore = this.probes;
    const outcomesBefore = { ...this.outcomes };
    const cpuBefore = process.cpuUsage();
    const wallBefore = performance.now();
    await sleep(periods * periodMs);
    const cpu = process.cpuUsage(cpuBefore);
    const outcomes = { ...this.outcomes };
    for (const k of Object.keys(outcomes) as Outcome['kind'][]) outcomes[k] -= outcomesBefore[k];
    return { probes: this.probes - probesBefore, cpuUs: cpu.user + cpu.system, wallS: (performance.now() - wallBefore) / 1e3, outcomes };
  }
}

async function main(): Promise<void> {
  const fleet = await startFleet({ httpPorts: 500, tcpPorts: 500, grpcPorts: 0, targetProcs, ips: 10 });
  const targets = kind === 'http' ? fleet.http : fleet.tcp;
  log(`targets: ${targets.length} ${kind} ports on ${fleet.ips.size} addresses in ${fleet.pids.length} process(es); ${pods} pods, period ${periodMs} ms, concurrency ${concurrency}`);
  const http = createHttpProber({ userAgent });
  const executor = kind === 'http' ? http : tcpProbe;

  // 1. The executor alone: same targets, period and concurrency, a bare Scheduler.
  const bare = new Counter();
  const run = bare.wrap(executor as (req: unknown, signal: AbortSignal) => Promise<Outcome>);
  const scheduler = new Scheduler({ clock: systemClock, random: systemRandom, concurrency });
  const now = systemClock.now();
  for (let i = 0; i < pods; i++) {
    const { ip, port } = targets[i % targets.length]!;
    const req = kind === 'http' ? { scheme: 'HTTP', ip, port, path: '/healthz', headers: [], timeoutMs: 1000 } : { ip, port, timeoutMs: 1000 };
    const pass = async (signal: AbortSignal): Promise<void> => {
      await run(req, signal);
    };
    scheduler.upsert({ key: `t/${String(i)}`, periodMs, firstDueAt: now, jitter: true, run: pass });
  }
  const stopBare = new AbortController();
  const loop = scheduler.start(stopBare.signal);
  await sleep(periodMs);
  const alone = await bare.measure();
  stopBare.abort();
  await loop;
  log(`executor alone: ${alone.probes} probes in ${round(alone.wallS, 1)} s, ${round(alone.cpuUs / 1e6, 2)} CPU-s -> ${round(alone.cpuUs / alone.probes, 1)} CPU-us per probe; outcomes ${JSON.stringify(alone.outcomes)}`);
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  await sleep(1000);

  // 2. The controller's full pass.
  const api = new MemoryApi();
  api.put('policies', policy());
  const metrics = new Metrics();
  const logger = createLogger({ level: 'warn' });
  const events = new EventRecorder({ api: { request: <T>() => Promise.resolve({} as T) }, clock: systemClock, random: systemRandom, logger, metrics, reportingInstance: 'bench' });
  const monitor = new EventLoopMonitor({ boundMs: 500, onDelay: (ms) => metrics.observeEventLoopDelay(ms / 1000) });
  monitor.start();
  const counted = new Counter();
  const controller = new Controller({
    client: api.client,
    clock: systemClock,
    random: systemRandom,
    observe: reporter({ log: logger, metrics, events }),
    probers: { httpGet: counted.wrap(http), tcpSocket: counted.wrap(tcpProbe), grpc: createGrpcProber({ userAgent }) },
    stallGuard: monitor,
    concurrency,
    allowedCidrs: ['127.0.0.0/8'],
    namespaces: [ns],
  });
  const stop = new AbortController();
  const running = controller.run(stop.signal);
  while (!controller.ready) await sleep(10);
  const startedAt = new Date(Date.now() - 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z');
  const t0 = performance.now();
  for (let i = 0; i < pods; i++) {
    api.put('pods', pod(i, targets[i % targets.length]!, startedAt));
    if (i % 500 === 499) await sleep(50);
  }
  while (api.gatedTrue.size < pods && performance.now() - t0 < 10 * periodMs + 120_000) await sleep(250);
  log(`controller: ${api.gatedTrue.size} of ${pods} gates True after ${round((performance.now() - t0) / 1000, 1)} s; one more period, then ${periods} measured`);
  await sleep(periodMs);
  const full = await counted.measure();
  const lag = controller.scheduler.stats();
  log(`controller: ${full.probes} probes in ${round(full.wallS, 1)} s, ${round(full.cpuUs / 1e6, 2)} CPU-s -> ${round(full.cpuUs / full.probes, 1)} CPU-us per probe; outcomes ${JSON.stringify(full.outcomes)}`);
  stop.abort();
  await running;
  monitor.stop();

  killAll();
  const perProbe = (w: Window): number => round(w.cpuUs / w.probes, 1);
  log(
    JSON.stringify({
      probe: kind,
      pods,
      period_ms: periodMs,
      periods,
      concurrency,
      controller_probes: full.probes,
      controller_cpu_s: round(full.cpuUs / 1e6, 3),
      controller_cpu_us_per_probe: perProbe(full),
      controller_outcomes: full.outcomes,
      executor_probes: alone.probes,
      executor_cpu_s: round(alone.cpuUs / 1e6, 3),
      executor_cpu_us_per_probe: perProbe(alone),
      executor_outcomes: alone.outcomes,
      controller_overhead_us_per_probe: round(perProbe(full) - perProbe(alone), 1),
      scheduler_last_lag_ms: lag.lastLagMs,
      node: process.versions.node,
    }),
  );
}

main().then(
  () => {
    killAll();
    process.exit(0);
  },
  (error: unknown) => {
    if (interrupted() === undefined) process.stderr.write(`bench controller failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    killAll();
    process.exit(interrupted() === undefined ? 1 : 130);
  },
);
