/**
 * How probes spread over their period, from the times the pod server saw
 * each connection (ms since the epoch, by pod IP). Evenly spread probes put
 * window/period of a period's probes into any window; probes that run
 * together put nearly all of them into one.
 */

/**
 * The largest share of the arrivals in [from, from + periodMs) that fall in
 * one window of `windowMs` (sliding). null when there are none.
 */
export function busiestWindowShare(times: readonly number[], from: number, periodMs: number, windowMs: number): number | null {
  const inPeriod = times.filter((t) => t >= from && t < from + periodMs).sort((a, b) => a - b);
  if (inPeriod.length === 0) return null;
  let best = 0;
  let lo = 0;
  for (let hi = 0; hi < inPeriod.length; hi++) {
    while ((inPeriod[hi] ?? 0) - (inPeriod[lo] ?? 0) >= windowMs) lo++;
    best = Math.max(best, hi - lo + 1);
  }
  return best / inPeriod.length;
}

export interface FirstProbes {
  /** Pods that were probed at least once since `since`. */
  readonly pods: number;
  /** Delay of the earliest, median and latest first probe after `since` (ms). */
  readonly firstMs: number | null;
  readonly p50Ms: number | null;
  readonly lastMs: number | null;
}

/** When each pod was first probed after `since`. */
export function firstProbes(byIp: ReadonlyMap<string, readonly number[]>, since: number): FirstProbes {
  const firsts: number[] = [];
  for (const times of byIp.values()) {
    let first = Infinity;
    for (const t of times) if (t >= since && t < first) first = t;
    if (first !== Infinity) firsts.push(first - since);
  }
  firsts.sort((a, b) => a - b);
  const at = (q: number): number | null => (firsts.length === 0 ? null : (firsts[Math.min(firsts.length - 1, Math.floor(q * firsts.length))] ?? null));
  return { pods: firsts.length, firstMs: at(0), p50Ms: at(0.5), lastMs: firsts.at(-1) ?? null };
}

/** All arrival times of the given IPs (all IPs when `ips` is undefined), flattened. */
export function timesOf(byIp: ReadonlyMap<string, readonly number[]>, ips?: ReadonlySet<string>): number[] {
  const out: number[] = [];
  for (const [ip, times] of byIp) if (ips === undefined || ips.has(ip)) out.push(...times);
  return out;
}
