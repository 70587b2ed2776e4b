/**
 * The outprobe probing process: runs a fixed number of probes of one protocol
 * through outprobe's Scheduler and executors, and reports the CPU time of
 * this process alone (process.cpuUsage, user + system) over the measured
 * window as one JSON line on stdout. A warm-up run (same code, own Scheduler)
 * comes first so JIT compilation and module loading are not measured.
 */
import { createGrpcProber, createHttpProber, tcpProbe } from '../../src/probing/index.ts';
import { childConfig, exitWhenParentGoes } from './children.ts';
import { runQuota } from './saturate.ts';
import type { OutcomeCounts, Probe } from './saturate.ts';
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

async function main(): Promise<void> {
  const config = childConfig<WorkerConfig>();
  exitWhenParentGoes();
  const probes = probesFor(config);
  if (config.warmup > 0) await runQuota(probes, config.warmup, config.protocol, config);
  const result = await runQuota(probes, config.probes, config.protocol, config);
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
