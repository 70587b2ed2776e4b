/**
 * `npm run bench:scale:live`: one outprobe replica (the real src/main.ts, a
 * separate process) against the local control plane with kwok pods on the
 * loopback pod network, every pod gated and probed for real. See
 * bench/README.md "bench:scale:live" for what each figure counts.
 *
 * Phases: create pods and policies; start the controller and wait until every
 * gate is True (convergence); a steady-state window; delete and recreate one
 * policy and watch its pods. The last stdout line is one JSON object.
 */
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { installCrd } from '../../test/integration/support/controller.ts';
import { startControlPlane } from '../../test/support/cluster/index.ts';
import type { ControlPlane } from '../../test/support/cluster/index.ts';
import { busiestWindowShare, firstProbes, timesOf } from './arrivals.ts';
import { startController, startPodServer } from './children.ts';
import type { ControllerProcess, PodServer, PodServerStats } from './children.ts';
import { probeGaps, unhealthySummary, unhealthyTimeline } from './failures.ts';
import { netstatIncrease, readNetstat } from './netstat.ts';
import type { NetstatCounters } from './netstat.ts';
import { processCpuSeconds } from '../probes/system.ts';
import { conditionType, namespaceObject, podObject, podRef, policyLabel, policyName, policyNamespace, policyObject, runLabel } from './fixtures.ts';
import { GateTracker } from './gates.ts';
import { createWithRetry, forEachBounded, watchPods } from './objects.ts';
import type { PodWatch } from './objects.ts';
import { liveBenchOptions } from './options.ts';
import type { LiveBenchOptions } from './options.ts';
import { bucketIncrease, increase, summarize } from './prom.ts';
import type { Totals } from './prom.ts';
import { Sampler } from './sampler.ts';
import type { Snapshot } from './sampler.ts';

const t0 = Date.now();
const log = (m: string): void => { process.stdout.write(`[${((Date.now() - t0) / 1000).toFixed(1)}s] ${m}\n`); };
const mb = (b: number | undefined): number | null => (b === undefined ? null : Math.round(b / 1048576));
const r3 = (n: number): number => Math.round(n * 1000) / 1000;
const policiesPath = (ns: string): string => `/apis/outprobe.io/v1alpha1/namespaces/${ns}/probepolicies`;

