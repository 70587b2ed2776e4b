/**
 * The two phases that make pods fail (their HTTP readiness answers 503):
 *
 * - detection, after the steady state and the recreate: 1 % of the pods,
 *   spread evenly, fail at one moment; per pod, the time until the watch sees
 *   its gate False, and from the controller's verdict (its `transition` log
 *   line) to that; then they heal and the time until True again.
 * - urgency, during convergence: once the replicas' queued first-time gate
 *   writes reach `--urgency-queued`, pods whose gate is already True fail;
 *   the time from each verdict to its False landing, with the depth of the
 *   initial-write queue at the verdict (issue 17: "a False transition written
 *   within 1 s of its verdict at p99 even while 10,000 initial writes are
 *   queued").
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ControllerProcess, PodServer } from './children.ts';
import { detectionFigures, failCount, firstAtOrAfter, firstVerdict, quantiles, spreadPick, valueAt } from './detection.ts';
import type { DetectionFigures } from './detection.ts';
import { podRef } from './fixtures.ts';
import type { PodWatch } from './objects.ts';
import type { LiveBenchOptions } from './options.ts';
import { parseMetrics } from './prom.ts';
import { gaugeSum } from './sampler.ts';
import type { Replica } from './sampler.ts';

export interface FailCtx {
  readonly o: LiveBenchOptions;
  readonly run: string;
  readonly pods: PodServer;
  readonly watch: PodWatch;
  readonly controllers: readonly ControllerProcess[];
  readonly replicas: readonly Replica[];
  readonly log: (m: string) => void;
}

const r3 = (n: number): number => Math.round(n * 1000) / 1000;

/** Waits (bounded) until `done()` or `timeoutMs`; true when done. */
async function waitFor(done: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) return false;
    await sleep(50);
  }
  return true;
}

function ipsOf(c: FailCtx, keys: readonly string[]): string[] {
  return keys.map((k) => c.watch.tracker.ipOf(k)).filter((ip): ip is string => ip !== undefined);
}

/** Heals the pods and measures until each gate is True again (bounded). */
async function heal(c: FailCtx, keys: readonly string[]): Promise<Record<string, unknown>> {
  const t = c.watch.tracker;
  await c.pods.heal(ipsOf(c, keys));
  const healedAt = Date.now();
  const back = new Map<string, number>();
  await waitFor(() => {
    for (const k of keys) if (!back.has(k) && t.gateOf(k) === 'True') back.set(k, Date.now());
    return back.size === keys.length;
  }, c.o.detectTimeoutS * 1000);
  return { gates_true_again: back.size, heal_to_true: quantiles([...back.values()].map((at) => at - healedAt)) };
}

/** Detection figures of `keys`, failed at `failAt`, from the driver's watch and every replica's log. */
function figuresOf(c: FailCtx, keys: readonly string[], failAt: number): DetectionFigures {
  return detectionFigures(keys, failAt, c.watch.tracker.falseSeen, c.controllers.map((ctl) => ctl.failureVerdicts), c.controllers.map((ctl) => ctl.falseWritten));
}

/** The detection phase: `--fail-percent` of the pods, spread evenly, fail now. */
export async function detectionPhase(c: FailCtx): Promise<Record<string, unknown>> {
  const { o, run, watch } = c;
  const t = watch.tracker;
  const keys = spreadPick(o.pods, failCount(o.pods, o.failPercent)).map((i) => { const r = podRef(o, run, i); return `${r.namespace}/${r.name}`; });
  for (const k of keys) t.failing.add(k);
  const flips0 = t.falseFlips;
  const ips = ipsOf(c, keys);
  c.log(`detection: ${keys.length} pods (${o.failPercent} %) answer 503 from now on`);
  await c.pods.fail(ips);
  const failAt = Date.now();
  const allSeen = await waitFor(() => keys.every((k) => firstAtOrAfter(t.falseSeen.get(k), failAt) !== undefined), o.detectTimeoutS * 1000);
  const seenS = (Date.now() - failAt) / 1000;
  c.log(`detection: ${allSeen ? 'every' : 'not every'} failed pod's gate seen False after ${seenS.toFixed(1)} s; healing`);
  // After healing: a replica logs its False write when the answer reaches it, which can be after the watch showed it.
  const healed = await heal(c, keys);
  const figures = figuresOf(c, keys, failAt);
  return { ...figures, false_flips_other_pods: t.falseFlips - flips0, ...healed };
}

