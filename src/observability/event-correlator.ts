/**
 * The decision behind every Kubernetes Event outprobe records, kept free of
 * I/O and clocks so tests drive it with plain numbers. A simplified
 * client-go EventCorrelator: an identical event (same object, type, reason
 * and message) seen again within the window bumps the existing Event's
 * count instead of creating a new one, and a token bucket per object caps
 * how often any event about it reaches the API server.
 */

export interface CorrelatorConfig {
  /** An identical event within this long of the last one is aggregated. @default 600000 (10 minutes) */
  readonly windowMs: number;
  /** Events per object allowed at once before the rate cap applies. @default 25 */
  readonly burst: number;
  /** After the burst, one more event per object per this many ms. @default 5000 */
  readonly refillMs: number;
  /** Remembered events and objects, oldest forgotten first. @default 4096 */
  readonly maxKeys: number;
}

export const defaultCorrelatorConfig: CorrelatorConfig = { windowMs: 600_000, burst: 25, refillMs: 5_000, maxKeys: 4096 };

/** An Event already written (or queued): what a bump continues from. */
export interface SeenEvent {
  readonly name: string;
  readonly count: number;
  readonly firstMs: number;
  readonly lastMs: number;
}

/** One object's spam-filter bucket; `tokens` may be fractional. */
export interface SpamBucket {
  readonly tokens: number;
  readonly atMs: number;
}

export type EventDecision =
  | { readonly action: 'create'; readonly bucket: SpamBucket }
  | { readonly action: 'bump'; readonly seen: SeenEvent; readonly bucket: SpamBucket }
  | { readonly action: 'drop'; readonly bucket: SpamBucket };

/** The bucket refilled up to `now` (time running backwards adds nothing). */
export function refill(bucket: SpamBucket | undefined, nowMs: number, config: CorrelatorConfig): SpamBucket {
  if (bucket === undefined) return { tokens: config.burst, atMs: nowMs };
  const elapsed = Math.max(0, nowMs - bucket.atMs);
  return { tokens: Math.min(config.burst, bucket.tokens + elapsed / config.refillMs), atMs: Math.max(nowMs, bucket.atMs) };
}

/**
 * Create, bump or drop. Aggregation is decided first and the rate cap then
 * applies to both (as client-go filters after aggregating): a bump is an API
 * write too. A dropped event leaves `seen` as it was, so the next identical
 * event that passes still bumps the same Event.
 */
export function decideEvent(seen: SeenEvent | undefined, bucket: SpamBucket | undefined, nowMs: number, config: CorrelatorConfig): EventDecision {
  const filled = refill(bucket, nowMs, config);
  if (filled.tokens < 1) return { action: 'drop', bucket: filled };
  const spent = { tokens: filled.tokens - 1, atMs: filled.atMs };
  if (seen !== undefined && nowMs - seen.lastMs <= config.windowMs) {
    return { action: 'bump', seen: { name: seen.name, count: seen.count + 1, firstMs: seen.firstMs, lastMs: Math.max(nowMs, seen.lastMs) }, bucket: spent };
  }
  return { action: 'create', bucket: spent };
}

/** The aggregation key: object, type, reason and (already truncated) message. */
export function correlationKey(e: { readonly uid: string; readonly type: string; readonly reason: string; readonly message: string }): string {
  return [e.uid, e.type, e.reason, e.message].join('\u0000');
}

export type Correlation =
  | { readonly action: 'create' | 'bump'; readonly seen: SeenEvent }
  | { readonly action: 'drop' };

/**
 * The correlator's memory around `decideEvent`: recently seen events and the
 * buckets per object, both bounded (oldest out first) and pruned as time
 * passes. Still clock-free: callers pass `now`.
 */
export class EventCorrelator {
  readonly #config: CorrelatorConfig;
  readonly #seen = new Map<string, SeenEvent>();
  readonly #buckets = new Map<string, SpamBucket>();
  #calls = 0;

  constructor(config: Partial<CorrelatorConfig> = {}) {
    this.#config = { ...defaultCorrelatorConfig, ...config };
  }

  /**
   * Decides for one event about object `uid` and remembers the outcome;
   * `newName` is called only when a new Event is to be created.
   */
  correlate(uid: string, key: string, nowMs: number, newName: () => string): Correlation {
    if (++this.#calls % 256 === 0) this.#prune(nowMs);
    const decision = decideEvent(this.#seen.get(key), this.#buckets.get(uid), nowMs, this.#config);
    touch(this.#buckets, uid, decision.bucket, this.#config.maxKeys);
    if (decision.action === 'drop') return decision;
    const seen = decision.action === 'bump' ? decision.seen : { name: newName(), count: 1, firstMs: nowMs, lastMs: nowMs };
    touch(this.#seen, key, seen, this.#config.maxKeys);
    return { action: decision.action, seen };
  }

  /** Forgets the Event `name` under `key` (its create failed), so the next identical event creates anew. */
  forget(key: string, name: string): void {
    if (this.#seen.get(key)?.name === name) this.#seen.delete(key);
  }

  /** Remembered events and buckets, for tests of the bounds. */
  get size(): { readonly events: number; readonly objects: number } {
    return { events: this.#seen.size, objects: this.#buckets.size };
  }

  #prune(nowMs: number): void {
    for (const [key, seen] of this.#seen) if (nowMs - seen.lastMs > this.#config.windowMs) this.#seen.delete(key);
    for (const [uid, bucket] of this.#buckets) if (refill(bucket, nowMs, this.#config).tokens >= this.#config.burst) this.#buckets.delete(uid);
  }
}

/** Sets `key` as the most recent entry, dropping the oldest past `max`. */
function touch<V>(map: Map<string, V>, key: string, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size <= max) return;
  const oldest = map.keys().next();
  if (oldest.done !== true) map.delete(oldest.value);
}
