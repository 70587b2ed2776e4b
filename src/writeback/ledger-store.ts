import type { Clock } from '../kernel/index.ts';
import { isKubeError } from '../kube/index.ts';
import type { KubeClient, LeaseJson } from '../kube/index.ts';
import type { BudgetDecision } from './budget.ts';
import { appendEntry, decodeLedger, encodeLedger, ledgerAnnotation, ledgerLabel, ledgerName, pruneLedger, removeEntry } from './ledger.ts';
import type { LedgerEntry } from './ledger.ts';

export interface LedgerStoreOptions {
  readonly client: KubeClient;
  readonly clock: Clock;
  /** Where the ledger Leases live: the release namespace, beside the shard Leases. */
  readonly namespace: string;
  /** This replica's identity, written into its entries. */
  readonly replica: string;
  /** How long an entry counts. @default 120000 */
  readonly windowMs?: number;
  /** Conflicting writes re-read and re-decided before giving up. @default 8 */
  readonly attempts?: number;
}

/** What a reservation ended with: the decision over the ledger as written (allowed: the entry is in it). */
export type Reservation = BudgetDecision;

/**
 * The ledger's thin I/O shell (ADR 0033): reads a policy's ledger Lease,
 * lets the caller decide over its entries, and appends the entry with the
 * read resourceVersion as precondition (a create when there is none). A
 * conflict means another replica wrote in between: read again and decide
 * again, so two replicas racing for the last unit of maxUnavailable never
 * both get it. Keeps the last entries read per policy for the decisions
 * taken between two writes.
 */
export class LedgerStore {
  readonly #o: LedgerStoreOptions;
  readonly #path: string;
  readonly #cache = new Map<string, LedgerEntry[]>();

  constructor(options: LedgerStoreOptions) {
    this.#o = options;
    this.#path = `/apis/coordination.k8s.io/v1/namespaces/${options.namespace}/leases`;
  }

  get windowMs(): number {
    return this.#o.windowMs ?? 120_000;
  }

  get replica(): string {
    return this.#o.replica;
  }

  /** The policy's entries as last read or written, inside the window now. */
  cached(policyUid: string): LedgerEntry[] {
    return pruneLedger(this.#cache.get(policyUid) ?? [], this.#o.clock.now(), this.windowMs);
  }

  /**
   * Appends an entry for `pod` when `decide`, given the fresh entries (inside
   * the window, without the pod's own), allows it. Throws on an API error
   * other than a conflict, or when conflicts outlast the attempts.
   */
  async reserve(policyUid: string, pod: { readonly uid: string; readonly key: string }, decide: (entries: readonly LedgerEntry[]) => BudgetDecision, signal?: AbortSignal): Promise<Reservation> {
    const attempts = this.#o.attempts ?? 8;
    for (let i = 0; ; i++) {
      const lease = await this.#read(policyUid, signal);
      const now = this.#o.clock.now();
      const entries = pruneLedger(decodeLedger(lease?.metadata?.annotations?.[ledgerAnnotation]), now, this.windowMs);
      this.#cache.set(policyUid, entries);
      const decision = decide(entries.filter((e) => e.uid !== pod.uid));
      if (!decision.allow) return decision;
      const next = appendEntry(entries, { uid: pod.uid, key: pod.key, replica: this.#o.replica, at: now }, now, this.windowMs);
      try {
        await this.#write(policyUid, lease, next, signal);
        this.#cache.set(policyUid, next);
        return decision;
      } catch (err: unknown) {
        if (!isKubeError(err, 'Conflict') || i + 1 >= attempts) throw err;
      }
    }
  }

  /** Takes this replica's entry for the pod out again (the remediation did not happen). Best effort: the window prunes it anyway. */
  async release(policyUid: string, podUid: string, signal?: AbortSignal): Promise<void> {
    const attempts = this.#o.attempts ?? 8;
    for (let i = 0; i < attempts; i++) {
      const lease = await this.#read(policyUid, signal);
      if (lease === undefined) return;
      const now = this.#o.clock.now();
      const entries = pruneLedger(decodeLedger(lease.metadata?.annotations?.[ledgerAnnotation]), now, this.windowMs);
      const next = removeEntry(entries, podUid, this.#o.replica);
      this.#cache.set(policyUid, entries);
      if (next.length === entries.length) return;
      try {
        await this.#write(policyUid, lease, next, signal);
        this.#cache.set(policyUid, next);
        return;
      } catch (err: unknown) {
        if (!isKubeError(err, 'Conflict')) throw err;
      }
    }
  }

  async #read(policyUid: string, signal?: AbortSignal): Promise<LeaseJson | undefined> {
    try {
      return await this.#o.client.request<LeaseJson>({ method: 'GET', path: `${this.#path}/${ledgerName(policyUid)}`, ...(signal === undefined ? {} : { signal }) });
    } catch (err: unknown) {
      if (isKubeError(err, 'NotFound')) return undefined;
      throw err;
    }
  }

  /** An update with the read resourceVersion, or a create when there was no Lease (409 AlreadyExists when another replica created it first). */
  async #write(policyUid: string, read: LeaseJson | undefined, entries: readonly LedgerEntry[], signal?: AbortSignal): Promise<void> {
    const name = ledgerName(policyUid);
    const metadata = {
      name,
      namespace: this.#o.namespace,
      labels: { ...read?.metadata?.labels, [ledgerLabel]: 'true' },
      annotations: { ...read?.metadata?.annotations, [ledgerAnnotation]: encodeLedger(entries) },
      ...(read?.metadata?.resourceVersion === undefined ? {} : { resourceVersion: read.metadata.resourceVersion }),
    };
    const body = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata, spec: { ...read?.spec, holderIdentity: this.#o.replica } };
    const opts = { body, retry: false, ...(signal === undefined ? {} : { signal }) };
    if (read === undefined) await this.#o.client.request({ method: 'POST', path: this.#path, ...opts });
    else await this.#o.client.request({ method: 'PUT', path: `${this.#path}/${name}`, ...opts });
  }
}
