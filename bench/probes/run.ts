/**
 * `npm run bench:probes`: outprobe's probe executors (through its Scheduler)
 * against Prometheus blackbox_exporter, on the same loopback targets, in
 * probes per CPU-second of the probing process alone. Progress lines go to
 * stdout; the last stdout line is one JSON object. `--memory` runs memory.ts
 * instead. Options: see options.ts and bench/README.md.
 */
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { interrupted, killAll, runNodeForJson, track } from './children.ts';
import { blackboxBinary, blackboxVersion, driveBlackbox, ensureBlackbox, startBlackbox } from './blackbox.ts';
import type { Blackbox } from './blackbox.ts';
import { startFleet } from './fleet.ts';
import type { Fleet } from './fleet.ts';
import { probeBenchOptions } from './options.ts';
import type { ProbeBenchOptions } from './options.ts';
import type { Protocol, WorkerConfig, WorkerReport } from './prober-worker.ts';
import { processCpuSeconds, processRssBytes, timeWaitCap, timeWaitSockets } from './system.ts';
import type { Listener } from './targets.ts';

interface Phase {
  readonly name: string;
  readonly probes: number;
  readonly failures: number;
  readonly cpuSeconds: number;
  readonly wallSeconds: number;
  readonly targetCpuSeconds: number;
  /** TIME-WAIT sockets on our target addresses after the phase (any age). */
  readonly timeWait: number;
  /** Of those, created during the phase (warm-up included), all and on the prober's side; null if the phase outlasted the 60 s TIME-WAIT. */
  readonly timeWaitNew: number | null;
  readonly timeWaitNewProberSide: number | null;
  readonly rssBytes: number | undefined;
}

const log = (line: string): void => {
  process.stdout.write(`${line}\n`);
};
const round = (n: number, digits = 0): number => Math.round(n * 10 ** digits) / 10 ** digits;
const perCpu = (phase: Phase | undefined): number | null => (phase === undefined || phase.cpuSeconds === 0 ? null : round(phase.probes / phase.cpuSeconds));

function report(phase: Phase): Phase {
  log(
    `${phase.name.padEnd(14)} ${String(phase.probes).padStart(6)} probes, ${String(phase.failures)} failed | ` +
      `probing process ${round(phase.cpuSeconds, 2)} CPU-s -> ${String(perCpu(phase))} probes/CPU-s | ` +
      `wall ${round(phase.wallSeconds, 2)} s -> ${round(phase.probes / phase.wallSeconds)} probes/s | ` +
      `targets ${round((phase.targetCpuSeconds * 1e6) / phase.probes)} CPU-us/probe | TIME-WAIT new ${String(phase.timeWaitNew)}, on the prober side ${String(phase.timeWaitNewProberSide)}`,
  );
  if (phase.failures > phase.probes * 0.001) log(`  WARNING: ${phase.name}: ${phase.failures} of ${phase.probes} probes failed`);
  return phase;
}

function timeWaitLine(fleet: Fleet): string {
  const { all, ours, proberSide } = timeWaitSockets(fleet.ips);
  const cap = timeWaitCap();
  const capped = cap !== undefined && all >= cap ? ` (AT the tcp_max_tw_buckets cap ${cap}: TIME-WAIT counts are undercounts)` : '';
  return `${all} on the machine, ${ours} on target addresses (${proberSide} of them the prober's)${capped}`;
}

type TimeWaitFigures = Pick<Phase, 'timeWait' | 'timeWaitNew' | 'timeWaitNewProberSide'>;

function timeWaitSince(fleet: Fleet, startedAt: number): TimeWaitFigures {
  const elapsedS = (performance.now() - startedAt) / 1e3;
  const now = timeWaitSockets(fleet.ips, elapsedS);
  const valid = elapsedS < 59;
  return { timeWait: now.ours, timeWaitNew: valid ? now.recent : null, timeWaitNewProberSide: valid ? now.recentProberSide : null };
}

