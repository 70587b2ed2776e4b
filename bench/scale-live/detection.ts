/**
 * Detection figures of a run that makes some pods fail: which pods fail,
 * and, per failed pod, the time from the failure (or from the controller's
 * verdict, its `transition` log line) to the gate False seen on the
 * benchmark's pod watch.
 */

const r3 = (n: number): number => Math.round(n * 1000) / 1000;

/** `k` indices of [0, n), spread evenly (i·n/k rounded down), distinct. */
export function spreadPick(n: number, k: number): number[] {
  const count = Math.max(0, Math.min(n, k));
  const out: number[] = [];
  for (let j = 0; j < count; j++) out.push(Math.floor((j * n) / count));
  return out;
}

/** How many pods `percent` % of `pods` is (at least 1 when percent > 0). */
export function failCount(pods: number, percent: number): number {
  return percent <= 0 ? 0 : Math.max(1, Math.round((pods * percent) / 100));
}

export interface Quantiles {
  readonly n: number;
  /** Nearest rank (the value at rank ⌈q·n⌉), seconds. */
  readonly p50_s: number | null;
  readonly p99_s: number | null;
  readonly max_s: number | null;
}

/** p50, p99 and max of durations in ms, reported in seconds. */
export function quantiles(ms: readonly number[]): Quantiles {
  const s = [...ms].sort((a, b) => a - b);
  const at = (q: number): number | null => (s.length === 0 ? null : r3((s[Math.max(0, Math.ceil(q * s.length) - 1)] ?? 0) / 1000));
  return { n: s.length, p50_s: at(0.5), p99_s: at(0.99), max_s: s.length === 0 ? null : r3((s.at(-1) ?? 0) / 1000) };
}

/** The first time in `times` at or after `since`. */
export function firstAtOrAfter(times: readonly number[] | undefined, since: number): number | undefined {
  let best: number | undefined;
  for (const t of times ?? []) if (t >= since && (best === undefined || t < best)) best = t;
  return best;
}

/** The earliest time of a pod at or after `since` over every replica's log (its failure verdicts, or its False writes). */
export function firstVerdict(verdicts: readonly ReadonlyMap<string, readonly number[]>[], key: string, since: number): number | undefined {
  let best: number | undefined;
  for (const v of verdicts) {
    const t = firstAtOrAfter(v.get(key), since);
    if (t !== undefined && (best === undefined || t < best)) best = t;
  }
  return best;
}

export interface DetectionFigures {
  readonly pods_failed: number;
  /** Failed pods whose gate the watch saw False. */
  readonly gates_false_seen: number;
  /** Failure (the pod server starts answering 503) → gate False seen on the watch. */
  readonly detection: Quantiles;
  /** The controller's verdict (its `transition` log line, to failure) → gate False seen on the benchmark's watch. */
  readonly verdict_to_write: Quantiles;
  /**
   * The controller's verdict → the API server took the False write (the
   * controller's `gate written` log line, status False): the write alone,
   * without the watch's delivery to the benchmark. `null` without the logs.
   */
  readonly verdict_to_written: Quantiles | null;
  /** Failed pods with a verdict in a log (a pod without one was not seen failing by any replica). */
  readonly verdicts_logged: number;
}

/** Per failed pod (`keys`, failing since `failAt`): detection and verdict-to-write times. */
export function detectionFigures(
  keys: readonly string[],
  failAt: number,
  falseSeen: ReadonlyMap<string, readonly number[]>,
  verdicts: readonly ReadonlyMap<string, readonly number[]>[],
  written?: readonly ReadonlyMap<string, readonly number[]>[],
): DetectionFigures {
  const detect: number[] = [];
  const toWrite: number[] = [];
  const toWritten: number[] = [];
  let logged = 0;
  for (const key of keys) {
    const seen = firstAtOrAfter(falseSeen.get(key), failAt);
    const verdict = firstVerdict(verdicts, key, failAt);
    if (verdict !== undefined) logged++;
    const landed = verdict === undefined || written === undefined ? undefined : firstVerdict(written, key, verdict);
    if (verdict !== undefined && landed !== undefined) toWritten.push(landed - verdict);
    if (seen === undefined) continue;
    detect.push(seen - failAt);
    // A verdict after the False was seen belongs to a later failure: not this write's.
    if (verdict !== undefined && verdict <= seen) toWrite.push(seen - verdict);
  }
  return { pods_failed: keys.length, gates_false_seen: detect.length, detection: quantiles(detect), verdict_to_write: quantiles(toWrite), verdict_to_written: written === undefined ? null : quantiles(toWritten), verdicts_logged: logged };
}

/**
 * The value of a series sampled over time (`[time, value]`, in time order)
 * at `t`: the last sample at or before it (the first sample when `t` is
 * earlier than all).
 */
export function valueAt(series: readonly (readonly [number, number])[], t: number): number | undefined {
  let v = series[0]?.[1];
  for (const [at, value] of series) {
    if (at > t) break;
    v = value;
  }
  return v;
}
