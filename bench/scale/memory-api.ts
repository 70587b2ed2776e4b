// An in-memory stand-in for the API server, just enough for the controller's
// reflectors and writers: LIST and WATCH of pods and ProbePolicies, strategic
// merge of one pod condition on pods/status, merge of a policy's status. Every
// write is echoed on the watch, as the API server does, so the controller sees
// its own gate and status writes come back. Duck-typed as a KubeClient
// (request + stream); nothing goes over a socket.
import { performance } from 'node:perf_hooks';
import type { KubeClient, RawObject, RequestOptions } from '../../src/kube/index.ts';

type Raw = Record<string, unknown> & { metadata: { name: string; namespace: string; resourceVersion?: string; generation?: number } };
interface WatchEvent { readonly type: 'ADDED' | 'MODIFIED' | 'DELETED'; readonly object: Raw }

/** One watch stream: events wait in a queue until the reflector asks for the next. */
class Feed {
  readonly #queue: WatchEvent[] = [];
  #wake: (() => void) | undefined;
  #sinceTurn = 0;
  /** Called with how long the consumer took over each event (from the yield to its next pull), in ms. */
  onHandled: ((event: WatchEvent, ms: number) => void) | undefined;

  push(event: WatchEvent): void {
    this.#queue.push(event);
    this.#wake?.();
  }

  async *events(signal: AbortSignal): AsyncGenerator<WatchEvent> {
    const stop = (): void => this.#wake?.();
    signal.addEventListener('abort', stop, { once: true });
    try {
      while (!signal.aborted) {
        const next = this.#queue.shift();
        if (next === undefined) {
          await new Promise<void>((resolve) => (this.#wake = resolve));
          this.#wake = undefined;
          continue;
        }
        const t = performance.now();
        yield next;
        this.onHandled?.(next, performance.now() - t);
        // A real watch arrives in socket reads of a few dozen events each, with the event loop turning between them.
        if (++this.#sinceTurn >= eventsPerRead) {
          this.#sinceTurn = 0;
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
    } finally {
      signal.removeEventListener('abort', stop);
    }
  }
}

/** About one 64 KiB read of pod events. */
const eventsPerRead = 20;

const keyOf = (o: Raw): string => `${o.metadata.namespace}/${o.metadata.name}`;

export class MemoryApi {
  /**
   * Pods as JSON text (one string each, parsed on demand): the API's own
   * share of the process stays small and countable (`podBytes`), so the
   * memory mode can tell the controller's heap from the API's.
   */
  readonly pods = new Map<string, string>();
  readonly policies = new Map<string, Raw>();
  readonly podFeed = new Feed();
  readonly policyFeed = new Feed();
  /** Pods whose outprobe gate condition is True now (kept by the patches, so the bench never scans). */
  readonly gatedTrue = new Set<string>();
  gateWrites = 0;
  statusWrites = 0;
  /** Event creates and patches (the EventRecorder's), accepted and dropped. */
  eventWrites = 0;
  #rv = 1;

  /** The object as the controller's client type (request and stream are all it calls here). */
  get client(): KubeClient {
    return this as unknown as KubeClient;
  }

  put(kind: 'pods' | 'policies', object: Raw, type: 'ADDED' | 'MODIFIED' = 'ADDED'): void {
    object.metadata.resourceVersion = String(++this.#rv);
    if (kind === 'pods') {
      const text = JSON.stringify(object);
      this.pods.set(keyOf(object), text);
      this.podFeed.push({ type, object: JSON.parse(text) as Raw });
      return;
    }
    this.policies.set(keyOf(object), object);
    this.policyFeed.push({ type, object: structuredClone(object) });
  }

  /** Bytes of the pods' JSON text held (one byte per character: the bench's pods are ASCII). */
  get podBytes(): number {
    let n = 0;
    for (const [k, v] of this.pods) n += k.length + v.length;
    return n;
  }

  request<T = unknown>(o: RequestOptions): Promise<T> {
    // A page arrives on a later turn of the event loop, as a response does.
    if (o.method === 'GET' && o.path.includes('/pods')) return new Promise((resolve) => setImmediate(() => resolve(this.#listPods(o.query) as T)));
    if (o.method === 'GET') return Promise.resolve({ metadata: { resourceVersion: String(this.#rv) }, items: structuredClone([...this.policies.values()]) } as T);
    if (/\/events(\/[^/]+)?$/.test(o.path) && (o.method === 'POST' || o.method === 'PATCH')) {
      this.eventWrites++;
      return Promise.resolve(structuredClone(o.body) as T);
    }
    const m = /\/namespaces\/([^/]+)\/(pods|probepolicies)\/([^/]+)\/status$/.exec(o.path);
    if (o.method !== 'PATCH' || m === null) return Promise.reject(new Error(`unexpected ${o.method} ${o.path}`));
    const key = `${m[1] ?? ''}/${m[3] ?? ''}`;
    const body = o.body as { status: Record<string, unknown> };
    if (m[2] === 'pods') return Promise.resolve(this.#patchPod(key, body.status['conditions'] as { type: string }[]) as T);
    const policy = this.policies.get(key);
    if (policy === undefined) return Promise.reject(new Error(`no policy ${key}`));
    this.statusWrites++;
    policy['status'] = { ...(policy['status'] as object | undefined), ...body.status };
    this.put('policies', policy, 'MODIFIED');
    return Promise.resolve(structuredClone(policy) as T);
  }

  stream(path: string, _query: unknown, signal: AbortSignal): AsyncGenerator<RawObject> {
    return (path.includes('/pods') ? this.podFeed : this.policyFeed).events(signal) as AsyncGenerator<RawObject>;
  }

  /**
   * A LIST of pods, paged as the API server pages it when asked (`limit`,
   * `continue`: here the offset), parsed per page as a client parses it.
   */
  #listPods(query: RequestOptions['query']): unknown {
    const limit = Number(query?.['limit'] ?? 0);
    const from = Number(query?.['continue'] ?? 0);
    const texts = [...this.pods.values()];
    const page = limit > 0 ? texts.slice(from, from + limit) : texts;
    const more = limit > 0 && from + limit < texts.length;
    // One JSON text per page, parsed at once, as a response body is.
    const items = JSON.parse(`[${page.join(',')}]`) as Raw[];
    return { metadata: { resourceVersion: String(this.#rv), ...(more ? { continue: String(from + limit) } : {}) }, items };
  }

  #patchPod(key: string, conditions: readonly { type: string }[]): Raw {
    const text = this.pods.get(key);
    if (text === undefined) throw new Error(`no pod ${key}`);
    const pod = JSON.parse(text) as Raw;
    this.gateWrites++;
    const status = pod['status'] as { conditions?: { type: string }[] };
    const types = new Set(conditions.map((c) => c.type));
    status.conditions = [...(status.conditions ?? []).filter((c) => !types.has(c.type)), ...conditions];
    const on = (status.conditions as { type: string; status?: string }[]).some((c) => c.type.startsWith('outprobe.io/') && c.status === 'True');
    if (on) this.gatedTrue.add(key);
    else this.gatedTrue.delete(key);
    this.put('pods', pod, 'MODIFIED');
    return pod;
  }
}
