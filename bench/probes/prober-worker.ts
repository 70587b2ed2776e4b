/**
 * The outprobe probing process: runs a fixed number of probes of one protocol
 * through outprobe's Scheduler and executors, and reports the CPU time of
 * this process alone (process.cpuUsage, user + system) over the measured
 * window as one JSON line on stdout. A warm-up run (same code, own Scheduler)
 * comes first so JIT compilation and module loading are not measured.
 */
import { performance } from 'node:perf_hooks';
import { systemClock, systemRandom } from '../../src/kernel/index.ts';
import { createGrpcProber, createHttpProber, Scheduler, tcpProbe } from '../../src/probing/index.ts';
import type { Outcome } from '../../src/probing/index.ts';
import { childConfig, exitWhenParentGoes } from './children.ts';
import type { Listener } from './targets.ts';

export type Protocol = 'http' | 'tcp' | 'grpc';

export interface WorkerConfig {
  readonly protocol: Protocol;
  readonly targets: readonly Listener[];
  readonly probes: number;
  readonly warmup: number;
  readonly concurrency: number;
  readonly periodMs: number;
  readonly timeoutMs: number;
}

export interface OutcomeCounts {
  success: number;
  warning: number;
  failure: number;
  errored: number;
}

export interface WorkerReport {
  readonly protocol: Protocol;
  readonly probes: number;
  readonly cpuUserUs: number;
  readonly cpuSystemUs: number;
  readonly wallMs: number;
  readonly outcomes: OutcomeCounts;
  /** Up to 5 distinct failure/errored texts, to see what went wrong. */
  readonly sampleProblems: readonly string[];
  readonly rssBytes: number;
  readonly heapUsedBytes: number;
}

type Probe = (signal: AbortSignal) => Promise<Outcome>;

const userAgent = 'kube-probe/1.37';

function probesFor(config: WorkerConfig): Probe[] {
  const { targets, timeoutMs } = config;
  switch (config.protocol) {
    case 'http': {
      const http = createHttpProber({ userAgent });
      return targets.map(({ ip, port }) => {
        const req = { scheme: 'HTTP', ip, port, path: '/healthz', headers: [], timeoutMs } as const;
        return (signal) => http(req, signal);
      });
    }
    case 'tcp':
      return targets.map(({ ip, port }) => {
        const req = { ip, port, timeoutMs };
        return (signal) => tcpProbe(req, signal);
      });
    case 'grpc': {
      const grpc = createGrpcProber({ userAgent });
      return targets.map(({ ip, port }) => {
        const req = { ip, port, service: '', timeoutMs };
        return (signal) => grpc(req, signal);
      });
    }
  }
}

interface RunResult {
  readonly cpu: NodeJS.CpuUsage;
  readonly wallMs: number;
  readonly outcomes: OutcomeCounts;
  readonly problems: readonly string[];
}

/**
 * Every target is due at once and again `periodMs` after each completion, so
 * the scheduler stays saturated at its concurrency bound. Passes beyond the
 * quota remove their own target; the loop is stopped when the last probe of
 * the quota has completed, so nothing is cut short inside the window.
 */
async function runQuota(probes: readonly Probe[], quota: number, config: WorkerConfig): Promise<RunResult> {
  const scheduler = new Scheduler({ clock: systemClock, random: systemRandom, concurrency: config.concurrency });
  const stop = new AbortController();
  const outcomes: OutcomeCounts = { success: 0, warning: 0, failure: 0, errored: 0 };
  const problems = new Set<string>();
  let started = 0;
  let done = 0;
  const now = systemClock.now();
  probes.forEach((probe, i) => {
    const key = `${config.protocol}/${String(i)}`;
    scheduler.upsert({
      key,
      periodMs: config.periodMs,
      firstDueAt: now,
      jitter: false,
      run: async (signal) => {
        if (started >= quota) {
          scheduler.remove(key);
          return;
        }
        started++;
        const outcome = await probe(signal);
        outcomes[outcome.kind]++;
        if (outcome.kind === 'failure' && problems.size < 5) problems.add(outcome.output);
        if (outcome.kind === 'errored' && problems.size < 5) problems.add(outcome.error);
        if (++done === quota) stop.abort();
      },
    });
  });
  const cpuBefore = process.cpuUsage();
  const wallBefore = performance.now();
  await scheduler.start(stop.signal);
  const wallMs = performance.now() - wallBefore;
  const cpu = process.cpuUsage(cpuBefore);
  return { cpu, wallMs, outcomes, problems: [...problems] };
}

async function main(): Promise<void> {
  const config = childConfig<WorkerConfig>();
  exitWhenParentGoes();
  const probes = probesFor(config);
  if (config.warmup > 0) await runQuota(probes, config.warmup, config);
  const result = await runQuota(probes, config.probes, config);
  const memory = process.memoryUsage();
  const report: WorkerReport = {
    protocol: config.protocol,
    probes: config.probes,
    cpuUserUs: result.cpu.user,
    cpuSystemUs: result.cpu.system,
    wallMs: result.wallMs,
    outcomes: result.outcomes,
    sampleProblems: result.problems,
    rssBytes: memory.rss,
    heapUsedBytes: memory.heapUsed,
  };
  process.stdout.write(`${JSON.stringify(report)}\n`);
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`prober-worker: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
