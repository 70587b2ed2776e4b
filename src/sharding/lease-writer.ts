import type { Clock } from '../kernel/index.ts';
import { isKubeError } from '../kube/index.ts';
import type { KubeClient, LeaseJson } from '../kube/index.ts';
import { countsAnnotation, leaseName, microTime, projectLease, shardLabel } from './lease.ts';
import type { ShardLease } from './lease.ts';
import { encodeCounts } from './counts.ts';
import type { PolicyCounts } from './counts.ts';

/**
 * Writes this replica's own Lease: a merge patch per renew (no read, no
 * resourceVersion: nobody else writes it), created on 404, deleted on
 * release. The counts annotation rides on the renew, so publishing counts
 * costs no extra write.
 */
export class LeaseWriter {
  readonly #o: { readonly client: KubeClient; readonly clock: Clock; readonly namespace: string; readonly identity: string; readonly durationMs: number };
  readonly #path: string;
  #current: ShardLease | undefined;
  #acquired = false;

  constructor(options: { readonly client: KubeClient; readonly clock: Clock; readonly namespace: string; readonly identity: string; readonly durationMs: number }) {
    this.#o = options;
    this.#path = `/apis/coordination.k8s.io/v1/namespaces/${options.namespace}/leases`;
  }

  /** The Lease as last written by this replica; undefined before the first write and after release. */
  get current(): ShardLease | undefined {
    return this.#current;
  }

  /** `extra`: more annotations riding on the same write (the peer report). */
  async renew(counts: ReadonlyMap<string, PolicyCounts>, signal: AbortSignal, extra: Readonly<Record<string, string>> = {}): Promise<void> {
    const now = this.#o.clock.now();
    const body = this.#body(now, encodeCounts(counts), extra);
    const name = leaseName(this.#o.identity);
    try {
      const written = await this.#o.client.request<LeaseJson>({ method: 'PATCH', path: `${this.#path}/${name}`, patch: 'merge', body, signal, retry: false });
      this.#set(written);
    } catch (err: unknown) {
      if (!isKubeError(err, 'NotFound')) throw err;
      const created = await this.#o.client.request<LeaseJson>({ method: 'POST', path: this.#path, body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', ...body }, signal, retry: false });
      this.#set(created);
    }
  }

  /** Deletes the Lease so the others take over at once (graceful shutdown); `signal` bounds the call. */
  async release(signal?: AbortSignal): Promise<void> {
    if (this.#current === undefined) return;
    this.#current = undefined;
    try {
      await this.#o.client.request({ method: 'DELETE', path: `${this.#path}/${leaseName(this.#o.identity)}`, retry: false, ...(signal === undefined ? {} : { signal }) });
    } catch (err: unknown) {
      if (!isKubeError(err, 'NotFound')) throw err;
    }
  }

  #set(raw: LeaseJson): void {
    this.#acquired = true;
    this.#current = projectLease(raw);
  }

  #body(now: number, counts: string, extra: Readonly<Record<string, string>>): LeaseJson {
    const time = microTime(now);
    return {
      metadata: { name: leaseName(this.#o.identity), namespace: this.#o.namespace, labels: { [shardLabel]: 'true' }, annotations: { ...extra, [countsAnnotation]: counts } },
      spec: {
        holderIdentity: this.#o.identity,
        leaseDurationSeconds: Math.max(1, Math.round(this.#o.durationMs / 1000)),
        renewTime: time,
        // acquireTime marks when this incarnation took the Lease (also over a stale one of a killed predecessor).
        ...(this.#acquired ? {} : { acquireTime: time }),
      },
    };
  }
}
