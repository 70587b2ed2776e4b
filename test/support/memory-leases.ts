// Shard Leases in memory, just enough for ShardMembership: LIST and WATCH of
// the Leases (every write echoed on the watch, as the API server does), the
// LeaseWriter's merge PATCH (404 when absent), POST and DELETE. Duck-typed as
// a KubeClient. Used by the membership unit tests and bench:scale:initial-list.
import { KubeApiError } from '../../src/kube/index.ts';
import type { KubeClient, LeaseJson, RequestOptions } from '../../src/kube/index.ts';
import { leaseName, microTime, shardLabel } from '../../src/sharding/index.ts';

interface Event { readonly type: 'ADDED' | 'MODIFIED' | 'DELETED'; readonly object: LeaseJson }

export class MemoryLeases {
  readonly leases = new Map<string, LeaseJson>();
  readonly #namespace: string;
  readonly #watchers = new Set<(e: Event) => void>();
  #rv = 1;

  constructor(namespace: string) {
    this.#namespace = namespace;
  }

  get client(): KubeClient {
    return this as unknown as KubeClient;
  }

  /** Another replica's Lease, renewed at `renewedAt` for `durationMs` (written as its LeaseWriter would). */
  hold(identity: string, renewedAt: number, durationMs = 600_000): void {
    const name = leaseName(identity);
    this.#write(name, {
      metadata: { name, namespace: this.#namespace, labels: { [shardLabel]: 'true' } },
      spec: { holderIdentity: identity, leaseDurationSeconds: Math.round(durationMs / 1000), renewTime: microTime(renewedAt), acquireTime: microTime(renewedAt) },
    });
  }

  /** Another replica released (deleted) its Lease. */
  drop(identity: string): void {
    this.#delete(leaseName(identity));
  }

  request<T = unknown>(o: RequestOptions): Promise<T> {
    const name = /\/leases\/([^/]+)$/.exec(o.path)?.[1];
    if (o.method === 'GET' && name === undefined) return Promise.resolve({ metadata: { resourceVersion: String(this.#rv) }, items: structuredClone([...this.leases.values()]) } as T);
    if (o.method === 'POST') {
      const body = o.body as LeaseJson;
      return Promise.resolve(this.#write(body.metadata?.name ?? '', body) as T);
    }
    if (name === undefined) return Promise.reject(new Error(`unexpected ${o.method} ${o.path}`));
    const old = this.leases.get(name);
    if (old === undefined) return Promise.reject(new KubeApiError({ code: 'NotFound', status: 404, reason: 'NotFound', message: `lease ${name} not found` }));
    if (o.method === 'DELETE') {
      this.#delete(name);
      return Promise.resolve({} as T);
    }
    if (o.method !== 'PATCH') return Promise.reject(new Error(`unexpected ${o.method} ${o.path}`));
    const body = o.body as LeaseJson;
    return Promise.resolve(this.#write(name, {
      metadata: { ...old.metadata, ...body.metadata, annotations: { ...old.metadata?.annotations, ...body.metadata?.annotations } },
      spec: { ...old.spec, ...body.spec },
    }) as T);
  }

  async *stream(_path: string, _query: unknown, signal: AbortSignal): AsyncGenerator<Event> {
    const queue: Event[] = [];
    let wake: (() => void) | undefined;
    const push = (e: Event): void => {
      queue.push(e);
      wake?.();
    };
    const stop = (): void => wake?.();
    this.#watchers.add(push);
    signal.addEventListener('abort', stop, { once: true });
    try {
      while (!signal.aborted) {
        const next = queue.shift();
        if (next !== undefined) {
          yield next;
          continue;
        }
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
    } finally {
      this.#watchers.delete(push);
      signal.removeEventListener('abort', stop);
    }
  }

  #write(name: string, lease: LeaseJson): LeaseJson {
    const type = this.leases.has(name) ? 'MODIFIED' : 'ADDED';
    const stored: LeaseJson = { ...lease, metadata: { ...lease.metadata, name, namespace: this.#namespace, uid: `uid-${name}`, resourceVersion: String(++this.#rv) } };
    this.leases.set(name, stored);
    for (const w of this.#watchers) w({ type, object: structuredClone(stored) });
    return structuredClone(stored);
  }

  #delete(name: string): void {
    const old = this.leases.get(name);
    if (old === undefined) return;
    this.leases.delete(name);
    const object = { ...old, metadata: { ...old.metadata, resourceVersion: String(++this.#rv) } };
    for (const w of this.#watchers) w({ type: 'DELETED', object });
  }
}
