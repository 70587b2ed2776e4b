/**
 * The write-ceiling phase of `bench:scale` (issue 31 item 4), run on the
 * same plane and the same pods as the convergence, before it:
 *
 * 1. a bare writer (write-ceiling.ts, a process of its own) writes every
 *    pod's gate condition True exactly as a replica does, `--write-ceiling`
 *    in flight, nothing probing: timed from its spawn to the last True on the
 *    driver's watch, as the convergence is timed from the replicas' spawn;
 * 2. the driver removes the condition from every pod again (a strategic-merge
 *    `$patch: delete` of pods/status), so the replicas then find the pods as
 *    the ceiling found them: the same objects, of the same size, each needing
 *    the same one write.
 *
 * `convergence_over_ceiling` (run.ts) is the convergence's seconds over the
 * ceiling's.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { processCpuSeconds } from '../probes/system.ts';
import type { ControlPlane } from '../../test/support/cluster/index.ts';
import { runWriteCeiling } from './children.ts';
import { conditionType, podRef, runLabel } from './fixtures.ts';
import { callWithRetry, forEachBounded } from './objects.ts';
import type { PodWatch } from './objects.ts';
import type { LiveBenchOptions } from './options.ts';
import { conditionRemoval } from './pod-status.ts';
import { sampleProgress } from './progress.ts';

export interface CeilingCtx {
  readonly cp: ControlPlane;
  readonly o: LiveBenchOptions;
  readonly run: string;
  readonly watch: PodWatch;
  /** The plane's processes and the pod server by name, whose CPU the phase reports. */
  readonly plane: Readonly<Record<string, number>>;
  readonly log: (m: string) => void;
  readonly until: (what: string, cond: () => boolean, timeoutMs: number, progress: () => string) => Promise<void>;
}

/** Seconds of quiet before the ceiling and before the replicas start alike (the previous phase's watch events drain). */
export const quietS = 5;

const r3 = (n: number): number => Math.round(n * 1000) / 1000;

/** Every gate written True by the bare writer, timed to the last True on the driver's watch, with each plane process's CPU over that time. */
export async function writeCeiling(c: CeilingCtx): Promise<Record<string, unknown>> {
  const { o, watch } = c;
  const procs = Object.entries(c.plane);
  const cpu = (): Map<string, number> => new Map(procs.map(([name, pid]) => [name, processCpuSeconds(pid)]));
  await sleep(quietS * 1000);
  c.log(`write ceiling: every gate True from a bare writer, ${o.writeCeiling} in flight`);
  const before = cpu();
  const start = Date.now();
  const progress = sampleProgress(() => watch.tracker.gateTrue);
  const writer = await runWriteCeiling(c.cp.kubeconfigPath, `${runLabel}=${c.run}`, o.writeCeiling);
  await c.until('every gate True (write ceiling)', () => watch.tracker.gateTrue >= o.pods, o.convergeTimeoutS * 1000, () => `${watch.tracker.gateTrue}/${o.pods} True`);
  const seenS = (Date.now() - start) / 1000;
  const summary = progress.stop(o.pods);
  const after = cpu();
  const used = Object.fromEntries(procs.map(([name]) => [name, r3((after.get(name) ?? 0) - (before.get(name) ?? 0))]));
  const writes = Number(writer['writes']);
  const apiserver = used['kube-apiserver'] ?? 0;
  c.log(`write ceiling: every gate True seen after ${seenS.toFixed(1)} s (the writer's own count: ${String(writer['seconds'])} s)`);
  return {
    all_gates_true_s: r3(seenS), inflight: o.writeCeiling, writer, plane_cpu_s: used, plane_cpu_cores: Object.fromEntries(Object.entries(used).map(([k, v]) => [k, r3(v / seenS)])),
    apiserver_cpu_ms_per_write: writes > 0 ? r3((apiserver * 1000) / writes) : null,
    progress: summary,
  };
}

/** Removes the gate condition from every pod and waits until the watch shows none; the tracker's counts start over. */
export async function resetGates(c: CeilingCtx): Promise<{ seconds: number }> {
  const { o, run, cp, watch } = c;
  const start = Date.now();
  const patch = conditionRemoval(conditionType);
  await forEachBounded(o.pods, o.createConcurrency, async (i) => {
    const ref = podRef(o, run, i);
    const path = `/api/v1/namespaces/${ref.namespace}/pods/${ref.name}/status`;
    const r = await callWithRetry(cp.kube, 'PATCH', path, patch, 'application/strategic-merge-patch+json');
    if (r.status !== 200) throw new Error(`PATCH ${path}: HTTP ${r.status}: ${JSON.stringify(r.body)}`);
  });
  await c.until('every gate condition removed', () => watch.tracker.withGate === 0, o.convergeTimeoutS * 1000, () => `${watch.tracker.withGate}/${o.pods} still carry it`);
  watch.tracker.resetCounts();
  const seconds = r3((Date.now() - start) / 1000);
  c.log(`gate conditions removed from every pod in ${seconds} s; the replicas converge on the same pods`);
  await sleep(quietS * 1000);
  return { seconds };
}
