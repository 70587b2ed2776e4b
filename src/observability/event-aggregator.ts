/**
 * client-go's EventAggregator (tools/record/events_cache.go), clock-free:
 * events about one object with the same type and reason but different
 * messages are "similar". Once `maxSimilar` distinct messages were seen
 * within `intervalMs` of each other, every further similar event is
 * rewritten to one combined Event (message prefixed with
 * "(combined from similar events): ") whose count the recorder bumps, instead
 * of a new Event per message. A pod whose gate flaps True/False with changing
 * probe output thus costs one Event, not one per flap.
 */

export interface AggregatorConfig {
  /** Distinct messages within the interval before similar events combine. @default 10 (client-go defaultAggregateMaxEvents) */
  readonly maxSimilar: number;
  /** A similar event older than this starts a fresh record. @default 600000 (client-go defaultAggregateIntervalInSeconds = 600) */
  readonly intervalMs: number;
  /** Records kept, oldest forgotten first. @default 4096 (client-go maxLruCacheEntries) */
  readonly maxKeys: number;
}

export const defaultAggregatorConfig: AggregatorConfig = { maxSimilar: 10, intervalMs: 600_000, maxKeys: 4096 };

/** client-go's EventAggregatorByReasonMessageFunc prefix. */
export const combinedPrefix = '(combined from similar events): ';

export interface SimilarEvent {
  readonly uid: string;
  readonly type: string;
  readonly reason: string;
  readonly message: string;
}

/** What to record: the (maybe combined) message and the key that correlates repeats of it. */
export interface Aggregated {
  readonly message: string;
  readonly key: string;
  readonly combined: boolean;
}

interface SimilarRecord {
  readonly messages: Set<string>;
  lastMs: number;
}

export class EventAggregator {
  readonly #config: AggregatorConfig;
  readonly #records = new Map<string, SimilarRecord>();

  constructor(config: Partial<AggregatorConfig> = {}) {
    this.#config = { ...defaultAggregatorConfig, ...config };
  }

  aggregate(e: SimilarEvent, nowMs: number): Aggregated {
    const aggregateKey = [e.uid, e.type, e.reason].join('\u0000');
    let record = this.#records.get(aggregateKey);
    if (record === undefined || nowMs - record.lastMs > this.#config.intervalMs) record = { messages: new Set(), lastMs: nowMs };
    record.messages.add(e.message);
    record.lastMs = Math.max(record.lastMs, nowMs);
    this.#records.delete(aggregateKey);
    this.#records.set(aggregateKey, record);
    this.#bound();
    if (record.messages.size < this.#config.maxSimilar) return { message: e.message, key: `${aggregateKey}\u0000${e.message}`, combined: false };
    // As client-go: keep the set one short of the threshold, so every further similar event combines.
    const first = record.messages.values().next();
    if (first.done !== true) record.messages.delete(first.value);
    return { message: `${combinedPrefix}${e.message}`, key: `${aggregateKey}\u0000${combinedPrefix}`, combined: true };
  }

  get size(): number {
    return this.#records.size;
  }

  #bound(): void {
    while (this.#records.size > this.#config.maxKeys) {
      const oldest = this.#records.keys().next();
      if (oldest.done === true) return;
      this.#records.delete(oldest.value);
    }
  }
}