async function until(what: string, cond: () => boolean, timeoutMs: number, progress: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastLog = Date.now();
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what} (${progress()})`);
    if (Date.now() - lastLog >= 10_000) {
      log(`waiting for ${what}: ${progress()}`);
      lastLog = Date.now();
    }
    await sleep(100);
  }
}

async function createObjects(cp: ControlPlane, o: LiveBenchOptions, run: string, port: number): Promise<number> {
  const start = Date.now();
  for (let n = 0; n < o.namespaces; n++) await createWithRetry(cp.kube, '/api/v1/namespaces', namespaceObject(run, n));
  for (let j = 0; j < o.policies; j++) await createWithRetry(cp.kube, policiesPath(policyNamespace(o, run, j)), policyObject(o, run, j));
  await forEachBounded(o.pods, o.createConcurrency, (i) => createWithRetry(cp.kube, `/api/v1/namespaces/${podRef(o, run, i).namespace}/pods`, podObject(o, run, i, port)));
  return (Date.now() - start) / 1000;
}

interface Window {
  readonly from: Snapshot;
  readonly to: Snapshot;
  /** The pods' side and the kernel at both ends (absent: not measured). */
  readonly side?: { readonly from: Side; readonly to: Side; readonly loopDelaySinceFrom: boolean };
}

/** The pod server and the kernel's TCP counters at one moment. */
interface Side {
  readonly net: NetstatCounters;
  readonly pod: PodServerStats;
  readonly podCpuS: number;
}

/** A process's niceness (field 19 of /proc/<pid>/stat), or null once it is gone. */
function niceOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  } catch {
    return null;
  }
}

async function sideNow(pods: PodServer): Promise<Side> {
  let podCpuS = 0;
  try {
    podCpuS = processCpuSeconds(pods.pid);
  } catch {
    // gone
  }
  return { net: readNetstat(), pod: await pods.stats(), podCpuS };
}

/** The pods' side over a phase: its connections, CPU and own event-loop delay, and the kernel's listen-queue drops. */
function sideFigures(s: NonNullable<Window['side']>, seconds: number): Record<string, unknown> {
  return {
    pod_server_connections: s.to.pod.connections - s.from.pod.connections,
    pod_server_cpu_cores: r3((s.to.podCpuS - s.from.podCpuS) / seconds),
    // The pod server's loop delay is reset at every read: only a phase between two consecutive reads has it.
    pod_server_loop_delay_max_ms: s.loopDelaySinceFrom ? s.to.pod.loop_delay_max_ms : null,
    pod_server_loop_delay_p99_ms: s.loopDelaySinceFrom ? s.to.pod.loop_delay_p99_ms : null,
    tcp: netstatIncrease(s.from.net, s.to.net),
  };
}

/** Figures of one phase, from two snapshots. */
function phaseFigures(w: Window): Record<string, unknown> {
  const f = w.from.totals;
  const t = w.to.totals;
  const probes = increase(f, t, 'outprobe_probes_total');
  const seconds = (w.to.at - w.from.at) / 1000;
  const cpu = (k: keyof Snapshot['cpu']): number => w.to.cpu[k] - w.from.cpu[k];
  const byResult = (r: string): number => increase(f, t, 'outprobe_probes_total', { result: r });
  const loop = summarize(bucketIncrease(f, t, 'outprobe_event_loop_delay_seconds'));
  const lag = summarize(bucketIncrease(f, t, 'outprobe_probe_schedule_lag_seconds'));
  const took = summarize(bucketIncrease(f, t, 'outprobe_probe_duration_seconds'));
  return {
    seconds: r3(seconds),
    probes,
    probes_per_s: r3(probes / seconds),
    probes_success: byResult('success'),
    probes_failure: byResult('failure'),
    probes_errored: byResult('errored'),
    probes_voided: byResult('voided'),
    controller_cpu_s: r3(cpu('controller')),
    controller_cpu_us_per_probe: probes === 0 ? null : Math.round((cpu('controller') / probes) * 1e6),
    apiserver_cpu_s: r3(cpu('apiserver')),
    apiserver_cpu_cores: r3(cpu('apiserver') / seconds),
    etcd_cpu_s: r3(cpu('etcd')),
    event_loop_delay_p99_s_le: loop.p99,
    event_loop_delay_max_s_between: [loop.maxAtLeast, loop.maxBound],
    schedule_lag_p99_s_le: lag.p99,
    schedule_lag_max_s_between: [lag.maxAtLeast, lag.maxBound],
    probe_duration_p99_s_le: took.p99,
    probe_duration_max_s_between: [took.maxAtLeast, took.maxBound],
    gate_writes: byLabel(f, t, 'outprobe_gate_writes_total', 'result'),
    gate_repairs: increase(f, t, 'outprobe_gate_repairs_total'),
    api_requests: byLabel(f, t, 'outprobe_api_requests_total', 'verb', 'resource'),
    events: byLabel(f, t, 'outprobe_events_total', 'result'),
    // Before ADR 0020 drops were results of events_total (dropped_*); since, a counter of their own.
    events_dropped:
      Object.entries(byLabel(f, t, 'outprobe_events_total', 'result')).filter(([r]) => r.startsWith('dropped')).reduce((a, [, n]) => a + n, 0) +
      Object.values(byLabel(f, t, 'outprobe_events_dropped_total', 'cause')).reduce((a, n) => a + n, 0),
    events_dropped_by_cause: byLabel(f, t, 'outprobe_events_dropped_total', 'cause'),
    events_folded: Object.values(byLabel(f, t, 'outprobe_events_folded_total', 'reason')).reduce((a, n) => a + n, 0),
    probes_failed_by_policy: failedByPolicy(f, t),
    ...(w.side === undefined ? {} : sideFigures(w.side, seconds)),
  };
}

/** Failed and errored attempts by policy (zeros left out). */
function failedByPolicy(f: Totals, t: Totals): Record<string, number> {
  const out: Record<string, number> = {};
  const before = f.get('outprobe_probes_total');
  for (const [key, v] of t.get('outprobe_probes_total') ?? []) {
    if (v.labels['result'] !== 'failure' && v.labels['result'] !== 'errored') continue;
    const n = v.total - (before?.get(key)?.total ?? 0);
    if (n !== 0) out[v.labels['policy'] ?? ''] = (out[v.labels['policy'] ?? ''] ?? 0) + n;
  }
  return out;
}

async function unhealthyEvents(cp: ControlPlane, since: number): Promise<{ by_message: ReturnType<typeof unhealthySummary>; by_10s: Record<string, number> } | string> {
  const r = await cp.kube.call('GET', '/api/v1/events?fieldSelector=reason%3DUnhealthy');
  if (r.status !== 200) return `list failed: HTTP ${r.status}`;
  const items = ((r.body as { items?: Record<string, unknown>[] } | undefined)?.items) ?? [];
  return { by_message: unhealthySummary(items, since), by_10s: unhealthyTimeline(items, since) };
}


/** A counter's increase per value of one label (or two, joined by a space), zeros left out. */
function byLabel(f: Totals, t: Totals, name: string, label: string, second?: string): Record<string, number> {
  const out: Record<string, number> = {};
  const before = f.get(name);
  for (const [key, v] of t.get(name) ?? []) {
    const k = second === undefined ? (v.labels[label] ?? '') : `${v.labels[label] ?? ''} ${v.labels[second] ?? ''}`;
    const n = v.total - (before?.get(key)?.total ?? 0);
    if (n !== 0) out[k] = (out[k] ?? 0) + n;
  }
  return out;
}

interface Ctx {
  readonly o: LiveBenchOptions;
  readonly run: string;
  readonly cp: ControlPlane;
  readonly pods: PodServer;
  readonly watch: PodWatch;
  readonly sampler: Sampler;
}

/** Busiest-2-s share of the probes of `ips` (all when undefined) in the last full period before `end`. */
async function alignment(c: Ctx, end: number, ips?: readonly string[]): Promise<number | null> {
  const from = end - c.o.periodMs;
  const byIp = await c.pods.times(from, ips);
  const share = busiestWindowShare(timesOf(byIp), from, c.o.periodMs, 2000);
  return share === null ? null : r3(share);
}

async function recreatePhase(c: Ctx): Promise<Record<string, unknown>> {
  const { o, run, cp, watch } = c;
  const ns = policyNamespace(o, run, 0);
  const keys = new Set<string>();
  for (let i = 0; i < o.pods; i += o.policies) keys.add(`${ns}/${podRef(o, run, i).name}`);
  const ips = [...watch.tracker.ips((k) => keys.has(k))];
  const flips0 = watch.tracker.falseFlips;
  const changes0 = watch.tracker.gateChanges;
  const before = await alignment(c, Date.now(), ips);
  const from = await c.sampler.snapshot();
  const sideFrom = await sideNow(c.pods);
  await cp.kube.delete(`${policiesPath(ns)}/${policyName(0)}`);
  for (let i = 0; i < 100 && (await cp.kube.call('GET', `${policiesPath(ns)}/${policyName(0)}`)).status !== 404; i++) await sleep(100);
  const deletedAt = Date.now();
  await sleep(2000); // the controller sees the delete and drops the targets before the policy returns
  await createWithRetry(cp.kube, policiesPath(ns), policyObject(o, run, 0));
  const createdAt = Date.now();
  log(`policy ${ns}/${policyName(0)} deleted and recreated (${ips.length} pods); observing ${o.recreateS} s`);
  await sleep(o.recreateS * 1000);
  const to = await c.sampler.snapshot();
  const sideTo = await sideNow(c.pods);
  const first = firstProbes(await c.pods.times(createdAt, ips), createdAt);
  return {
    pods: ips.length,
    deleted_to_recreated_s: r3((createdAt - deletedAt) / 1000),
    first_probe_after_recreate_s: { first: first.firstMs === null ? null : r3(first.firstMs / 1000), p50: first.p50Ms === null ? null : r3(first.p50Ms / 1000), last: first.lastMs === null ? null : r3(first.lastMs / 1000), pods_probed: first.pods },
    busiest_2s_share_before: before,
    busiest_2s_share_after: await alignment(c, Date.now(), ips),
    busiest_2s_share_all_pods_after: await alignment(c, Date.now()),
    false_flips: watch.tracker.falseFlips - flips0,
    gate_changes_seen: watch.tracker.gateChanges - changes0,
    ...phaseFigures({ from, to, side: { from: sideFrom, to: sideTo, loopDelaySinceFrom: true } }),
  };
}

function controllerArgs(c: Pick<Ctx, 'o' | 'cp'>): string[] {
  return ['--kubeconfig', c.cp.kubeconfigPath, '--identity', 'bench', '--metrics-addr', '127.0.0.1:0', '--metrics-auth', 'none',
    '--lease-namespace', 'default', '--allowed-probe-cidrs', c.cp.podNetwork ?? '', ...c.o.controllerArgs];
}

async function measure(c: Ctx, ctl: ControllerProcess, spawnedAt: number): Promise<Record<string, unknown>> {
  const { o, watch, sampler, pods } = c;
  const start = await sampler.snapshot();
  const sideStart = await sideNow(pods);
  await until('every gate True', () => watch.tracker.gateTrue >= o.pods, o.convergeTimeoutS * 1000,
    () => `${watch.tracker.gateTrue}/${o.pods} True, controller RSS ${mb(sampler.rss('controller'))} MB`);
  const convergedAt = Date.now();
  log(`every gate True after ${((convergedAt - spawnedAt) / 1000).toFixed(1)} s`);
  const converged = await sampler.snapshot();
  const sideConverged = await sideNow(pods);
  const rssAtConvergence = sampler.rss('controller');
  const changes0 = watch.tracker.gateChanges;
  const flips0 = watch.tracker.falseFlips;
  log(`steady state for ${o.durationS} s`);
  await sleep(o.durationS * 1000);
  const steadyEnd = await sampler.snapshot();
  const sideSteadyEnd = await sideNow(pods);
  const steady = {
    ...phaseFigures({ from: converged, to: steadyEnd, side: { from: sideConverged, to: sideSteadyEnd, loopDelaySinceFrom: true } }),
    probe_gaps_pods_side: probeGaps(await pods.times(converged.at), converged.at, steadyEnd.at),
    gate_changes_seen: watch.tracker.gateChanges - changes0,
    false_flips: watch.tracker.falseFlips - flips0,
    busiest_2s_share_all_pods: await alignment(c, steadyEnd.at),
    api_connections_now: sampler.peaks.apiConnectionsLast,
  };
  const recreate = o.recreateS > 0 ? await recreatePhase(c) : null;
  const end = await sampler.snapshot();
  const sideEnd = await sideNow(pods);
  return {
    all_gates_true_s: r3((convergedAt - spawnedAt) / 1000),
    convergence: phaseFigures({ from: start, to: converged, side: { from: sideStart, to: sideConverged, loopDelaySinceFrom: true } }),
    steady,
    recreate,
    whole_run: phaseFigures({ from: start, to: end, side: { from: sideStart, to: sideEnd, loopDelaySinceFrom: false } }),
    unhealthy_events: await unhealthyEvents(c.cp, spawnedAt),
    controller_rss_mb: { peak: mb(sampler.peaks.rss.controller), at_convergence: mb(rssAtConvergence), end: mb(sampler.rss('controller')) },
    apiserver_rss_mb: { peak: mb(sampler.peaks.rss.apiserver), end: mb(sampler.rss('apiserver')) },
    etcd_rss_mb: { peak: mb(sampler.peaks.rss.etcd), end: mb(sampler.rss('etcd')) },
    api_connections: { max: sampler.peaks.apiConnectionsMax, end: sampler.peaks.apiConnectionsLast },
    controller_log_lines: ctl.levels,
    metrics_scrape_errors: sampler.scrapeErrors,
  };
}

async function main(): Promise<void> {
  const o = liveBenchOptions(process.argv.slice(2));
  const run = Date.now().toString(36);
  const dir = path.join(os.tmpdir(), `outprobe-scale-live-${run}`);
  mkdirSync(dir, { recursive: true });
  const nodes = Math.ceil(o.pods / o.podsPerNode);
  const loadStart = os.loadavg().map(r3); // other work on the machine shares its CPUs
  log(`options ${JSON.stringify(o)}; ${nodes} kwok nodes; files in ${dir}`);
  const cp = await startControlPlane({ full: true, network: 'loopback', nodes, log, dir: path.join(dir, 'plane') });
  let pods: PodServer | undefined;
  let watch: PodWatch | undefined;
  let ctl: ControllerProcess | undefined;
  let sampler: Sampler | undefined;
  try {
    const prefix = /^(127\.\d+\.)/.exec(cp.podNetwork ?? '')?.[1];
    if (prefix === undefined) throw new Error(`expected a loopback pod network, got ${String(cp.podNetwork)}`);
    pods = await startPodServer(prefix, o.podServerNice);
    await installCrd(cp.kube);
    watch = watchPods(cp.kube, runLabel + '=' + run, new GateTracker(conditionType), log);
    const createS = await createObjects(cp, o, run, pods.port);
    log(`created ${o.namespaces} namespaces, ${o.policies} policies, ${o.pods} pods in ${createS.toFixed(1)} s (label ${policyLabel})`);
    const w = watch;
    await until('every pod Running with an IP', () => w.tracker.running >= o.pods, 900_000, () => `${w.tracker.running}/${o.pods} running`);
    const runningS = (Date.now() - t0) / 1000;
    log('every pod Running; starting outprobe');
    const spawnedAt = Date.now();
    ctl = startController(controllerArgs({ o, cp }), path.join(dir, 'controller.log'));
    const metricsPort = await ctl.metricsPort;
    const url = new URL(cp.server);
    const pid = (name: string): number => cp.components.find((c) => c.name === name)?.pid ?? -1;
    sampler = new Sampler({ pids: { controller: ctl.pid, apiserver: pid('kube-apiserver'), etcd: pid('etcd') }, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`, apiserver: { ip: url.hostname, port: Number(url.port) }, intervalMs: o.sampleS * 1000, log });
    sampler.start();
    const figures = await measure({ o, run, cp, pods, watch, sampler }, ctl, spawnedAt);
    await sampler.stop();
    const result = { bench: 'scale-live', pods: o.pods, policies: o.policies, namespaces: o.namespaces, period_s: o.periodMs / 1000, probe: o.probe, controller_args: o.controllerArgs,
      create_s: r3(createS), all_running_after_s: r3(runningS), ...figures,
      env: { node: process.version, cpus: os.cpus().length, mem_gb: Math.round(os.totalmem() / 1073741824), loadavg_start: loadStart, loadavg_end: os.loadavg().map(r3), date: new Date().toISOString(), pod_server_nice: niceOf(pods.pid) } };
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await sampler?.stop();
    await ctl?.stop();
    await watch?.stop();
    pods?.close();
    await cp.stop({ keepDir: o.keep });
    if (o.keep) log(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:scale:live: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