/** Queued first-time gate writes summed over the replicas (a fresh scrape of each). */
async function initialQueued(replicas: readonly Replica[]): Promise<number> {
  let sum = 0;
  await Promise.all(replicas.map(async (r) => {
    try {
      const res = await fetch(r.metricsUrl, { signal: AbortSignal.timeout(5000) });
      sum += gaugeSum(parseMetrics(await res.text()), 'outprobe_gate_write_queue', { urgency: 'initial' });
    } catch {
      // a missed scrape: this replica counts 0 this round
    }
  }));
  return sum;
}

/**
 * The urgency phase, run beside convergence until `converged()`: waits for
 * the initial-write queue to reach `--urgency-queued` with enough gates True,
 * fails that many True pods, and times verdict → False landed.
 */
export async function urgencyPhase(c: FailCtx, converged: () => boolean, spawnedAt: number): Promise<Record<string, unknown>> {
  const { o, watch } = c;
  const t = watch.tracker;
  const want = failCount(o.pods, o.failPercent);
  const depth: [number, number][] = [];
  let maxDepth = 0;
  let keys: string[] = [];
  let failAt: number | undefined;
  let depthAtFail = 0;
  const deadline = Date.now() + o.convergeTimeoutS * 1000;
  while (Date.now() < deadline) {
    const d = await initialQueued(c.replicas);
    depth.push([Date.now(), d]);
    maxDepth = Math.max(maxDepth, d);
    if (failAt === undefined) {
      if (converged()) break; // never deep enough
      const trueNow = d >= o.urgencyQueued ? t.trueKeys() : [];
      if (trueNow.length >= want) {
        keys = trueNow.slice(0, want);
        for (const k of keys) t.failing.add(k);
        await c.pods.fail(ipsOf(c, keys));
        failAt = Date.now();
        depthAtFail = d;
        c.log(`urgency: ${keys.length} pods with gate True fail while ${d} first-time gate writes are queued`);
      }
    } else if (keys.every((k) => firstAtOrAfter(t.falseSeen.get(k), failAt ?? 0) !== undefined) || Date.now() - failAt > o.detectTimeoutS * 1000) break;
    await sleep(250);
  }
  if (failAt === undefined) {
    c.log(`urgency: not triggered (the initial-write queue reached ${maxDepth}, below ${o.urgencyQueued}, or fewer than ${want} gates were True)`);
    return { triggered: false, queued_initial_max: maxDepth };
  }
  const at = failAt;
  // How deep the initial-write queue was when each verdict was made.
  const verdicts = c.controllers.map((ctl) => ctl.failureVerdicts);
  const atVerdicts: number[] = [];
  for (const k of keys) {
    const v = firstVerdict(verdicts, k, at);
    const q = v === undefined ? undefined : valueAt(depth, v);
    if (q !== undefined) atVerdicts.push(q);
  }
  atVerdicts.sort((a, b) => a - b);
  // After healing: a replica logs its False write when the answer reaches it, which can be after the watch showed it.
  const healed = await heal(c, keys);
  const figures = figuresOf(c, keys, at);
  c.log(`urgency: verdict → gate False written p50 ${String(figures.verdict_to_written?.p50_s)} s, p99 ${String(figures.verdict_to_written?.p99_s)} s; seen on the watch p50 ${String(figures.verdict_to_write.p50_s)} s, p99 ${String(figures.verdict_to_write.p99_s)} s; healed`);
  return {
    triggered: true,
    fail_after_start_s: r3((at - spawnedAt) / 1000),
    queued_initial_at_fail: depthAtFail,
    queued_initial_max: maxDepth,
    queued_initial_at_verdicts: atVerdicts.length === 0 ? null : { min: atVerdicts[0], p50: atVerdicts[Math.floor(atVerdicts.length / 2)], max: atVerdicts.at(-1) },
    ...figures,
    ...healed,
    queue_depth_series: depth.filter((_, i) => i % 4 === 0).map(([time, d]) => [r3((time - at) / 1000), d]),
  };
}
