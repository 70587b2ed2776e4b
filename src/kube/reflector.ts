import type { Clock, Random } from '../kernel/index.ts';
import { Slice } from '../kernel/index.ts';
import type { KubeClient } from './client.ts';
import { KubeApiError, isKubeError } from './errors.ts';
import { backoffDelay } from './rate-limiter.ts';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent<T> {
  readonly type: WatchEventType;
  readonly key: string;
  readonly object: T;
  /** The previous projection for MODIFIED and DELETED. */
  readonly old: T | undefined;
}

/** Reflector lifecycle, for logs and metrics (the observability seam). */
export type ReflectorSignal =
  | { readonly kind: 'listed'; readonly items: number; readonly pages: number; readonly resourceVersion: string }
  | { readonly kind: 'watch-started'; readonly resourceVersion: string }
  | { readonly kind: 'watch-ended'; readonly reason: 'timeout' | 'inactive' | 'closed' }
  | { readonly kind: 'expired'; readonly resourceVersion: string }
  | { readonly kind: 'error'; readonly error: unknown; readonly retryInMs: number }
  /** An object `project` threw on: left out of the store (or removed from it), never retried until it changes. */
  | { readonly kind: 'skipped'; readonly object: ObjectRef; readonly error: unknown };

/**
 * Why a watch starts again: its end (`timeout`: the server ended it after
 * timeoutSeconds, routine; `closed`; `inactive`: silent past the bound), a 410
 * (`expired`: relisted) or a failed LIST or WATCH (`error`: backed off).
 */
export type WatchRestartReason = Extract<ReflectorSignal, { kind: 'watch-ended' }>['reason'] | 'expired' | 'error';

/** Who an unreadable object is, as far as its metadata can tell (never its body). */
export interface ObjectRef {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

export interface ReflectorOptions<T, W extends RawObject = RawObject> {
  readonly client: KubeClient;
  readonly clock: Clock;
  readonly random: Random;
  /** Collection path, e.g. `/api/v1/pods` or `/apis/outprobe.io/v1alpha1/probepolicies`. */
  readonly path: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  /**
   * Compact projection of a raw object (drop managedFields and everything
   * unused). An object it throws on is skipped and reported (`skipped`):
   * one bad object must never stop the LIST or the watch. `previous` is the
   * stored projection under the same key, if any: a projection may reuse its
   * unchanged parts (ADR 0030).
   */
  readonly project: (raw: W, previous: T | undefined) => T;
  readonly onEvent: (event: StoreEvent<T>) => void;
  /** Called after every complete LIST has been applied to the store. */
  readonly onSynced?: () => void;
  readonly onSignal?: (signal: ReflectorSignal) => void;
  /** LIST page size. @default 500 */
  readonly pageSize?: number;
  /**
   * The longest the LIST's objects are projected and applied without
   * letting the event loop run (timers: Lease renewals, probes). @default 50
   */
  readonly sliceMs?: number;
  /** End a watch that has been silent this long (bookmarks arrive about once a minute). @default 150000 */
  readonly inactivityMs?: number;
}

export interface RawObject {
  readonly metadata?: { readonly name?: string; readonly namespace?: string; readonly resourceVersion?: string; readonly uid?: string };
  readonly [field: string]: unknown;
}

interface ListPage {
  readonly metadata?: { readonly resourceVersion?: string; readonly continue?: string };
  readonly items?: readonly RawObject[];
}

interface WatchEvent {
  readonly type?: string;
  readonly object?: RawObject & { readonly code?: number; readonly message?: string; readonly reason?: string };
}

export function keyOf(obj: RawObject): string {
  const ns = obj.metadata?.namespace;
  const name = obj.metadata?.name ?? '';
  return ns === undefined || ns === '' ? name : `${ns}/${name}`;
}

/**
 * List+watch for one resource, like client-go's reflector: a paginated LIST,
 * then a WATCH from its resourceVersion with bookmarks; a 410 (HTTP or an
 * ERROR event) relists and emits the differences; other failures back off
 * with jitter (Retry-After honoured) and resume from the last
 * resourceVersion; a silent watch is ended after `inactivityMs`. The store
 * holds projections only.
 */
export class Reflector<T, W extends RawObject = RawObject> {
  readonly store = new Map<string, T>();
  readonly #o: ReflectorOptions<T, W>;
  #resourceVersion = '';
  #synced = false;

