/**
 * The outprobe probing process: runs a fixed number of probes of one protocol
 * through outprobe's Scheduler and executors, and reports the CPU time of
 * this process alone (process.cpuUsage, user + system) over the measured
 * window as one JSON line on stdout. A warm-up run (same code, own Scheduler)
 * comes first so JIT compilation and module loading are not measured.
 * With `floor` (TCP only) it runs the kernel's floor instead (floor.ts: raw
 * connect and reset on Node's TCP handle, no Scheduler, no executor), the
 * same way, so the two figures are counted alike (issue 31 item 6).
 */
import { createGrpcProber, createHttpProber, tcpProbe } from '../../src/probing/index.ts';
import { rawTcp, rawTcpUnavailableBecause } from '../../src/probing/rawtcp/index.ts';
import { childConfig, exitWhenParentGoes } from './children.ts';
import { runFloor } from './floor.ts';
import { runQuota } from './saturate.ts';
import type { OutcomeCounts, Probe, RunResult } from './saturate.ts';
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
  /** TCP only: the kernel's floor (raw connect + reset) instead of outprobe's Scheduler and executor. */
  readonly floor?: boolean;
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
  let run: (quota: number) => Promise<RunResult>;
  if (config.floor === true) {
    const raw = rawTcp();
    if (config.protocol !== 'tcp') throw new Error('the floor is measured for TCP only');
    if (raw === undefined) throw new Error(`no raw TCP handle for the floor: ${rawTcpUnavailableBecause()}`);
    run = (quota) => runFloor(raw, config.targets, quota, config.concurrency);
  } else {
    const probes = probesFor(config);
    run = (quota) => runQuota(probes, quota, config.protocol, config);
  }
  if (config.warmup > 0) await run(config.warmup);
  const result = await run(config.probes);
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
