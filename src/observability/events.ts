import type { Clock, Random } from '../kernel/index.ts';
import type { EventJson, RequestOptions } from '../kube/index.ts';
import { isKubeError } from '../kube/index.ts';
import type { AggregatorConfig } from './event-aggregator.ts';
import { EventAggregator } from './event-aggregator.ts';
import type { CorrelatorConfig } from './event-correlator.ts';
import { EventCorrelator } from './event-correlator.ts';
import type { EventFold, FoldSummary } from './event-fold.ts';
import { FoldLedger } from './event-fold.ts';
import type { Logger } from './logger.ts';
import type { EventDropCause, EventResultLabel } from './metrics.ts';

/** The object an Event is about. */
export interface InvolvedObject {
  readonly kind: 'Pod' | 'ProbePolicy' | 'Lease';
  readonly apiVersion: string;
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

export type EventType = 'Normal' | 'Warning';

/** The slice of `KubeClient` the recorder uses (give it a client with its own rate budget). */
export interface EventApi {
  request<T = unknown>(options: RequestOptions): Promise<T>;
}

/** The metrics the recorder feeds (see Metrics). */
export interface EventMetrics {
  recordEvent(result: EventResultLabel): void;
  recordEventDropped(reason: string, cause: EventDropCause): void;
  recordEventFolded(reason: string): void;
}

export interface EventRecorderOptions {
  readonly api: EventApi;
  readonly clock: Clock;
  /** Feeds the random suffix of Event names. */
  readonly random: Random;
  readonly logger: Logger;
  readonly metrics?: EventMetrics;
  /** This replica's identity (pod name), written as `reportingInstance`; cut to 128 chars. */
  readonly reportingInstance: string;
  /** Writes waiting at most; past it new events are dropped (and folded, see `record`). @default 1000 (client-go maxQueuedEvents) */
  readonly queueSize?: number;
  /** Writes in flight at once; the API client's own token bucket sets the rate. @default 8 */
  readonly concurrency?: number;
  /** Identical-event window and per-object rate cap. @default defaultCorrelatorConfig */
  readonly correlation?: Partial<CorrelatorConfig>;
  /** Similar-event combining. @default defaultAggregatorConfig */
  readonly aggregation?: Partial<AggregatorConfig>;
  /** How long unsent events are collected before their summary Event is written. @default 30000 */
  readonly foldIntervalMs?: number;
}

export const eventSourceComponent = 'outprobe';
export const eventReportingComponent = 'outprobe.io/controller';
/** The limit new-style Events enforce on `note`; applied here too. */
const maxMessageChars = 1024;
const maxInstanceChars = 128;
/** `<name>.<16 hex>` must stay a DNS-1123 subdomain (253 chars). */
const maxNamePrefixChars = 253 - 17;

/** One write waiting in the queue or in flight. Bumps of an Event still queued update it in place. */
interface Pending {
  op: 'create' | 'patch';
  count: number;
  lastMs: number;
  message: string;
  /** A bump arrived while this write was in flight: patch again after it. */
  again: boolean;
  readonly key: string;
  readonly name: string;
  readonly firstMs: number;
  readonly object: InvolvedObject;
  readonly type: EventType;
  readonly reason: string;
  readonly fold: EventFold | undefined;
  /** A fold summary: never dropped by the queue bound or the rate cap. */
  readonly summary: FoldSummary | undefined;
}

/**
 * Writes core/v1 Events the way client-go's recorder does: similar events
 * combine (event-aggregator.ts), identical ones bump `count` (a merge patch
 * of `count`, `lastTimestamp`, `message`), a token bucket per object caps
 * spam (event-correlator.ts). `record` never throws and never waits; a
 * bounded queue is sent by `concurrency` workers through the API client's
 * rate budget. An event that cannot be sent is counted in
 * `outprobe_events_dropped_total{reason,cause}` and, when recorded with a
 * fold target, accounted in a summary Event on that object (event-fold.ts).
 */
export class EventRecorder {
  readonly #api: EventApi;
  readonly #clock: Clock;
  readonly #random: Random;
  readonly #logger: Logger;
  readonly #metrics: EventMetrics | undefined;
  readonly #instance: string;
  readonly #queueSize: number;
  readonly #concurrency: number;
  readonly #foldIntervalMs: number;
  readonly #correlator: EventCorrelator;
  readonly #aggregator: EventAggregator;
  readonly #ledger = new FoldLedger();
  readonly #queue: Pending[] = [];
  /** Event name → its write, while one is queued. */
  readonly #queued = new Map<string, Pending>();
  /** Event name → its write, while one is in flight. */
  readonly #inFlight = new Map<string, Pending>();
  readonly #workers = new Set<Promise<void>>();
  readonly #stop = new AbortController();
  #summaryWait: Promise<void> | undefined;