  constructor(options: ReflectorOptions<T, W>) {
    this.#o = options;
  }

  get synced(): boolean {
    return this.#synced;
  }

  get resourceVersion(): string {
    return this.#resourceVersion;
  }

  async run(signal: AbortSignal): Promise<void> {
    let failures = 0;
    let needList = true;
    while (!signal.aborted) {
      try {
        if (needList) await this.#list(signal);
        needList = false;
        await this.#watch(signal);
        failures = 0;
      } catch (err: unknown) {
        if (isAborted(signal)) break;
        if (isKubeError(err, 'Gone')) {
          this.#o.onSignal?.({ kind: 'expired', resourceVersion: this.#resourceVersion });
          needList = true;
          continue;
        }
        const retryInMs = Math.max(err instanceof KubeApiError ? (err.retryAfterMs ?? 0) : 0, backoffDelay(failures++, this.#o.random, 800, 30_000));
        this.#o.onSignal?.({ kind: 'error', error: err, retryInMs });
        await this.#o.clock.sleepUntil(this.#o.clock.now() + retryInMs, signal).catch(() => undefined);
      }
    }
  }

  /**
   * A paged LIST, applied page by page as it arrives, in slices of at most
   * `sliceMs` between which the event loop runs (issue 31, ADR 0066): a
   * LIST of 100,000 pods never holds the loop for more than a slice, so a
   * Lease renewal or a probe never waits behind it. Objects added or changed
   * are emitted as their page is applied, those gone (or now unreadable)
   * after the last page; `onSynced` once all is applied.
   */
  async #list(signal: AbortSignal): Promise<void> {
    const seen = new Set<string>();
    const slice = new Slice(this.#o.clock, this.#o.sliceMs ?? 50);
    let cont: string | undefined;
    let pages = 0;
    let rv = '';
    do {
      const page: ListPage = await this.#o.client.request<ListPage>({
        method: 'GET',
        path: this.#o.path,
        query: { limit: this.#o.pageSize ?? 500, continue: cont, labelSelector: this.#o.labelSelector, fieldSelector: this.#o.fieldSelector },
        signal,
      });
      pages++;
      await this.#applyPage(page, seen, slice, signal);
      cont = page.metadata?.continue || undefined;
      rv = page.metadata?.resourceVersion ?? rv;
    } while (cont !== undefined);
    for (const [key, old] of [...this.store]) {
      if (seen.has(key)) continue;
      await slice.yieldIfSpent(signal);
      this.store.delete(key);
      this.#o.onEvent({ type: 'DELETED', key, object: old, old });
    }
    this.#resourceVersion = rv;
    this.#o.onSignal?.({ kind: 'listed', items: seen.size, pages, resourceVersion: rv });
    this.#synced = true;
    this.#o.onSynced?.();
  }

  /** One LIST page into the store, in slices: what was added or changed is emitted, each key noted in `seen`. */
  async #applyPage(page: ListPage, seen: Set<string>, slice: Slice, signal: AbortSignal): Promise<void> {
    for (const raw of Array.isArray(page.items) ? (page.items as unknown[]) : []) {
      await slice.yieldIfSpent(signal);
      const key = keyOf(raw as RawObject);
      const old = this.store.get(key);
      const object = this.#project(raw, old);
      if (object === skipped) continue;
      seen.add(key);
      this.store.set(key, object);
      this.#o.onEvent({ type: old === undefined ? 'ADDED' : 'MODIFIED', key, object, old });
    }
  }

