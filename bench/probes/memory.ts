/**
 * `npm run bench:probes -- --memory` (or `node bench/probes/memory.ts`):
 * schedules 50,000 targets (period 10 s, jittered first pass, as after a
 * controller start) through outprobe's Scheduler against the target
 * processes' ports, and reports this process's RSS and heap after all are
 * scheduled and after each full period of probing. This process is the
 * probing process; the targets run in their own processes. Last stdout line:
 * one JSON object.
 */
import { performance } from 'node:perf_hooks';
import { systemClock, systemRandom } from '../../src/kernel/index.ts';
import { createGrpcProber, createHttpProber, Scheduler, tcpProbe } from '../../src/probing/index.ts';
import type { Outcome } from '../../src/probing/index.ts';
import { interrupted, killAll } from './children.ts';
import { startFleet } from './fleet.ts';
import type { Fleet } from './fleet.ts';
import { memoryBenchOptions } from './options.ts';
import type { MemoryBenchOptions } from './options.ts';
import type { OutcomeCounts } from './saturate.ts';
import { timeWaitSockets } from './system.ts';

const userAgent = 'kube-probe/1.37';
const mb = (bytes: number): number => Math.round((bytes / 2 ** 20) * 10) / 10;
const log = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

interface Snapshot {
  readonly rss_mb: number;
  readonly heap_used_mb: number;
  readonly heap_total_mb: number;
  readonly external_mb: number;
}

function snapshot(): Snapshot {
  const m = process.memoryUsage();
  return { rss_mb: mb(m.rss), heap_used_mb: mb(m.heapUsed), heap_total_mb: mb(m.heapTotal), external_mb: mb(m.external) };
}

/** Heap still reachable: a full GC first when Node runs with --expose-gc (run.ts --memory passes it). */
function retained(): Snapshot | null {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) return null;
  gc();
  return snapshot();
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

/** Builds one probe closure per target, protocols split by `mix`, ports taken round-robin. */
function buildProbes(fleet: Fleet, options: MemoryBenchOptions): { probes: ((signal: AbortSignal) => Promise<Outcome>)[]; counts: number[] } {
  const http = createHttpProber({ userAgent });
  const grpc = createGrpcProber({ userAgent });
  const total = options.mix[0] + options.mix[1] + options.mix[2];
  const nHttp = Math.round((options.targets * options.mix[0]) / total);
  const nTcp = Math.round((options.targets * options.mix[1]) / total);
  const nGrpc = options.targets - nHttp - nTcp;
  const { timeoutMs } = options;
  const probes: ((signal: AbortSignal) => Promise<Outcome>)[] = [];
  for (let i = 0; i < nHttp; i++) {
    const { ip, port } = fleet.http[i % fleet.http.length]!;
    const req = { scheme: 'HTTP', ip, port, path: `/healthz?target=${String(i)}`, headers: [], timeoutMs } as const;
    probes.push((signal) => http(req, signal));
  }
  for (let i = 0; i < nTcp; i++) {
    const { ip, port } = fleet.tcp[i % fleet.tcp.length]!;
    const req = { ip, port, timeoutMs };
    probes.push((signal) => tcpProbe(req, signal));
  }
  for (let i = 0; i < nGrpc; i++) {
    const { ip, port } = fleet.grpc[i % fleet.grpc.length]!;
    const req = { ip, port, service: '', timeoutMs };
    probes.push((signal) => grpc(req, signal));
  }
  return { probes, counts: [nHttp, nTcp, nGrpc] };
}

