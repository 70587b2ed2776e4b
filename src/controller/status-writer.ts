import type { Clock } from '../kernel/index.ts';
import type { KubeClient } from '../kube/index.ts';
import { computeStatus, sameStatus } from '../status/index.ts';
import type { PolicyStatus, StatusInput } from '../status/index.ts';
import { rfc3339 } from './conditions.ts';
import type { Observer } from './events.ts';
import type { PolicyEntry } from './policies.ts';

/**
 * Writes ProbePolicy `.status` with a merge patch on the status subresource
 * (custom resources refuse strategic merge), only when it changed, one
 * write per policy in flight.
 */
export class StatusWriter {
  readonly #client: KubeClient;
  readonly #clock: Clock;
  readonly #observe: Observer;
  readonly #last = new Map<string, PolicyStatus>();
  readonly #inFlight = new Set<string>();

  constructor(deps: { readonly client: KubeClient; readonly clock: Clock; readonly observe: Observer }) {
    this.#client = deps.client;
    this.#clock = deps.clock;
    this.#observe = deps.observe;
  }

  forget(key: string): void {
    this.#last.delete(key);
  }

  write(entry: PolicyEntry, input: Omit<StatusInput, 'now'>): void {
    if (this.#inFlight.has(entry.key)) return;
    const previous = this.#last.get(entry.key) ?? entry.stored;
    const status = computeStatus({ ...input, now: rfc3339(this.#clock.now()) }, previous);
    if (sameStatus(previous, status)) return;
    this.#inFlight.add(entry.key);
    const ref = { namespace: entry.namespace, name: entry.name, uid: entry.uid };
    void this.#client
      .request({
        method: 'PATCH',
        path: `/apis/outprobe.io/v1alpha1/namespaces/${entry.namespace}/probepolicies/${entry.name}/status`,
        patch: 'merge',
        body: { status },
        retry: true,
      })
      .then(
        () => {
          this.#last.set(entry.key, status);
          this.#observe({ type: 'status-write', policy: ref, result: 'written' });
        },
        (error: unknown) => this.#observe({ type: 'status-write', policy: ref, result: 'failed', error }),
      )
      .finally(() => this.#inFlight.delete(entry.key));
  }
}