async function outprobePhase(fleet: Fleet, options: ProbeBenchOptions, protocol: Protocol, probes: number, targets: readonly Listener[]): Promise<Phase> {
  const config: WorkerConfig = {
    protocol,
    targets,
    probes,
    warmup: Math.min(options.warmup, probes),
    concurrency: options.concurrency,
    periodMs: options.periodMs,
    timeoutMs: options.timeoutMs,
  };
  log(`outprobe ${protocol}: ${probes} probes over ${targets.length} ports, concurrency ${options.concurrency}, period ${options.periodMs} ms ...`);
  const targetCpuBefore = fleet.cpuSeconds();
  const startedAt = performance.now();
  const result = await runNodeForJson<WorkerReport>('./prober-worker.ts', config, `outprobe-${protocol}`, 600_000);
  const failures = result.outcomes.failure + result.outcomes.errored;
  for (const problem of result.sampleProblems) log(`  e.g. ${problem}`);
  return report({
    name: `outprobe ${protocol}`,
    probes: result.probes,
    failures,
    cpuSeconds: (result.cpuUserUs + result.cpuSystemUs) / 1e6,
    wallSeconds: result.wallMs / 1e3,
    // Includes the warm-up: the target processes cannot be split at the worker's window.
    targetCpuSeconds: ((fleet.cpuSeconds() - targetCpuBefore) * probes) / (probes + config.warmup),
    ...timeWaitSince(fleet, startedAt),
    rssBytes: result.rssBytes,
  });
}

async function blackboxPhase(fleet: Fleet, blackbox: Blackbox, options: ProbeBenchOptions, module: string, probes: number, targets: readonly string[]): Promise<Phase> {
  log(`blackbox ${module}: ${probes} probes over ${targets.length} ports, ${options.blackboxConcurrency} in flight ...`);
  const warmup = Math.min(options.warmup, probes);
  const startedAt = performance.now();
  if (warmup > 0) await driveBlackbox(blackbox, module, targets, warmup, options.blackboxConcurrency);
  const cpuBefore = processCpuSeconds(blackbox.pid);
  const targetCpuBefore = fleet.cpuSeconds();
  const result = await driveBlackbox(blackbox, module, targets, probes, options.blackboxConcurrency);
  const cpuSeconds = processCpuSeconds(blackbox.pid) - cpuBefore;
  for (const problem of result.sampleProblems) log(`  e.g. ${problem}`);
  return report({
    name: `blackbox ${module === 'http_2xx' ? 'http' : 'tcp'}`,
    probes,
    failures: result.failed,
    cpuSeconds,
    wallSeconds: result.wallMs / 1e3,
    targetCpuSeconds: fleet.cpuSeconds() - targetCpuBefore,
    ...timeWaitSince(fleet, startedAt),
    rssBytes: processRssBytes(blackbox.pid),
  });
}

/** Rounds of one phase pooled: total probes over total CPU; socket counts and RSS from the last round. */
function pool(rounds: ReadonlyMap<string, readonly Phase[]>): Map<string, Phase> {
  const pooled = new Map<string, Phase>();
  for (const [name, list] of rounds) {
    const sum = (pick: (phase: Phase) => number): number => list.reduce((total, phase) => total + pick(phase), 0);
    const last = list.at(-1)!;
    pooled.set(name, {
      ...last,
      probes: sum((p) => p.probes),
      failures: sum((p) => p.failures),
      cpuSeconds: sum((p) => p.cpuSeconds),
      wallSeconds: sum((p) => p.wallSeconds),
      targetCpuSeconds: sum((p) => p.targetCpuSeconds),
      timeWaitNew: list.some((p) => p.timeWaitNew === null) ? null : sum((p) => p.timeWaitNew ?? 0),
      timeWaitNewProberSide: list.some((p) => p.timeWaitNewProberSide === null) ? null : sum((p) => p.timeWaitNewProberSide ?? 0),
    });
  }
  return pooled;
}

