/**
 * `npm run bench:probes`: outprobe's probe executors (through its Scheduler)
 * against Prometheus blackbox_exporter, on the same loopback targets, in
 * probes per CPU-second of the probing process alone. Progress lines go to
 * stdout; the last stdout line is one JSON object. `--memory` runs memory.ts
 * instead, `--controller` controller.ts. Options: see options.ts and bench/README.md.
 */
import { availableParallelism, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { interrupted, killAll, runNodeForJson, track } from './children.ts';
import { blackboxBinary, blackboxVersion, driveBlackbox, ensureBlackbox, startBlackbox } from './blackbox.ts';
import type { Blackbox } from './blackbox.ts';
import { ensureCloudprober, startCloudprober } from './cloudprober.ts';
import type { CloudproberBinary, CloudproberKind } from './cloudprober.ts';
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
  /** Connections the targets accepted in the measured window (Cloudprober phases: a check of the count from its metrics). */
  readonly targetSideConnections?: number;
  /** The targets' longest event-loop delay in the window (Cloudprober phases). */
  readonly targetLoopDelayMaxMs?: number;
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

async function outprobePhase(fleet: Fleet, options: ProbeBenchOptions, protocol: Protocol, probes: number, targets: readonly Listener[], floor = false): Promise<Phase> {
  const name = `${floor ? 'floor' : 'outprobe'} ${protocol}`;
  const config: WorkerConfig = {
    floor,
    protocol,
    targets,
    probes,
    warmup: Math.min(options.warmup, probes),
    concurrency: options.concurrency,
    periodMs: options.periodMs,
    timeoutMs: options.timeoutMs,
  };
  log(
    floor
      ? `floor ${protocol}: ${probes} raw connect + reset over ${targets.length} ports, ${options.concurrency} in flight ...`
      : `outprobe ${protocol}: ${probes} probes over ${targets.length} ports, concurrency ${options.concurrency}, period ${options.periodMs} ms ...`,
  );
  const targetCpuBefore = fleet.cpuSeconds();
  const startedAt = performance.now();
  const result = await runNodeForJson<WorkerReport>('./prober-worker.ts', config, name.replace(' ', '-'), 600_000);
  const failures = result.outcomes.failure + result.outcomes.errored;
  for (const problem of result.sampleProblems) log(`  e.g. ${problem}`);
  return report({
    name,
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
  const warmup = Math.min(options.blackboxWarmup, probes);
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

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Cloudprober, one process per phase: started with the committed config, left
 * to run one stats-export interval after every series has reported (all its
 * per-target goroutines running), then measured over `cloudproberExports`
 * whole export intervals: each target exports its counters once per interval,
 * so a window of k intervals holds exactly k exports of every target.
 */
async function cloudproberPhase(fleet: Fleet, binary: CloudproberBinary, options: ProbeBenchOptions, kind: CloudproberKind, intervalMs: number, copies: number): Promise<Phase> {
  const targets = fleet[kind];
  const timeoutMs = Math.min(options.timeoutMs, intervalMs);
  const exportMs = Math.max(intervalMs, timeoutMs, 10_000);
  log(`cloudprober ${kind}: ${copies} probe(s) x ${targets.length} ports, interval ${intervalMs} ms, timeout ${timeoutMs} ms (offered ${round((copies * targets.length * 1000) / intervalMs)} probes/s), window ${(options.cloudproberExports * exportMs) / 1000} s ...`);
  const cp = await startCloudprober(binary, { kind, targets, copies, intervalMs, timeoutMs });
  try {
    await sleep(exportMs);
    // CPU is read after the first scrape of /metrics and before the last, so
    // serving our scrapes (thousands of series) is not charged to Cloudprober.
    const startedAt = performance.now();
    const before = await cp.counts();
    const cpuBefore = cp.cpuSeconds();
    const targetCpuBefore = fleet.cpuSeconds();
    const acceptedBefore = await fleet.accepted();
    const windowStart = performance.now();
    await sleep(options.cloudproberExports * exportMs - (performance.now() - startedAt));
    const cpuSeconds = cp.cpuSeconds() - cpuBefore;
    const wallSeconds = (performance.now() - windowStart) / 1e3;
    const acceptedAfter = await fleet.accepted();
    const after = await cp.counts();
    const probes = after.total - before.total;
    return report({
      name: `cloudprober ${kind}`,
      probes,
      failures: probes - (after.success - before.success),
      cpuSeconds,
      wallSeconds,
      targetCpuSeconds: fleet.cpuSeconds() - targetCpuBefore,
      ...timeWaitSince(fleet, startedAt),
      rssBytes: cp.rssBytes(),
      ...(kind === 'grpc' ? {} : { targetSideConnections: acceptedAfter[kind] - acceptedBefore[kind] }),
      targetLoopDelayMaxMs: acceptedAfter.loopDelayMaxMs,
    });
  } finally {
    await cp.stop();
  }
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
      ...(last.targetSideConnections === undefined ? {} : { targetSideConnections: sum((p) => p.targetSideConnections ?? 0) }),
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
  const ch = perCpu(phases.get('cloudprober http'));
  const ct = perCpu(phases.get('cloudprober tcp'));
  const cg = perCpu(phases.get('cloudprober grpc'));
  const og = phases.get('outprobe grpc');
  const out: Record<string, unknown> = {
    http_probes_per_cpu_s: oh,
    blackbox_http_probes_per_cpu_s: bh,
    http_ratio: ratio(oh, bh),
    tcp_probes_per_cpu_s: ot,
    blackbox_tcp_probes_per_cpu_s: bt,
    tcp_ratio: ratio(ot, bt),
    cloudprober_http_probes_per_cpu_s: ch,
    cloudprober_tcp_probes_per_cpu_s: ct,
    http_ratio_vs_cloudprober: ratio(oh, ch),
    tcp_ratio_vs_cloudprober: ratio(ot, ct),
    ...tcpAgainstFloor(phases, rounds),
    grpc_probes_per_cpu_s: perCpu(og),
    grpc_cpu_us_per_probe: og === undefined ? null : round((og.cpuSeconds * 1e6) / og.probes),
    cloudprober_grpc_probes_per_cpu_s: cg,
    grpc_ratio_vs_cloudprober: ratio(perCpu(og), cg),
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
    if (phase.targetSideConnections !== undefined) out[`${key}_target_side_connections`] = phase.targetSideConnections;
    if (phase.targetLoopDelayMaxMs !== undefined) out[`${key}_target_loop_delay_max_ms`] = phase.targetLoopDelayMaxMs;
    const list = rounds.get(name) ?? [];
    if (list.length > 1) out[`${key}_probes_per_cpu_s_rounds`] = list.map(perCpu);
  }
  return { ...out, ...environment };
}

/** min, median, max of a list (null when empty). */
function spread(values: readonly number[]): { readonly min: number; readonly median: number; readonly max: number } | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { min: round(sorted[0]!, 2), median: round(median, 2), max: round(sorted.at(-1)!, 2) };
}

/**
 * TCP against the kernel's floor and Cloudprober (issue 31 item 6): the
 * pooled ratios, and each round's ratios (round i's outprobe over round i's
 * floor and Cloudprober, measured minutes apart at most) with their spread.
 */
function tcpAgainstFloor(phases: ReadonlyMap<string, Phase>, rounds: ReadonlyMap<string, readonly Phase[]>): Record<string, unknown> {
  const ours = rounds.get('outprobe tcp') ?? [];
  const perRound = (theirs: readonly Phase[]): number[] =>
    ours.flatMap((phase, i) => {
      const a = perCpu(phase);
      const b = perCpu(theirs[i]);
      return a === null || b === null ? [] : [round(a / b, 3)];
    });
  const floor = perCpu(phases.get('floor tcp'));
  const outprobe = perCpu(phases.get('outprobe tcp'));
  const vsFloor = perRound(rounds.get('floor tcp') ?? []);
  const vsCloudprober = perRound(rounds.get('cloudprober tcp') ?? []);
  return {
    tcp_floor_probes_per_cpu_s: floor,
    tcp_ratio_vs_floor: floor === null || outprobe === null ? null : round(outprobe / floor, 3),
    tcp_ratio_vs_floor_rounds: vsFloor,
    tcp_ratio_vs_floor_spread: spread(vsFloor),
    tcp_ratio_vs_cloudprober_rounds: vsCloudprober,
    tcp_ratio_vs_cloudprober_spread: spread(vsCloudprober),
  };
}

/** One line for the TCP comparison, before the JSON. */
function tcpLine(out: Record<string, unknown>): string | undefined {
  if (out['tcp_floor_probes_per_cpu_s'] === null && out['cloudprober_tcp_probes_per_cpu_s'] === null) return undefined;
  const s = (key: string): string => {
    const v = out[key] as { min: number; median: number; max: number } | null;
    return v === null ? '' : ` (rounds ${String(v.min)}-${String(v.max)}, median ${String(v.median)})`;
  };
  return (
    `TCP per CPU-s of the probing process: floor ${String(out['tcp_floor_probes_per_cpu_s'])}, outprobe ${String(out['tcp_probes_per_cpu_s'])}, cloudprober ${String(out['cloudprober_tcp_probes_per_cpu_s'])} | ` +
    `outprobe/floor ${String(out['tcp_ratio_vs_floor'])}${s('tcp_ratio_vs_floor_spread')}, outprobe/cloudprober ${String(out['tcp_ratio_vs_cloudprober'])}${s('tcp_ratio_vs_cloudprober_spread')}`
  );
}

/**
 * `--cloudprober-sweep=interval:copies,...`: Cloudprober alone, HTTP then TCP
 * (as `--http`/`--tcp` > 0 ask) at each setup, to find the one it does best;
 * the last line is JSON with every setup's figures.
 */
async function sweepCloudprober(fleet: Fleet, cloudprober: CloudproberBinary | undefined, options: ProbeBenchOptions): Promise<void> {
  if (cloudprober === undefined) throw new Error('--cloudprober-sweep: Cloudprober is not available');
  const rows: Record<string, unknown>[] = [];
  for (const kind of ['http', 'tcp', 'grpc'] as const) {
    if ({ http: options.httpProbes, tcp: options.tcpProbes, grpc: options.grpcProbes }[kind] === 0) continue;
    for (const [intervalMs, copies] of options.cloudproberSweep) {
      let phase: Phase;
      try {
        phase = await cloudproberPhase(fleet, cloudprober, options, kind, intervalMs, copies);
      } catch (error: unknown) {
        log(`  ${kind} ${intervalMs}:${copies}: ${String(error)}`);
        rows.push({ kind, interval_ms: intervalMs, copies, error: String(error) });
        continue;
      }
      rows.push({
        kind,
        interval_ms: intervalMs,
        copies,
        targets: copies * fleet[kind].length,
        offered_per_s: round((copies * fleet[kind].length * 1000) / intervalMs),
        probes: phase.probes,
        failures: phase.failures,
        probes_per_wall_s: round(phase.probes / phase.wallSeconds),
        cpu_s: round(phase.cpuSeconds, 2),
        probes_per_cpu_s: perCpu(phase),
        target_side_connections: phase.targetSideConnections,
        target_loop_delay_max_ms: phase.targetLoopDelayMaxMs,
        rss_mb: phase.rssBytes === undefined ? null : round(phase.rssBytes / 2 ** 20, 1),
      });
    }
  }
  log(JSON.stringify({ cloudprober_version: cloudprober.version, sweep: rows, loadavg_end: loadavg().map((l) => round(l, 2)) }));
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const mode = argv.includes('--memory') ? 'memory' : argv.includes('--controller') ? 'controller' : undefined;
  if (mode !== undefined) {
    const nodeArgs = (process.env['BENCH_NODE_ARGS'] ?? '').split(' ').filter((arg) => arg !== '');
    const child = track(process.execPath, ['--expose-gc', ...nodeArgs, new URL(`./${mode}.ts`, import.meta.url).pathname, ...argv], mode, { stdio: 'inherit' });
    const code = await new Promise<number>((resolve) => child.once('exit', (c) => resolve(c ?? 1)));
    process.exitCode = code;
    return;
  }
  const major = Number(process.versions.node.split('.')[0]);
  if (major < 24) throw new Error(`Node ${process.versions.node}: run with Node 24 (npm run bench:probes, or ./node_modules/.bin/node bench/probes/run.ts)`);
  const options = probeBenchOptions(argv);
  const sweeping = options.cloudproberSweep.length > 0;
  if (options.blackbox && !sweeping) ensureBlackbox(log);
  let cloudprober: CloudproberBinary | undefined;
  let cloudproberError: string | null = null;
  if ((options.cloudprober || sweeping) && options.httpProbes + options.tcpProbes + options.grpcProbes > 0) {
    const built = ensureCloudprober(log);
    if ('error' in built) {
      cloudproberError = built.error;
      log(`cloudprober: NOT RUN: ${built.error}`);
    } else cloudprober = built;
  }
  const environment = {
    node: process.versions.node,
    cpus: availableParallelism(),
    blackbox_version: options.blackbox && !sweeping ? blackboxVersion() : null,
    concurrency: options.concurrency,
    blackbox_concurrency: options.blackboxConcurrency,
    target_procs: options.targetProcs,
    rounds: options.rounds,
    period_ms: options.periodMs,
    warmup: options.warmup,
    floor: options.floor,
    cloudprober_version: cloudprober?.version ?? null,
    cloudprober_error: cloudproberError,
    cloudprober_http_setup: cloudprober === undefined ? null : `${options.cloudproberHttpCopies} x ${options.httpPorts} targets, interval ${options.cloudproberHttpIntervalMs} ms`,
    cloudprober_tcp_setup: cloudprober === undefined ? null : `${options.cloudproberTcpCopies} x ${options.tcpPorts} targets, interval ${options.cloudproberTcpIntervalMs} ms`,
    cloudprober_grpc_setup: cloudprober === undefined ? null : `${options.cloudproberGrpcCopies} x ${options.grpcPorts} targets, interval ${options.cloudproberGrpcIntervalMs} ms`,
    cloudprober_window_exports: options.cloudproberExports,
    loadavg_start: loadavg().map((l) => round(l, 2)),
  };
  log(`machine: ${environment.cpus} CPUs, Node ${environment.node}, ${environment.blackbox_version ?? 'blackbox skipped'}, ${environment.cloudprober_version ?? 'cloudprober skipped'}, load ${environment.loadavg_start.join(' ')}`);

  const fleet = await startFleet(options);
  log(`targets: ${fleet.http.length} HTTP, ${fleet.tcp.length} TCP, ${fleet.grpc.length} gRPC ports on ${[...fleet.ips].join(', ')} in ${fleet.pids.length} process(es)`);
  log(`TIME-WAIT sockets before: ${timeWaitLine(fleet)}`);

  if (sweeping) {
    await sweepCloudprober(fleet, cloudprober, options);
    killAll();
    return;
  }
  const needBlackbox = options.blackbox && options.httpProbes + options.tcpProbes > 0;
  const blackbox = needBlackbox ? await startBlackbox() : undefined;
  if (blackbox !== undefined) log(`blackbox_exporter: pid ${blackbox.pid}, 127.0.0.1:${blackbox.port} (${blackboxBinary})`);
  const httpUrls = fleet.http.map(({ ip, port }) => `http://${ip}:${port}/healthz`);
  const tcpAddrs = fleet.tcp.map(({ ip, port }) => `${ip}:${port}`);

  const rounds = new Map<string, Phase[]>();
  const loadRounds: number[] = [];
  const add = (phase: Phase): void => {
    rounds.set(phase.name, [...(rounds.get(phase.name) ?? []), phase]);
  };
  try {
    for (let round = 1; round <= options.rounds; round++) {
      const load = loadavg()[0] ?? 0;
      loadRounds.push(Math.round(load * 100) / 100);
      if (options.rounds > 1) log(`--- round ${round} of ${options.rounds} (load average ${load.toFixed(2)})`);
      if (options.httpProbes > 0) add(await outprobePhase(fleet, options, 'http', options.httpProbes, fleet.http));
      if (blackbox !== undefined && options.httpProbes > 0) add(await blackboxPhase(fleet, blackbox, options, 'http_2xx', options.httpProbes, httpUrls));
      if (cloudprober !== undefined && options.httpProbes > 0) add(await cloudproberPhase(fleet, cloudprober, options, 'http', options.cloudproberHttpIntervalMs, options.cloudproberHttpCopies));
      if (options.tcpProbes > 0) {
        // The TCP phases take turns: round r starts at phase r (A B C, B C A, C A B, ...),
        // so no phase always follows the same one or always comes first.
        const tcpPhases: (() => Promise<Phase>)[] = [
          ...(options.floor ? [() => outprobePhase(fleet, options, 'tcp', options.tcpProbes, fleet.tcp, true)] : []),
          () => outprobePhase(fleet, options, 'tcp', options.tcpProbes, fleet.tcp),
          ...(blackbox === undefined ? [] : [() => blackboxPhase(fleet, blackbox, options, 'tcp_connect', options.tcpProbes, tcpAddrs)]),
          ...(cloudprober === undefined ? [] : [() => cloudproberPhase(fleet, cloudprober, options, 'tcp', options.cloudproberTcpIntervalMs, options.cloudproberTcpCopies)]),
        ];
        for (let i = 0; i < tcpPhases.length; i++) add(await tcpPhases[(round - 1 + i) % tcpPhases.length]!());
      }
      if (options.grpcProbes > 0) add(await outprobePhase(fleet, options, 'grpc', options.grpcProbes, fleet.grpc));
      if (cloudprober !== undefined && options.grpcProbes > 0) add(await cloudproberPhase(fleet, cloudprober, options, 'grpc', options.cloudproberGrpcIntervalMs, options.cloudproberGrpcCopies));
    }
  } finally {
    await blackbox?.stop();
  }
  log(`TIME-WAIT sockets after: ${timeWaitLine(fleet)}`);
  killAll();
  const out = summary(pool(rounds), rounds, { ...environment, loadavg_rounds: loadRounds, loadavg_end: loadavg().map((l) => round(l, 2)) });
  const tcp = tcpLine(out);
  if (tcp !== undefined) log(tcp);
  log(JSON.stringify(out));
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
