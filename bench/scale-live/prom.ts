/**
 * The controller's /metrics, read as counters that survive series removal:
 * outprobe deletes a policy's series when the policy goes away, so a plain
 * sum can go down. The accumulator adds each series' increase between two
 * scrapes (a lower value is a restart of that series, counted from 0), and
 * phases are differences of its running totals.
 */

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const line = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const label = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Prometheus text exposition → samples (comments and unparsable lines skipped). */
export function parseMetrics(text: string): Sample[] {
  const out: Sample[] = [];
  for (const l of text.split('\n')) {
    if (l === '' || l.startsWith('#')) continue;
    const m = line.exec(l.trim());
    if (m === null) continue;
    const labels: Record<string, string> = {};
    for (const lm of (m[2] ?? '').matchAll(label)) labels[lm[1] ?? ''] = (lm[2] ?? '').replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    const value = m[3] === '+Inf' ? Infinity : Number(m[3]);
    if (!Number.isNaN(value)) out.push({ name: m[1] ?? '', labels, value });
  }
  return out;
}

function seriesKey(s: Sample): string {
  return `${s.name}${JSON.stringify(Object.entries(s.labels).sort(([a], [b]) => a.localeCompare(b)))}`;
}

/** Running totals per series: name → key → { labels, total }. */
export type Totals = ReadonlyMap<string, ReadonlyMap<string, { readonly labels: Readonly<Record<string, string>>; readonly total: number }>>;

export class CounterAccumulator {
  readonly #last = new Map<string, number>();
  readonly #totals = new Map<string, Map<string, { labels: Readonly<Record<string, string>>; total: number }>>();

  /** Adds one scrape of counter-like samples (counters, histogram buckets/counts/sums). */
  add(samples: readonly Sample[]): void {
    for (const s of samples) {
      const key = seriesKey(s);
      const prev = this.#last.get(key);
      const increase = prev === undefined || s.value < prev ? s.value : s.value - prev;
      this.#last.set(key, s.value);
      let byName = this.#totals.get(s.name);
      if (byName === undefined) this.#totals.set(s.name, (byName = new Map<string, { labels: Readonly<Record<string, string>>; total: number }>()));
      const t = byName.get(key);
      if (t === undefined) byName.set(key, { labels: s.labels, total: increase });
      else t.total += increase;
    }
  }

  /** A copy of the totals now (the start or end of a phase). */
  snapshot(): Totals {
    const copy = new Map<string, Map<string, { labels: Readonly<Record<string, string>>; total: number }>>();
    for (const [name, m] of this.#totals) copy.set(name, new Map([...m].map(([k, v]) => [k, { ...v }])));
    return copy;
  }
}

const empty: Totals = new Map();

/** Sum of a counter's increase between two snapshots, over series matching `where`. */
export function increase(from: Totals | undefined, to: Totals, name: string, where: Readonly<Record<string, string>> = {}): number {
  let sum = 0;
  const before = (from ?? empty).get(name);
  for (const [key, v] of to.get(name) ?? new Map<string, { labels: Readonly<Record<string, string>>; total: number }>()) {
    if (!Object.entries(where).every(([k, want]) => v.labels[k] === want)) continue;
    sum += v.total - (before?.get(key)?.total ?? 0);
  }
  return sum;
}

/** Increase of each bucket of a histogram between two snapshots, as [upper bound, cumulative count], sorted. */
export function bucketIncrease(from: Totals | undefined, to: Totals, name: string): [number, number][] {
  const byLe = new Map<number, number>();
  const before = (from ?? empty).get(`${name}_bucket`);
  for (const [key, v] of to.get(`${name}_bucket`) ?? new Map<string, { labels: Readonly<Record<string, string>>; total: number }>()) {
    const le = v.labels['le'] === '+Inf' ? Infinity : Number(v.labels['le']);
    byLe.set(le, (byLe.get(le) ?? 0) + v.total - (before?.get(key)?.total ?? 0));
  }
  return [...byLe].sort(([a], [b]) => a - b);
}

export interface HistogramSummary {
  readonly count: number;
  /** Upper bound of the bucket holding the q-quantile (histogram resolution: "at most this"). */
  readonly p50: number | null;
  readonly p99: number | null;
  /** Upper bound of the highest non-empty bucket; Infinity when samples passed the last finite bound. */
  readonly maxBound: number | null;
  /** The largest finite bucket bound below which every sample fell … its lower edge: samples ≥ this exist. */
  readonly maxAtLeast: number | null;
}

function quantileBound(buckets: readonly [number, number][], q: number): number | null {
  const total = buckets.at(-1)?.[1] ?? 0;
  if (total === 0) return null;
  const rank = q * total;
  for (const [le, c] of buckets) if (c >= rank) return le;
  return null;
}

/** p50/p99/max of a histogram's increase, to bucket resolution (upper bounds). */
export function summarize(buckets: readonly [number, number][]): HistogramSummary {
  const count = buckets.at(-1)?.[1] ?? 0;
  let maxBound: number | null = null;
  let maxAtLeast: number | null = null;
  let prevLe = 0;
  let prevCount = 0;
  for (const [le, c] of buckets) {
    if (c > prevCount) {
      maxBound = le;
      maxAtLeast = prevLe;
    }
    prevLe = le;
    prevCount = c;
  }
  return { count, p50: quantileBound(buckets, 0.5), p99: quantileBound(buckets, 0.99), maxBound, maxAtLeast };
}