async function main(): Promise<void> {
  const major = Number(process.versions.node.split('.')[0]);
  if (major < 24) throw new Error(`Node ${process.versions.node}: run with Node 24`);
  const options = memoryBenchOptions(process.argv.slice(2));
  const fleet = await startFleet(options);
  log(`targets: ${fleet.http.length} HTTP, ${fleet.tcp.length} TCP, ${fleet.grpc.length} gRPC ports in ${fleet.pids.length} process(es)`);

  const baseline = retained() ?? snapshot();
  const cpuStart = process.cpuUsage();
  const { probes, counts } = buildProbes(fleet, options);
  const scheduler = new Scheduler({ clock: systemClock, random: systemRandom, concurrency: options.concurrency });
  const outcomes: OutcomeCounts = { success: 0, warning: 0, failure: 0, errored: 0 };
  let lags: number[] = [];
  const now = systemClock.now();
  probes.forEach((probe, i) => {
    scheduler.upsert({
      key: `target/${String(i)}`,
      periodMs: options.periodMs,
      firstDueAt: now,
      jitter: true,
      run: async (signal) => {
        // lastLagMs was set just before this pass started: how late it started.
        lags.push(scheduler.stats().lastLagMs);
        const outcome = await probe(signal);
        outcomes[outcome.kind]++;
      },
    });
  });
  const scheduled = snapshot();
  const scheduledRetained = retained();
  log(`scheduled ${scheduler.stats().targets} targets (${counts[0]!} HTTP, ${counts[1]!} TCP, ${counts[2]!} gRPC): ${JSON.stringify(scheduled)}, after GC ${JSON.stringify(scheduledRetained)}`);

  const stop = new AbortController();
  const loop = scheduler.start(stop.signal);
  const afterPeriods: (Snapshot & { probes: number; cpu_s: number; lag_ms_p50: number; lag_ms_p99: number; lag_ms_max: number; after_gc: Snapshot | null })[] = [];
  const start = performance.now();
  for (let p = 1; p <= options.periods; p++) {
    const cpuBefore = process.cpuUsage();
    const probesBefore = outcomes.success + outcomes.warning + outcomes.failure + outcomes.errored;
    lags = [];
    await new Promise((resolve) => setTimeout(resolve, start + p * options.periodMs - performance.now()));
    const cpu = process.cpuUsage(cpuBefore);
    const done = outcomes.success + outcomes.warning + outcomes.failure + outcomes.errored - probesBefore;
    const sorted = lags.sort((a, b) => a - b);
    const raw = snapshot();
    const entry = {
      ...raw,
      probes: done,
      cpu_s: Math.round((cpu.user + cpu.system) / 1e3) / 1e3,
      lag_ms_p50: percentile(sorted, 0.5),
      lag_ms_p99: percentile(sorted, 0.99),
      lag_ms_max: sorted.at(-1) ?? 0,
      after_gc: retained(),
    };
    afterPeriods.push(entry);
    log(`after period ${p}: ${JSON.stringify(entry)}, in flight ${scheduler.stats().inFlight}, queued ${scheduler.stats().queued}`);
  }
  stop.abort();
  await loop;
  const cpuTotal = process.cpuUsage(cpuStart);
  const last = afterPeriods.at(-1)!;
  const tw = timeWaitSockets(fleet.ips);
  log(`outcomes: ${JSON.stringify(outcomes)}; TIME-WAIT (ours) ${tw.ours}`);
  killAll();
  log(
    JSON.stringify({
      targets: options.targets,
      period_ms: options.periodMs,
      baseline_rss_mb: baseline.rss_mb,
      scheduled_rss_mb: scheduled.rss_mb,
      scheduled_heap_used_mb: scheduled.heap_used_mb,
      scheduled_heap_used_after_gc_mb: scheduledRetained?.heap_used_mb ?? null,
      after_period_rss_mb: last.rss_mb,
      after_period_heap_used_mb: last.heap_used_mb,
      after_period_rss_after_gc_mb: last.after_gc?.rss_mb ?? null,
      after_period_heap_used_after_gc_mb: last.after_gc?.heap_used_mb ?? null,
      heap_bytes_per_target_scheduled: Math.round((((scheduledRetained ?? scheduled).heap_used_mb - baseline.heap_used_mb) * 2 ** 20) / options.targets),
      probes_last_period: last.probes,
      expected_probes_per_period: options.targets,
      cpu_s_last_period: last.cpu_s,
      lag_ms_p50_last_period: last.lag_ms_p50,
      lag_ms_p99_last_period: last.lag_ms_p99,
      lag_ms_max_last_period: last.lag_ms_max,
      cpu_s_total: Math.round((cpuTotal.user + cpuTotal.system) / 1e3) / 1e3,
      outcomes,
      time_wait_after: tw.ours,
      http_targets: counts[0],
      tcp_targets: counts[1],
      grpc_targets: counts[2],
      periods: afterPeriods,
      node: process.versions.node,
    }),
  );
}

main().catch((error: unknown) => {
  if (interrupted() === undefined) process.stderr.write(`bench memory failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  killAll();
  process.exitCode = interrupted() === undefined ? 1 : 130;
});