  constructor(options: EventRecorderOptions) {
    this.#api = options.api;
    this.#clock = options.clock;
    this.#random = options.random;
    this.#logger = options.logger;
    this.#metrics = options.metrics;
    this.#instance = options.reportingInstance.slice(0, maxInstanceChars);
    this.#queueSize = options.queueSize ?? 1000;
    this.#concurrency = Math.max(1, options.concurrency ?? 8);
    this.#foldIntervalMs = options.foldIntervalMs ?? 30_000;
    this.#correlator = new EventCorrelator(options.correlation);
    this.#aggregator = new EventAggregator(options.aggregation);
  }

  /**
   * Records an event. With `fold`, an event that cannot be sent is not lost
   * without a trace: it is counted in a summary Event on `fold.into`.
   */
  record(object: InvolvedObject, type: EventType, reason: string, message: string, fold?: EventFold): void {
    try {
      this.#record(object, type, reason, truncateMessage(message), fold);
    } catch (err: unknown) {
      this.#logger.error('event recording failed', { reason, object: describe(object), err });
    }
  }

  /** Resolves once every queued write has been sent (or has failed). */
  async flush(): Promise<void> {
    while (this.#workers.size > 0) await Promise.all([...this.#workers]);
  }

  /** Writes the summaries whose interval has passed; the recorder's own timer calls it. */
  step(): void {
    for (const s of this.#ledger.take(this.#clock.now(), this.#foldIntervalMs)) this.#enqueueSummary(s);
    this.#armSummaries();
  }

  /**
   * For shutdown: stops the summary timer, counts the writes still queued as
   * dropped (cause `shutdown`, folded like any other), writes every open
   * summary and waits for the writes in flight and the summaries.
   */
  async close(): Promise<void> {
    this.#stop.abort();
    for (const item of this.#queue.splice(0)) {
      if (item.summary !== undefined) {
        this.#queue.push(item); // a summary still queued is written
        continue;
      }
      this.#queued.delete(item.name);
      this.#lost(item, 'shutdown');
    }
    for (const s of this.#ledger.take(this.#clock.now(), 0)) this.#enqueueSummary(s);
    await this.flush();
  }

  #record(object: InvolvedObject, type: EventType, reason: string, message: string, fold: EventFold | undefined): void {
    const now = this.#clock.now();
    const agg = this.#aggregator.aggregate({ uid: object.uid, type, reason, message }, now);
    const c = this.#correlator.correlate(object.uid, agg.key, now, () => eventName(object.name, this.#random));
    if (c.action === 'drop') {
      this.#lost({ object, reason, fold }, 'rate_limited');
      return;
    }
    const waiting = this.#queued.get(c.seen.name) ?? this.#inFlight.get(c.seen.name);
    if (waiting !== undefined) {
      waiting.count = c.seen.count;
      waiting.lastMs = c.seen.lastMs;
      waiting.message = agg.message;
      if (this.#inFlight.has(c.seen.name)) waiting.again = true;
      return;
    }
    if (this.#queue.length >= this.#queueSize) {
      if (c.action === 'create') this.#correlator.forget(agg.key, c.seen.name);
      this.#lost({ object, reason, fold }, 'queue_full');
      return;
    }
    const op = c.action === 'create' ? 'create' : 'patch';
    this.#push({ op, key: agg.key, object, type, reason, message: agg.message, fold, summary: undefined, again: false, ...c.seen });
  }

  /** An event that will not be written: counted, and folded into its summary when it has a fold target. */
  #lost(e: { readonly object: InvolvedObject; readonly reason: string; readonly fold: EventFold | undefined }, cause: EventDropCause): void {
    this.#metrics?.recordEventDropped(e.reason, cause);
    if (e.fold === undefined) {
      this.#logger.debug('event dropped', { reason: e.reason, cause, object: describe(e.object) });
      return;
    }
    this.#ledger.add(e.fold, e.object, this.#clock.now());
    this.#metrics?.recordEventFolded(e.reason);
    this.#armSummaries();
  }

  #enqueueSummary(s: FoldSummary): void {
    const now = this.#clock.now();
    const item: Pending = {
      op: 'create', key: '', name: eventName(s.into.name, this.#random), count: 1, firstMs: now, lastMs: now,
      object: s.into, type: 'Normal', reason: s.reason, message: truncateMessage(s.message), fold: undefined, summary: s, again: false,
    };
    this.#queue.unshift(item); // ahead of the backlog it accounts for
    this.#queued.set(item.name, item);
    this.#kick();
  }

  #armSummaries(): void {
    if (this.#summaryWait !== undefined || this.#stop.signal.aborted) return;
    const due = this.#ledger.nextDueMs(this.#foldIntervalMs);
    if (due === undefined) return;
    this.#summaryWait = this.#clock.sleepUntil(due, this.#stop.signal).then(
      () => {
        this.#summaryWait = undefined;
        this.step();
      },
      () => {
        this.#summaryWait = undefined;
      },
    );
  }

  #push(item: Pending): void {
    this.#queue.push(item);
    this.#queued.set(item.name, item);
    this.#kick();
  }

