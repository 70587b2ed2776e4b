import type { Clock, Random } from '../kernel/index.ts';
import type { RequestOptions } from '../kube/index.ts';
import { isKubeError } from '../kube/index.ts';
import type { CorrelatorConfig } from './event-correlator.ts';
import { EventCorrelator, correlationKey } from './event-correlator.ts';
import type { Logger } from './logger.ts';
import type { EventResultLabel } from './metrics.ts';

/** The object an Event is about. */
export interface InvolvedObject {
  readonly kind: 'Pod' | 'ProbePolicy';
  readonly apiVersion: string;
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

export type EventType = 'Normal' | 'Warning';

/** The slice of `KubeClient` the recorder uses. */
export interface EventApi {
  request<T = unknown>(options: RequestOptions): Promise<T>;
}

export interface EventRecorderOptions {
  readonly api: EventApi;
  readonly clock: Clock;
  /** Feeds the random suffix of Event names. */
  readonly random: Random;
  readonly logger: Logger;
  readonly metrics?: { recordEvent(result: EventResultLabel): void };
  /** This replica's identity (pod name), written as `reportingInstance`; cut to 128 chars. */
  readonly reportingInstance: string;
  /** Writes waiting at most; past it new events are dropped and counted. @default 256 */
  readonly queueSize?: number;
  /** Aggregation window and per-object rate cap. @default defaultCorrelatorConfig */
  readonly correlation?: Partial<CorrelatorConfig>;
}

export const eventSourceComponent = 'outprobe';
export const eventReportingComponent = 'outprobe.io/controller';
/** The limit new-style Events enforce on `note`; applied here too. */
const maxMessageChars = 1024;
const maxInstanceChars = 128;
/** `<name>.<16 hex>` must stay a DNS-1123 subdomain (253 chars). */
const maxNamePrefixChars = 253 - 17;

/** One write waiting in the queue. Bumps of an Event still queued update it in place. */
interface Pending {
  op: 'create' | 'patch';
  count: number;
  lastMs: number;
  readonly key: string;
  readonly name: string;
  readonly firstMs: number;
  readonly object: InvolvedObject;
  readonly type: EventType;
  readonly reason: string;
  readonly message: string;
}

/**
 * Writes core/v1 Events. `record` never throws and never waits: it decides
 * (create, bump or drop, see event-correlator.ts) and queues the write; one
 * worker sends the queue in order, and failures go to the log and a metric.
 */
export class EventRecorder {
  readonly #api: EventApi;
  readonly #clock: Clock;
  readonly #random: Random;
  readonly #logger: Logger;
  readonly #metric: (result: EventResultLabel) => void;
  readonly #instance: string;
  readonly #queueSize: number;
  readonly #correlator: EventCorrelator;
  readonly #queue: Pending[] = [];
  /** Event name → its queued write, while one is queued. */
  readonly #queued = new Map<string, Pending>();
  #running: Promise<void> | undefined;

  constructor(options: EventRecorderOptions) {
    this.#api = options.api;
    this.#clock = options.clock;
    this.#random = options.random;
    this.#logger = options.logger;
    const metrics = options.metrics;
    this.#metric = metrics === undefined ? () => undefined : (r) => metrics.recordEvent(r);
    this.#instance = options.reportingInstance.slice(0, maxInstanceChars);
    this.#queueSize = options.queueSize ?? 256;
    this.#correlator = new EventCorrelator(options.correlation);
  }

  record(object: InvolvedObject, type: EventType, reason: string, message: string): void {
    try {
      this.#record(object, type, reason, truncateMessage(message));
    } catch (err: unknown) {
      this.#logger.error('event recording failed', { reason, object: describe(object), err });
    }
  }

  /** Resolves once every queued write has been sent (or has failed). */
  async flush(): Promise<void> {
    while (this.#running !== undefined) await this.#running;
  }

  #record(object: InvolvedObject, type: EventType, reason: string, message: string): void {
    const now = this.#clock.now();
    const key = correlationKey({ uid: object.uid, type, reason, message });
    const c = this.#correlator.correlate(object.uid, key, now, () => eventName(object.name, this.#random));
    if (c.action === 'drop') {
      this.#metric('dropped_spam');
      this.#logger.debug('event dropped by the per-object rate cap', { reason, object: describe(object) });
      return;
    }
    const queued = this.#queued.get(c.seen.name);
    if (queued !== undefined) {
      queued.count = c.seen.count;
      queued.lastMs = c.seen.lastMs;
      return;
    }
    if (this.#queue.length >= this.#queueSize) {
      if (c.action === 'create') this.#correlator.forget(key, c.seen.name);
      this.#metric('dropped_queue');
      this.#logger.debug('event dropped: write queue full', { reason, object: describe(object) });
      return;
    }
    const item: Pending = { op: c.action === 'create' ? 'create' : 'patch', key, object, type, reason, message, ...c.seen };
    this.#queue.push(item);
    this.#queued.set(item.name, item);
    this.#kick();
  }

  #kick(): void {
    if (this.#running !== undefined) return;
    this.#running = this.#drain().then(() => {
      this.#running = undefined;
      if (this.#queue.length > 0) this.#kick();
    });
  }

  async #drain(): Promise<void> {
    await Promise.resolve(); // the caller's turn ends before any I/O starts
    for (let item = this.#queue.shift(); item !== undefined; item = this.#queue.shift()) {
      this.#queued.delete(item.name);
      await this.#send(item);
    }
  }

  async #send(item: Pending): Promise<void> {
    try {
      if (item.op === 'patch' && (await this.#patch(item))) {
        this.#metric('bumped');
        return;
      }
      await this.#api.request({ method: 'POST', path: `/api/v1/namespaces/${item.object.namespace}/events`, body: eventBody(item, this.#instance) });
      this.#metric('created');
    } catch (err: unknown) {
      if (item.op === 'create') this.#correlator.forget(item.key, item.name);
      this.#metric('failed');
      this.#logger.warn('event not written', { reason: item.reason, object: describe(item.object), event: item.name, err });
    }
  }

  /** False when the Event is gone (expired or deleted): the caller creates it again, count kept. */
  async #patch(item: Pending): Promise<boolean> {
    try {
      await this.#api.request({
        method: 'PATCH',
        path: `/api/v1/namespaces/${item.object.namespace}/events/${item.name}`,
        patch: 'merge',
        body: { count: item.count, lastTimestamp: rfc3339(item.lastMs) },
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
}, reportingInstance: string): Record<string, unknown> {
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