function summary(phases: ReadonlyMap<string, Phase>, rounds: ReadonlyMap<string, readonly Phase[]>, environment: Record<string, unknown>): Record<string, unknown> {
  const ratio = (ours: number | null, theirs: number | null): number | null => (ours === null || theirs === null ? null : round(ours / theirs, 2));
  const oh = perCpu(phases.get('outprobe http'));
  const bh = perCpu(phases.get('blackbox http'));
  const ot = perCpu(phases.get('outprobe tcp'));
  const bt = perCpu(phases.get('blackbox tcp'));
  const og = phases.get('outprobe grpc');
  const out: Record<string, unknown> = {
    http_probes_per_cpu_s: oh,
    blackbox_http_probes_per_cpu_s: bh,
    http_ratio: ratio(oh, bh),
    tcp_probes_per_cpu_s: ot,
    blackbox_tcp_probes_per_cpu_s: bt,
    tcp_ratio: ratio(ot, bt),
    grpc_probes_per_cpu_s: perCpu(og),
    grpc_cpu_us_per_probe: og === undefined ? null : round((og.cpuSeconds * 1e6) / og.probes),
  };
  for (const [name, phase] of phases) {
    const key = name.replace(' ', '_').replace('outprobe_', '');
    out[`${key}_probes`] = phase.probes;
    out[`${key}_failures`] = phase.failures;
    out[`${key}_cpu_s`] = round(phase.cpuSeconds, 3);
    out[`${key}_probes_per_wall_s`] = round(phase.probes / phase.wallSeconds);
    out[`${key}_target_cpu_us_per_probe`] = round((phase.targetCpuSeconds * 1e6) / phase.probes);
    out[`${key}_time_wait_new`] = phase.timeWaitNew;
    out[`${key}_time_wait_new_prober_side`] = phase.timeWaitNewProberSide;
    out[`${key}_prober_rss_mb`] = phase.rssBytes === undefined ? null : round(phase.rssBytes / 2 ** 20, 1);
    const list = rounds.get(name) ?? [];
    if (list.length > 1) out[`${key}_probes_per_cpu_s_rounds`] = list.map(perCpu);
  }
  return { ...out, ...environment };
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.includes('--memory')) {
    const child = track(process.execPath, ['--expose-gc', new URL('./memory.ts', import.meta.url).pathname, ...argv], 'memory', { stdio: 'inherit' });
    const code = await new Promise<number>((resolve) => child.once('exit', (c) => resolve(c ?? 1)));
    process.exitCode = code;
    return;
  }
  const major = Number(process.versions.node.split('.')[0]);
  if (major < 24) throw new Error(`Node ${process.versions.node}: run with Node 24 (npm run bench:probes, or ./node_modules/.bin/node bench/probes/run.ts)`);
  const options = probeBenchOptions(argv);
  if (options.blackbox) ensureBlackbox(log);
  const environment = {
    node: process.versions.node,
    cpus: availableParallelism(),
    blackbox_version: options.blackbox ? blackboxVersion() : null,
    concurrency: options.concurrency,
    blackbox_concurrency: options.blackboxConcurrency,
    target_procs: options.targetProcs,
    rounds: options.rounds,
    period_ms: options.periodMs,
  };
  log(`machine: ${environment.cpus} CPUs, Node ${environment.node}, ${environment.blackbox_version ?? 'blackbox skipped'}`);

  const fleet = await startFleet(options);
  log(`targets: ${fleet.http.length} HTTP, ${fleet.tcp.length} TCP, ${fleet.grpc.length} gRPC ports on ${[...fleet.ips].join(', ')} in ${fleet.pids.length} process(es)`);
  log(`TIME-WAIT sockets before: ${timeWaitLine(fleet)}`);

  const needBlackbox = options.blackbox && options.httpProbes + options.tcpProbes > 0;
  const blackbox = needBlackbox ? await startBlackbox() : undefined;
  if (blackbox !== undefined) log(`blackbox_exporter: pid ${blackbox.pid}, 127.0.0.1:${blackbox.port} (${blackboxBinary})`);
  const httpUrls = fleet.http.map(({ ip, port }) => `http://${ip}:${port}/healthz`);
  const tcpAddrs = fleet.tcp.map(({ ip, port }) => `${ip}:${port}`);

  const rounds = new Map<string, Phase[]>();
  const add = (phase: Phase): void => {
    rounds.set(phase.name, [...(rounds.get(phase.name) ?? []), phase]);
  };
  try {
    for (let round = 1; round <= options.rounds; round++) {
      if (options.rounds > 1) log(`--- round ${round} of ${options.rounds}`);
      if (options.httpProbes > 0) add(await outprobePhase(fleet, options, 'http', options.httpProbes, fleet.http));
      if (blackbox !== undefined && options.httpProbes > 0) add(await blackboxPhase(fleet, blackbox, options, 'http_2xx', options.httpProbes, httpUrls));
      if (options.tcpProbes > 0) add(await outprobePhase(fleet, options, 'tcp', options.tcpProbes, fleet.tcp));
      if (blackbox !== undefined && options.tcpProbes > 0) add(await blackboxPhase(fleet, blackbox, options, 'tcp_connect', options.tcpProbes, tcpAddrs));
      if (options.grpcProbes > 0) add(await outprobePhase(fleet, options, 'grpc', options.grpcProbes, fleet.grpc));
    }
  } finally {
    await blackbox?.stop();
  }
  log(`TIME-WAIT sockets after: ${timeWaitLine(fleet)}`);
  killAll();
  log(JSON.stringify(summary(pool(rounds), rounds, environment)));
}

main().then(
  () => {
    killAll();
  },
  (error: unknown) => {
    if (interrupted() === undefined) process.stderr.write(`bench:probes failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    killAll();
    process.exitCode = interrupted() === undefined ? 1 : 130;
  },
);
