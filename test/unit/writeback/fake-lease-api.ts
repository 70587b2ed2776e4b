import { KubeApiError } from '../../../src/kube/index.ts';
import type { KubeClient, LeaseJson } from '../../../src/kube/index.ts';

/**
 * Leases in memory with the API server's optimistic concurrency: a PUT
 * whose resourceVersion is not the stored one, and a POST of a name that
 * exists, answer 409. `beforeWrite` runs between a writer's read and its
 * write (to interleave another writer there).
 */
export class FakeLeaseApi {
  readonly leases = new Map<string, LeaseJson>();
  #rv = 1;
  writes = 0;
  conflicts = 0;
  beforeWrite: (() => Promise<void>) | undefined;

  client(): KubeClient {
    return { request: (o: { method: string; path: string; body?: unknown }) => this.#request(o) } as unknown as KubeClient;
  }

  async #request(o: { readonly method: string; readonly path: string; readonly body?: unknown }): Promise<unknown> {
    const name = o.path.split('/leases/')[1];
    if (o.method === 'GET') {
      const l = name === undefined ? undefined : this.leases.get(name);
      if (l === undefined) throw new KubeApiError({ code: 'NotFound', status: 404, reason: 'NotFound', message: 'not found' });
      return structuredClone(l);
    }
    const hook = this.beforeWrite;
    this.beforeWrite = undefined;
    if (hook !== undefined) await hook();
    const body = o.body as LeaseJson;
    const key = body.metadata?.name ?? '';
    if (o.method === 'POST' && this.leases.has(key)) {
      this.conflicts++;
      throw new KubeApiError({ code: 'Conflict', status: 409, reason: 'AlreadyExists', message: 'already exists' });
    }
    if (o.method === 'PUT' && this.leases.get(key)?.metadata?.resourceVersion !== body.metadata?.resourceVersion) {
      this.conflicts++;
      throw new KubeApiError({ code: 'Conflict', status: 409, reason: 'Conflict', message: 'the object has been modified' });
    }
    this.writes++;
    const stored = { ...body, metadata: { ...body.metadata, resourceVersion: String(++this.#rv) } };
    this.leases.set(key, stored);
    return structuredClone(stored);
  }
}
