/**
 * What the failed probe attempts of a live run said and how late probes
 * came, from the two sides: the controller's `Unhealthy` Events and the pod
 * server's connection times.
 */

const r3 = (n: number): number => Math.round(n * 1000) / 1000;

/**
 * The controller's `Unhealthy` Events (one per failed attempt, aggregated by
 * the recorder), grouped by message with pod addresses and ports masked: what
 * the failed attempts said, and when (seconds after the controller started).
 */
export function unhealthySummary(items: readonly Record<string, unknown>[], since: number): { message: string; count: number; first_s: number | null; last_s: number | null }[] {
  const groups = new Map<string, { message: string; count: number; first_s: number | null; last_s: number | null }>();
  const at = (v: unknown): number | null => (typeof v === 'string' && v !== '' ? r3((Date.parse(v) - since) / 1000) : null);
  for (const e of items) {
    const message = (typeof e['message'] === 'string' ? e['message'] : '').replace(/\d+\.\d+\.\d+\.\d+(:\d+)?/g, '<pod>');
    const series = e['series'] as { count?: number; lastObservedTime?: string } | undefined;
    const count = Math.max(1, Number(e['count'] ?? 0), series?.count ?? 0);
    const first = at(e['firstTimestamp']) ?? at(e['eventTime']);
    const last = at(series?.lastObservedTime) ?? at(e['lastTimestamp']) ?? first;
    const g = groups.get(message) ?? { message, count: 0, first_s: null, last_s: null };
    g.count += count;
    if (first !== null) g.first_s = g.first_s === null ? first : Math.min(g.first_s, first);
    if (last !== null) g.last_s = g.last_s === null ? last : Math.max(g.last_s, last);
    groups.set(message, g);
  }
  return [...groups.values()].sort((a, b) => b.count - a.count);
}

/** Failed attempts by the 10 s after the controller started in which their Event was first seen (`"30"`: 30–40 s). */
export function unhealthyTimeline(items: readonly Record<string, unknown>[], since: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of items) {
    const first = typeof e['firstTimestamp'] === 'string' ? e['firstTimestamp'] : typeof e['eventTime'] === 'string' ? e['eventTime'] : undefined;
    if (first === undefined) continue;
    const bin = String(Math.floor((Date.parse(first) - since) / 10_000) * 10);
    const series = e['series'] as { count?: number } | undefined;
    out[bin] = (out[bin] ?? 0) + Math.max(1, Number(e['count'] ?? 0), series?.count ?? 0);
  }
  return out;
}

/**
 * From the pods' side: per pod, the time between consecutive connections in
 * [from, to). With every probe on time each gap is one period; a pass that
 * started late shows as a longer gap followed by a shorter one.
 */
export function probeGaps(byIp: ReadonlyMap<string, readonly number[]>, from: number, to: number): { gaps: number; p50_s: number | null; p99_s: number | null; max_s: number | null } {
  const gaps: number[] = [];
  for (const list of byIp.values()) {
    const inside = list.filter((t) => t >= from && t < to).sort((a, b) => a - b);
    for (let i = 1; i < inside.length; i++) gaps.push((inside[i] ?? 0) - (inside[i - 1] ?? 0));
  }
  gaps.sort((a, b) => a - b);
  const q = (x: number): number | null => (gaps.length === 0 ? null : r3((gaps[Math.min(gaps.length - 1, Math.floor(x * gaps.length))] ?? 0) / 1000));
  return { gaps: gaps.length, p50_s: q(0.5), p99_s: q(0.99), max_s: gaps.length === 0 ? null : r3((gaps.at(-1) ?? 0) / 1000) };
}