  #kick(): void {
    while (this.#workers.size < this.#concurrency && this.#workers.size < this.#queue.length) {
      const worker: Promise<void> = this.#work().finally(() => {
        this.#workers.delete(worker);
        if (this.#queue.length > 0) this.#kick();
      });
      this.#workers.add(worker);
    }
  }

  async #work(): Promise<void> {
    await Promise.resolve(); // the caller's turn ends before any I/O starts
    for (let item = this.#queue.shift(); item !== undefined; item = this.#queue.shift()) {
      this.#queued.delete(item.name);
      this.#inFlight.set(item.name, item);
      await this.#send(item);
      this.#inFlight.delete(item.name);
      if (item.again) this.#push({ ...item, op: 'patch', again: false });
    }
  }

  async #send(item: Pending): Promise<void> {
    try {
      if (item.op === 'patch' && (await this.#patch(item))) {
        this.#metrics?.recordEvent('bumped');
        return;
      }
      await this.#api.request({ method: 'POST', path: `/api/v1/namespaces/${item.object.namespace}/events`, body: eventBody(item, this.#instance) });
      this.#metrics?.recordEvent('created');
    } catch (err: unknown) {
      if (item.op === 'create') this.#correlator.forget(item.key, item.name);
      this.#metrics?.recordEvent('failed');
      this.#logger.warn('event not written', { reason: item.reason, object: describe(item.object), event: item.name, message: item.summary === undefined ? undefined : item.message, err });
      if (item.summary !== undefined) this.#metrics?.recordEventDropped(item.reason, 'failed');
      else this.#lost(item, 'failed');
    }
  }

  /** False when the Event is gone (expired or deleted): the caller creates it again, count kept. */
  async #patch(item: Pending): Promise<boolean> {
    try {
      await this.#api.request({
        method: 'PATCH',
        path: `/api/v1/namespaces/${item.object.namespace}/events/${item.name}`,
        patch: 'merge',
        body: { count: item.count, lastTimestamp: rfc3339(item.lastMs), message: item.message },
      });
      return true;
    } catch (err: unknown) {
      if (isKubeError(err, 'NotFound')) return false;
      throw err;
    }
  }
}

/** The core/v1 Event for a queued create. */
export function eventBody(item: {
  readonly name: string; readonly object: InvolvedObject; readonly type: EventType; readonly reason: string;
  readonly message: string; readonly count: number; readonly firstMs: number; readonly lastMs: number;
}, reportingInstance: string): EventJson {
  const o = item.object;
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: item.name, namespace: o.namespace },
    involvedObject: { kind: o.kind, apiVersion: o.apiVersion, namespace: o.namespace, name: o.name, uid: o.uid },
    type: item.type,
    reason: item.reason,
    message: item.message,
    source: { component: eventSourceComponent },
    reportingComponent: eventReportingComponent,
    reportingInstance,
    firstTimestamp: rfc3339(item.firstMs),
    lastTimestamp: rfc3339(item.lastMs),
    count: item.count,
  };
}

/** `<object name>.<16 hex chars>`, the prefix cut so the whole stays a valid name. */
export function eventName(objectName: string, random: Random): string {
  const prefix = objectName.slice(0, maxNamePrefixChars).replace(/[-.]+$/, '');
  const hex = (): string => Math.floor(random() * 0x1_0000_0000).toString(16).padStart(8, '0');
  return `${prefix}.${hex()}${hex()}`;
}

/** Seconds precision, as metav1.Time serialises. */
export function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

export function truncateMessage(message: string): string {
  return message.length <= maxMessageChars ? message : `${message.slice(0, maxMessageChars - 3)}...`;
}

function describe(o: InvolvedObject): string {
  return `${o.kind} ${o.namespace}/${o.name}`;
}