  async #watch(outer: AbortSignal): Promise<void> {
    const controller = new AbortController();
    const stop = (): void => controller.abort();
    outer.addEventListener('abort', stop, { once: true });
    const inactivityMs = this.#o.inactivityMs ?? 150_000;
    const state = { inactive: false };
    const setInactivity = (): NodeJS.Timeout =>
      setTimeout(() => {
        state.inactive = true;
        controller.abort();
      }, inactivityMs);
    let timer = setInactivity();
    this.#o.onSignal?.({ kind: 'watch-started', resourceVersion: this.#resourceVersion });
    try {
      const events = this.#o.client.stream(
        this.#o.path,
        {
          watch: 1,
          allowWatchBookmarks: true,
          resourceVersion: this.#resourceVersion,
          timeoutSeconds: 300 + Math.floor(this.#o.random() * 300),
          labelSelector: this.#o.labelSelector,
          fieldSelector: this.#o.fieldSelector,
        },
        controller.signal,
      );
      for await (const raw of events) {
        clearTimeout(timer);
        timer = setInactivity();
        this.#apply(raw as WatchEvent);
      }
      this.#o.onSignal?.({ kind: 'watch-ended', reason: state.inactive ? 'inactive' : 'timeout' });
    } finally {
      clearTimeout(timer);
      outer.removeEventListener('abort', stop);
    }
  }

  #apply(event: WatchEvent): void {
    const obj = event.object;
    if (obj === undefined) return;
    if (event.type === 'ERROR') {
      const code = obj.code ?? 0;
      throw new KubeApiError({ code: code === 410 ? 'Gone' : 'ServerError', status: code, reason: obj.reason ?? '', message: obj.message ?? 'watch error' });
    }
    if (event.type === 'ADDED' || event.type === 'MODIFIED' || event.type === 'DELETED') this.#applyObject(event.type, obj);
    const rv: unknown = obj.metadata?.resourceVersion;
    if (typeof rv === 'string') this.#resourceVersion = rv; // BOOKMARKs carry only this
  }

  #applyObject(type: WatchEventType, obj: RawObject): void {
    const key = keyOf(obj);
    const old = this.store.get(key);
    const object = type === 'DELETED' && old !== undefined ? old : this.#project(obj, old);
    if (object === skipped) {
      // What cannot be read is forgotten: nothing acts on a stale projection.
      if (old === undefined) return;
      this.store.delete(key);
      this.#o.onEvent({ type: 'DELETED', key, object: old, old });
      return;
    }
    if (type === 'DELETED') {
      this.store.delete(key);
      this.#o.onEvent({ type, key, object, old });
      return;
    }
    this.store.set(key, object);
    this.#o.onEvent({ type: old === undefined ? 'ADDED' : 'MODIFIED', key, object, old });
  }

  /** `project`, with a throw turned into a `skipped` signal. */
  #project(raw: unknown, previous: T | undefined): T | typeof skipped {
    try {
      if (raw === null || typeof raw !== 'object') throw new TypeError(`not an object: ${raw === null ? 'null' : typeof raw}`);
      // The JSON is taken to be the resource's model (W); `project` still reads it defensively.
      return this.#o.project(raw as W, previous);
    } catch (error: unknown) {
      this.#o.onSignal?.({ kind: 'skipped', object: refOf(raw), error });
      return skipped;
    }
  }
}

const skipped: unique symbol = Symbol('skipped');

/** Namespace, name and uid when they are strings; empty otherwise. */
function refOf(raw: unknown): ObjectRef {
  const m: unknown = raw !== null && typeof raw === 'object' ? (raw as RawObject).metadata : undefined;
  const field = (name: 'namespace' | 'name' | 'uid'): string => {
    const v: unknown = m !== null && typeof m === 'object' ? (m as Record<string, unknown>)[name] : undefined;
    return typeof v === 'string' ? v : '';
  };
  return { namespace: field('namespace'), name: field('name'), uid: field('uid') };
}

function isAborted(signal: AbortSignal): boolean {
  return signal.aborted;
}
