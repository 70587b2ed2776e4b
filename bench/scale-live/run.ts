/**
 * `npm run bench:scale -- --pods N [--replicas R]` (also `bench:scale:live`):
 * R outprobe replicas (the real src/main.ts, each its own process, sharded by
 * their Leases) against the local control plane with kwok pods on the
 * loopback pod network, every pod gated and probed for real. See
 * bench/README.md "bench:scale" for what each figure counts.
 *
 * Phases: create pods and policies; start the replicas and wait until every
 * gate is True (convergence; with --urgency-queued, some pods fail while the
 * first-time writes are queued); a steady-state window; delete and recreate
 * one policy and watch its pods; make 1 % of the pods fail and time their
 * detection, then heal them. The last stdout line is one JSON object.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { installCrd } from '../../test/integration/support/controller.ts';
import { startControlPlane } from '../../test/support/cluster/index.ts';
import type { ControlPlane } from '../../test/support/cluster/index.ts';
import { busiestWindowShare, firstProbes, timesOf } from './arrivals.ts';
import { createMemoryCgroup, heapLimitsIn } from './cgroup.ts';
import type { MemoryCgroup } from './cgroup.ts';
import { runEngine, startController, startPodServer } from './children.ts';
import type { ControllerProcess, PodServer, PodServerStats } from './children.ts';
import { detectionPhase, urgencyPhase } from './phases.ts';
import { addNodes, nodesPerNetwork } from './plane.ts';
import { probeGaps, unhealthySummary, unhealthyTimeline } from './failures.ts';
import { netstatIncrease, readNetstat } from './netstat.ts';
import type { NetstatCounters } from './netstat.ts';
import { processCpuSeconds } from '../probes/system.ts';
import { conditionType, namespaceObject, podRef, policyLabel, policyName, policyNamespace, policyObject, runLabel } from './fixtures.ts';
import { GateTracker } from './gates.ts';
import { createWithRetry, watchPods } from './objects.ts';
import { bringUpPods } from './bring-up.ts';
import { sampleProgress } from './progress.ts';
import type { ProgressSummary } from './progress.ts';
import { resetGates, writeCeiling } from './ceiling-phase.ts';
import type { CeilingCtx } from './ceiling-phase.ts';
import { statusLabel, statusLabelValue } from './pod-status.ts';
import type { PodWatch } from './objects.ts';
import { liveBenchOptions } from './options.ts';
import type { LiveBenchOptions } from './options.ts';
import { bucketIncrease, increase, summarize } from './prom.ts';
import type { Totals } from './prom.ts';
import { Sampler } from './sampler.ts';
import { vantageArgs } from './vantage.ts';
import type { ReplicaGauges, Snapshot } from './sampler.ts';

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

async function createPolicies(cp: ControlPlane, o: LiveBenchOptions, run: string): Promise<void> {
  for (let n = 0; n < o.namespaces; n++) await createWithRetry(cp.kube, '/api/v1/namespaces', namespaceObject(run, n));
  for (let j = 0; j < o.policies; j++) await createWithRetry(cp.kube, policiesPath(policyNamespace(o, run, j)), policyObject(o, run, j));
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

const mutating = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

const meanOf = (sum: number, count: number): number | null => (count > 0 ? Math.round((sum / count) * 1e4) / 1e4 : null);

/** Figures of one phase, from two snapshots. Counters and CPU are summed over the replicas. */
function phaseFigures(w: Window): Record<string, unknown> {
  const f = w.from.totals;
  const t = w.to.totals;
  const probes = increase(f, t, 'outprobe_probes_total');
  const seconds = (w.to.at - w.from.at) / 1000;
  const controllerCpu = w.to.replicaCpu.reduce((a, c, i) => a + c - (w.from.replicaCpu[i] ?? 0), 0);
  const planeCpu = (name: string): number => (w.to.planeCpu[name] ?? 0) - (w.from.planeCpu[name] ?? 0);
  const byResult = (r: string): number => increase(f, t, 'outprobe_probes_total', { result: r });
  const loop = summarize(bucketIncrease(f, t, 'outprobe_event_loop_delay_seconds'));
  const lag = summarize(bucketIncrease(f, t, 'outprobe_probe_schedule_lag_seconds'));
  const took = summarize(bucketIncrease(f, t, 'outprobe_probe_duration_seconds'));
  const gateWrites = byLabel(f, t, 'outprobe_gate_writes_total', 'result');
  const wait = (name: string): number => (w.to.planeWait[name] ?? 0) - (w.from.planeWait[name] ?? 0);
  const ours = meanOf(increase(f, t, 'outprobe_api_request_duration_seconds_sum', { verb: 'PATCH', resource: 'pods/status' }), increase(f, t, 'outprobe_api_request_duration_seconds_count', { verb: 'PATCH', resource: 'pods/status' }));
  const server = (key: string): number | null => meanOf((w.to.apiserver.get(`${key}_sum`) ?? 0) - (w.from.apiserver.get(`${key}_sum`) ?? 0), (w.to.apiserver.get(`${key}_count`) ?? 0) - (w.from.apiserver.get(`${key}_count`) ?? 0));
  const apiRequests = byLabel(f, t, 'outprobe_api_requests_total', 'verb', 'resource');
  const apiWrites = Object.entries(apiRequests).filter(([k]) => mutating.has(k.split(' ')[0] ?? '')).reduce((a, [, n]) => a + n, 0);
  return {
    seconds: r3(seconds),
    probes,
    probes_per_s: r3(probes / seconds),
    probes_success: byResult('success'),
    probes_failure: byResult('failure'),
    probes_errored: byResult('errored'),
    probes_voided: byResult('voided'),
    controller_cpu_s: r3(controllerCpu),
    controller_cpu_us_per_probe: probes === 0 ? null : Math.round((controllerCpu / probes) * 1e6),
    controller_cpu_s_by_replica: w.to.replicaCpu.map((c, i) => r3(c - (w.from.replicaCpu[i] ?? 0))),
    apiserver_cpu_s: r3(planeCpu('kube-apiserver')),
    apiserver_cpu_cores: r3(planeCpu('kube-apiserver') / seconds),
    etcd_cpu_s: r3(planeCpu('etcd')),
    plane_cpu_cores: Object.fromEntries(Object.keys(w.to.planeCpu).map((n) => [n, r3(planeCpu(n) / seconds)])),
    // Threads runnable but waiting for a CPU, on average over the phase (schedstat): > 0 means the process wanted more CPU than it got.
    cpu_wait_threads: {
      replicas: w.to.replicaWait.map((x, i) => r3((x - (w.from.replicaWait[i] ?? 0)) / seconds)),
      ...Object.fromEntries(Object.keys(w.to.planeWait).map((n) => [n, r3(wait(n) / seconds)])),
    },
    // Mean latency of a gate write as outprobe timed it, and as kube-apiserver and etcd timed their part of it.
    gate_write_latency_mean_s: {
      outprobe: ours,
      apiserver: server('patch_pod_status'),
      // etcd's latency for pods, by operation (its label values differ between versions: every one seen is listed).
      etcd_pods: Object.fromEntries([...w.to.apiserver.keys()].filter((k) => k.startsWith('etcd_pods_') && k.endsWith('_sum')).map((k) => k.slice(0, -4)).map((k) => [k.slice(10), server(k)])),
    },
    event_post_latency_mean_s_apiserver: server('post_events'),
    event_loop_delay_p99_s_le: loop.p99,
    event_loop_delay_max_s_between: [loop.maxAtLeast, loop.maxBound],
    schedule_lag_p99_s_le: lag.p99,
    schedule_lag_max_s_between: [lag.maxAtLeast, lag.maxBound],
    probe_duration_p99_s_le: took.p99,
    probe_duration_max_s_between: [took.maxAtLeast, took.maxBound],
    gate_writes: gateWrites,
    gate_writes_per_min: r3((Object.values(gateWrites).reduce((a, n) => a + n, 0) / seconds) * 60),
    gate_repairs: increase(f, t, 'outprobe_gate_repairs_total'),
    gate_writes_throttled: increase(f, t, 'outprobe_gate_write_throttled_total'),
    api_requests: apiRequests,
    api_writes_per_min: r3((apiWrites / seconds) * 60),
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
  readonly controllers: readonly ControllerProcess[];
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

function controllerArgs(c: Pick<Ctx, 'o' | 'cp'>, podNetworks: readonly string[]): string[] {
  // Host processes with no Pod of their own: membership declared (ADR 0036's development mode), and no peer listener address to collide.
  return ['--kubeconfig', c.cp.kubeconfigPath, '--metrics-addr', '127.0.0.1:0', '--metrics-auth', 'none', '--membership-proof', 'none', '--peer-addr', '127.0.0.1:0', '--debug-addr', '127.0.0.1:0',
    '--lease-namespace', 'default', '--allowed-probe-cidrs', podNetworks.join(','), ...c.o.controllerArgs];
}

/** RSS and heap of each replica, in MB. */
function memoryFigures(g: readonly ReplicaGauges[]): Record<string, unknown>[] {
  return g.map((r) => ({ identity: r.identity, rss_mb: mb(r.rssBytes), heap_used_mb: mb(r.heapUsedBytes), heap_total_mb: mb(r.heapTotalBytes), external_mb: mb(r.externalBytes) }));
}

async function measure(c: Ctx, spawnedAt: number, progress: { stop(total: number): ProgressSummary }): Promise<Record<string, unknown>> {
  const { o, watch, sampler, pods } = c;
  const start = await sampler.snapshot();
  const sideStart = await sideNow(pods);
  let convergedFlag = false;
  const failCtx = { o, run: c.run, pods, watch, controllers: c.controllers, replicas: sampler.replicas, log };
  const urgency = o.urgencyQueued > 0 ? urgencyPhase(failCtx, () => convergedFlag, spawnedAt) : undefined;
  // The gate-write path over the convergence (ADR 0022), summed over the replicas at each scrape: where the writes waited.
  const writePath: (readonly number[])[] = [];
  const writePathTimer = setInterval(() => {
    writePath.push([r3((Date.now() - spawnedAt) / 1000), watch.tracker.gateTrue, sampler.gaugeSum('outprobe_gate_write_inflight_limit'), sampler.gaugeSum('outprobe_gate_write_inflight'),
      sampler.gaugeSum('outprobe_gate_write_queue', { urgency: 'initial' })]);
  }, o.sampleS * 1000).unref();
  await until('every gate True', () => watch.tracker.gateTrue >= o.pods, o.convergeTimeoutS * 1000,
    () => `${watch.tracker.gateTrue}/${o.pods} True, replica RSS ${sampler.replicaRss().map(mb).join('/')} MB`);
  clearInterval(writePathTimer);
  convergedFlag = true;
  const convergedAt = Date.now();
  const convergenceProgress = progress.stop(o.pods);
  log(`every gate True after ${((convergedAt - spawnedAt) / 1000).toFixed(1)} s`);
  const converged = await sampler.snapshot();
  const sideConverged = await sideNow(pods);
  const memoryAtConvergence = memoryFigures(await sampler.gauges());
  const urgencyFigures = urgency === undefined ? null : await urgency;
  if (o.settleS > 0) {
    // The convergence's tail (its queued Events, one per gate turned True) drains before the steady window (issue 31 item 3).
    log(`settling for ${o.settleS} s before the steady window`);
    await sleep(o.settleS * 1000);
  }
  const steadyFrom = o.settleS > 0 ? await sampler.snapshot() : converged;
  const sideSteadyFrom = o.settleS > 0 ? await sideNow(pods) : sideConverged;
  const changes0 = watch.tracker.gateChanges;
  const flips0 = watch.tracker.falseFlips;
  log(`steady state for ${o.durationS} s`);
  await sleep(o.durationS * 1000);
  const steadyEnd = await sampler.snapshot();
  const sideSteadyEnd = await sideNow(pods);
  const memoryAfterSteady = memoryFigures(await sampler.gauges());
  const steady = {
    ...phaseFigures({ from: steadyFrom, to: steadyEnd, side: { from: sideSteadyFrom, to: sideSteadyEnd, loopDelaySinceFrom: true } }),
    probe_gaps_pods_side: probeGaps(await pods.times(steadyFrom.at), steadyFrom.at, steadyEnd.at),
    gate_changes_seen: watch.tracker.gateChanges - changes0,
    false_flips: watch.tracker.falseFlips - flips0,
    busiest_2s_share_all_pods: await alignment(c, steadyEnd.at),
    api_connections_now: sampler.peaks.apiConnectionsLast,
  };
  const recreate = o.recreateS > 0 ? await recreatePhase(c) : null;
  const detection = o.failPercent > 0 ? await detectionPhase(failCtx) : null;
  const end = await sampler.snapshot();
  const sideEnd = await sideNow(pods);
  return {
    all_gates_true_s: r3((convergedAt - spawnedAt) / 1000),
    convergence_progress: convergenceProgress,
    // [s after spawn, gates True, write limit, writes in flight, initial writes queued], summed over the replicas' last scrapes.
    convergence_write_path: writePath,
    memory_after_convergence: memoryAtConvergence,
    memory_after_steady: memoryAfterSteady,
    urgency: urgencyFigures,
    convergence: phaseFigures({ from: start, to: converged, side: { from: sideStart, to: sideConverged, loopDelaySinceFrom: true } }),
    steady,
    recreate,
    detection,
    whole_run: { ...phaseFigures({ from: start, to: end, side: { from: sideStart, to: sideEnd, loopDelaySinceFrom: false } }), false_flips: watch.tracker.falseFlips, false_flip_pods: watch.tracker.falseFlipLog },
    unhealthy_events: await unhealthyEvents(c.cp, spawnedAt),
    controller_rss_mb: { peak: sampler.peaks.replicaRss.map(mb), end: sampler.replicaRss().map(mb) },
    plane_rss_mb: { peak: Object.fromEntries(Object.entries(sampler.peaks.planeRss).map(([k, v]) => [k, mb(v)])), end: sampler.planeRssMb() },
    api_connections: { max: sampler.peaks.apiConnectionsMax, end: sampler.peaks.apiConnectionsLast },
    controller_log_lines: c.controllers.map((ctl) => ctl.levels),
    metrics_scrape_errors: sampler.scrapeErrors,
  };
}

/** The headline figures (issue 17), first in the JSON line; everything else follows. */
function headline(o: LiveBenchOptions, f: Record<string, unknown>, ceiling: Record<string, unknown> | null): Record<string, unknown> {
  const ceilingS = typeof ceiling?.['all_gates_true_s'] === 'number' ? ceiling['all_gates_true_s'] : null;
  const ceilingProgress = ceiling?.['progress'] as ProgressSummary | undefined;
  const convergenceProgress = f['convergence_progress'] as ProgressSummary | undefined;
  const phase = (name: string): Record<string, unknown> => (f[name] as Record<string, unknown> | null) ?? {};
  const conv = phase('convergence');
  const steady = phase('steady');
  const det = f['detection'] as { detection?: unknown; verdict_to_write?: unknown; verdict_to_written?: unknown } | null;
  const urg = f['urgency'] as { verdict_to_write?: unknown; verdict_to_written?: unknown; queued_initial_at_verdicts?: unknown } | null;
  const mem = f['memory_after_convergence'] as { rss_mb: number | null; heap_used_mb: number | null }[];
  return {
    pods: o.pods,
    replicas: o.replicas,
    all_gates_true_s: f['all_gates_true_s'],
    // Issue 31 item 4: the convergence over the plane's own pace for the same writes, measured in this run on the same pods.
    write_ceiling_s: ceilingS,
    convergence_over_ceiling: ceilingS === null || ceilingS === 0 ? null : r3(Number(f['all_gates_true_s']) / ceilingS),
    // Where the difference is: a late start (first True) or a slower pace (gates True per second between 10 % and 90 %).
    first_true_s: { ceiling: ceilingProgress?.first_s ?? null, convergence: convergenceProgress?.first_s ?? null },
    gates_per_s_10_90: { ceiling: ceilingProgress?.per_s_10_90 ?? null, convergence: convergenceProgress?.per_s_10_90 ?? null },
    rss_mb_per_replica: mem.map((m) => m.rss_mb),
    heap_used_mb_per_replica: mem.map((m) => m.heap_used_mb),
    controller_cpu_us_per_probe: { convergence: conv['controller_cpu_us_per_probe'], steady: steady['controller_cpu_us_per_probe'] },
    apiserver_cpu_cores: { convergence: conv['apiserver_cpu_cores'], steady: steady['apiserver_cpu_cores'] },
    steady_gate_writes_per_min: steady['gate_writes_per_min'],
    steady_api_writes_per_min: steady['api_writes_per_min'],
    detection_s: det?.detection ?? null,
    verdict_to_write_s: det?.verdict_to_write ?? null,
    verdict_to_written_s: det?.verdict_to_written ?? null,
    false_flips: { steady: steady['false_flips'], recreate: (f['recreate'] as { false_flips?: number } | null)?.false_flips ?? null, whole_run: (f['whole_run'] as { false_flips: number }).false_flips },
    urgency_verdict_to_write_s: urg?.verdict_to_write ?? null,
    urgency_verdict_to_written_s: urg?.verdict_to_written ?? null,
    urgency_queued_initial_at_verdicts: urg?.queued_initial_at_verdicts ?? null,
  };
}

/** The plane's processes and the pod server, by name: what the sampler and the write ceiling take CPU from. */
function planePids(cp: ControlPlane, podServerPid: number): Record<string, number> {
  return Object.fromEntries([...cp.components.map((c) => [c.name, c.pid] as const), ['pod-server', podServerPid] as const]);
}

/**
 * Issue 31 item 3: the replicas stopped, outprobe's engine alone (engine.ts) probes the same
 * pods for `--engine-s`; the steady controller CPU per probe over the engine's is the ratio.
 */
async function engineAlone(o: LiveBenchOptions, dir: string, controllers: readonly ControllerProcess[], port: number, ips: readonly string[], steadyUs: number | null): Promise<Record<string, unknown>> {
  if (o.engineS === 0) return {};
  await Promise.all(controllers.map((ctl) => ctl.stop()));
  log(`replicas stopped; the probe engine alone on the same ${ips.length} pods for ${o.engineS} s (after one period to spread)`);
  const file = path.join(dir, 'engine.json');
  writeFileSync(file, JSON.stringify({ ips, port, probe: o.probe, periodMs: o.periodMs, seconds: o.engineS }));
  const engine = await runEngine(file, (process.env['BENCH_ENGINE_NODE_ARGS'] ?? '').split(' ').filter((a) => a !== ''));
  const engineUs = typeof engine['cpu_us_per_probe'] === 'number' ? engine['cpu_us_per_probe'] : null;
  const ratio = steadyUs === null || engineUs === null || engineUs === 0 ? null : r3(steadyUs / engineUs);
  log(`engine alone: ${JSON.stringify(engine)}; controller ${String(steadyUs)} us / engine ${String(engineUs)} us per probe = ${String(ratio)} (target <= 1.5)`);
  return { controller_over_engine_cpu_per_probe: ratio, engine_cpu_us_per_probe: engineUs, engine_alone: engine };
}

async function main(): Promise<void> {
  const o = liveBenchOptions(process.argv.slice(2));
  const run = Date.now().toString(36);
  const dir = path.join(os.tmpdir(), `outprobe-scale-live-${run}`);
  mkdirSync(dir, { recursive: true });
  const nodes = Math.ceil(o.pods / o.podsPerNode);
  const loadStart = os.loadavg().map(r3); // other work on the machine shares its CPUs
  log(`options ${JSON.stringify(o)}; ${nodes} kwok nodes; files in ${dir}`);
  // --pod-status bench: kwok keeps the nodes alive and leaves the pods' status to the driver (bring-up.ts).
  const kwokOptions = o.podStatus === 'bench' ? { kwokOptions: { disregardStatusWithLabelSelector: `${statusLabel}=${statusLabelValue}` } } : {};
  const cp = await startControlPlane({ full: true, network: 'loopback', nodes: Math.min(nodes, nodesPerNetwork), log, dir: path.join(dir, 'plane'), ...kwokOptions });
  // Stopped by a signal, the run never reaches its finally: the plane's own
  // handler (registered first, so it runs first) has killed the plane, the
  // replicas and the pod server die with this process (setpriv --pdeathsig);
  // what is left is the run's files, a few hundred MB of etcd data and logs.
  const dropFiles = (): void => { if (!o.keep) rmSync(dir, { recursive: true, force: true }); };
  process.once('SIGTERM', dropFiles);
  process.once('SIGINT', dropFiles);
  let pods: PodServer | undefined;
  let watch: PodWatch | undefined;
  const controllers: ControllerProcess[] = [];
  let sampler: Sampler | undefined;
  let release = (): void => undefined;
  let line: string | undefined;
  const cgroups: MemoryCgroup[] = [];
  let replicaHeap: { heap_limit_mb: number; young_generation_max_mb: number } | undefined;
  try {
    if (!/^127\.\d+\.0\.0\/16$/.test(cp.podNetwork ?? '')) throw new Error(`expected a loopback pod network, got ${String(cp.podNetwork)}`);
    const nets = await addNodes(cp, nodes, log);
    release = (): void => { nets.release(); };
    pods = await startPodServer(nets.prefixes, o.podServerNice);
    await installCrd(cp.kube);
    watch = watchPods(cp.kube, runLabel + '=' + run, new GateTracker(conditionType), log);
    await createPolicies(cp, o, run);
    const upFrom = Date.now();
    const up = await bringUpPods(cp.kube, o, run, pods.port, nets.prefixes);
    const createS = up.seconds;
    log(`created ${o.namespaces} namespaces, ${o.policies} policies, ${o.pods} pods${o.podStatus === 'bench' ? ' and their Running status' : ''} in ${createS.toFixed(1)} s (label ${policyLabel})`);
    const w = watch;
    await until('every pod Running with an IP', () => w.tracker.running >= o.pods, Math.max(900_000, o.pods * 60), () => `${w.tracker.running}/${o.pods} running`);
    const runningS = (Date.now() - t0) / 1000;
    const bringUp = { pod_status_by: o.podStatus, seconds: r3((Date.now() - upFrom) / 1000), pods_per_s: r3(o.pods / ((Date.now() - upFrom) / 1000)), status_writes: up.statusWrites };
    log(`every pod Running with an IP ${bringUp.seconds} s after the first create (${bringUp.pods_per_s} pods/s, status by ${o.podStatus})`);
    const ceilingCtx: CeilingCtx = { cp, o, run, watch: w, plane: planePids(cp, pods.pid), log, until };
    const ceiling = o.writeCeiling > 0 ? await writeCeiling(ceilingCtx) : null;
    if (ceiling !== null && o.ceilingOnly) {
      line = JSON.stringify({ bench: 'scale', mode: 'write-ceiling', pods: o.pods, ...ceiling, kwok_nodes: nodes, create_s: r3(createS), all_running_after_s: r3(runningS), bring_up: bringUp,
        env: { node: process.version, cpus: os.cpus().length, loadavg_start: loadStart, loadavg_end: os.loadavg().map(r3), date: new Date().toISOString() } });
      return;
    }
    const reset = ceiling === null ? null : await resetGates(ceilingCtx);
    log(`every pod Running; starting ${o.replicas} outprobe replica(s)`);
    const spawnedAt = Date.now();
    const progress = sampleProgress(() => w.tracker.gateTrue);
    const args = [...controllerArgs({ o, cp }, nets.cidrs), ...(await vantageArgs(cp, dir, o.vantageCount))];
    if (o.replicaMemoryLimitMb !== undefined) {
      for (let r = 0; r < o.replicas; r++) cgroups.push(createMemoryCgroup(`outprobe-bench-${run}-${r}`, o.replicaMemoryLimitMb * 1048576));
      replicaHeap = heapLimitsIn(cgroups[0], o.controllerNodeArgs);
      log(`replicas in memory cgroups of ${o.replicaMemoryLimitMb} MiB: Node picks a heap limit of ${replicaHeap.heap_limit_mb} MB and a young generation of up to ${replicaHeap.young_generation_max_mb} MB`);
    } else replicaHeap = heapLimitsIn(undefined, o.controllerNodeArgs);
    for (let r = 0; r < o.replicas; r++) controllers.push(startController(`bench-${r}`, args, path.join(dir, `controller-bench-${r}.log`), o.controllerNodeArgs, cgroups[r]));
    const ports = await Promise.all(controllers.map((ctl) => ctl.metricsPort));
    const url = new URL(cp.server);
    const plane = planePids(cp, pods.pid);
    sampler = new Sampler({
      replicas: controllers.map((ctl, i) => ({ identity: ctl.identity, pid: ctl.pid, metricsUrl: `http://127.0.0.1:${ports[i] ?? 0}/metrics` })),
      plane, apiserver: { ip: url.hostname, port: Number(url.port) }, intervalMs: o.sampleS * 1000, log,
      apiserverMetrics: async () => String((await cp.kube.call('GET', '/metrics')).body),
    });
    sampler.start();
    const figures = await measure({ o, run, cp, pods, watch, sampler, controllers }, spawnedAt, progress);
    await sampler.stop();
    const engine = await engineAlone(o, dir, controllers, pods.port, [...watch.tracker.ips()], (figures['steady'] as { controller_cpu_us_per_probe?: number | null }).controller_cpu_us_per_probe ?? null);
    const result = { ...headline(o, figures, ceiling), ...engine, bench: 'scale', vantage_count: o.vantageCount, policies: o.policies, namespaces: o.namespaces, period_s: o.periodMs / 1000, probe: o.probe, failure_threshold: o.failureThreshold ?? null, controller_args: o.controllerArgs,
      controller_node_args: o.controllerNodeArgs, replica_memory_limit_mb: o.replicaMemoryLimitMb ?? null, replica_heap_limits: replicaHeap,
      replica_cgroup_peak_mb: cgroups.map((c) => { const b = c.peakBytes(); return b === undefined ? null : Math.round(b / 1048576); }),
      replica_oom_kills: cgroups.map((c) => c.oomKills() ?? null),
      kwok_nodes: nodes, pod_networks: nets.cidrs, create_s: r3(createS), all_running_after_s: r3(runningS), bring_up: bringUp, write_ceiling: ceiling, gate_reset: reset, ...figures,
      env: { node: process.version, cpus: os.cpus().length, mem_gb: Math.round(os.totalmem() / 1073741824), loadavg_start: loadStart, loadavg_end: os.loadavg().map(r3), date: new Date().toISOString(), pod_server_nice: niceOf(pods.pid) } };
    line = JSON.stringify(result);
  } finally {
    await sampler?.stop();
    await Promise.all(controllers.map((ctl) => ctl.stop()));
    for (const c of cgroups) c.remove();
    await watch?.stop();
    pods?.close();
    await cp.stop({ keepDir: o.keep });
    release();
    process.removeListener('SIGTERM', dropFiles);
    process.removeListener('SIGINT', dropFiles);
    if (o.keep) log(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
    // The last stdout line, after everything was stopped (also for --write-ceiling, which returns early).
    if (line !== undefined) process.stdout.write(`${line}\n`);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:scale: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
