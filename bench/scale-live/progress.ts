/**
 * How a phase that turns every gate True got there (issue 31 item 4): the
 * count of True gates on the driver's watch, sampled while the phase runs,
 * summarized as the seconds until the first True and until 10 %, 50 %, 90 %
 * and all of them, and the pace between 10 % and 90 %. The write ceiling and
 * the convergence are compared on the same terms: a convergence that starts
 * late (process start, LIST, Leases, first probes) and one that writes slowly
 * show differently.
 */

export interface ProgressSummary {
  readonly first_s: number | null;
  readonly p10_s: number | null;
  readonly p50_s: number | null;
  readonly p90_s: number | null;
  readonly all_s: number | null;
  /** Gates turned True per second between the 10 % and the 90 % mark. */
  readonly per_s_10_90: number | null;
  /** [s, True] every 5 s (the last sample too). */
  readonly series: readonly (readonly [number, number])[];
}

const r3 = (n: number): number => Math.round(n * 1000) / 1000;

/** `points`: [ms since the phase's start, gates True], in time order. */
export function summarizeProgress(points: readonly (readonly [number, number])[], total: number): ProgressSummary {
  const reached = (k: number): number | null => {
    for (const [t, n] of points) if (n >= k) return t;
    return null;
  };
  const s = (ms: number | null): number | null => (ms === null ? null : r3(ms / 1000));
  const at10 = reached(Math.ceil(total * 0.1));
  const at90 = reached(Math.ceil(total * 0.9));
  const series: [number, number][] = [];
  let next = 0;
  for (const [t, n] of points) {
    if (t >= next) {
      series.push([r3(t / 1000), n]);
      next = (Math.floor(t / 5000) + 1) * 5000;
    }
  }
  const last = points.at(-1);
  if (last !== undefined && series.at(-1)?.[0] !== r3(last[0] / 1000)) series.push([r3(last[0] / 1000), last[1]]);
  return {
    first_s: s(reached(1)),
    p10_s: s(at10),
    p50_s: s(reached(Math.ceil(total * 0.5))),
    p90_s: s(at90),
    all_s: s(reached(total)),
    per_s_10_90: at10 === null || at90 === null || at90 === at10 ? null : r3((Math.ceil(total * 0.9) - Math.ceil(total * 0.1)) / ((at90 - at10) / 1000)),
    series,
  };
}

/** Samples `count()` every `everyMs` from now until stopped. */
export function sampleProgress(count: () => number, everyMs = 250): { stop(total: number): ProgressSummary } {
  const start = Date.now();
  const points: [number, number][] = [[0, count()]];
  const timer = setInterval(() => { points.push([Date.now() - start, count()]); }, everyMs).unref();
  return {
    stop: (total) => {
      clearInterval(timer);
      points.push([Date.now() - start, count()]);
      return summarizeProgress(points, total);
    },
  };
}
