import { Levels } from './levels.ts';

/**
 * Whose pass a probe pass is. Probe slots are shared fairly between
 * namespaces, and within a namespace between policies (DESIGN.md §4b: one
 * namespace cannot starve another of probe slots).
 */
export interface Share {
  readonly namespace: string;
  readonly policy: string;
}

/** A policy's queue of waiting items and its passes in flight. */
export interface Slot<T> {
  readonly tenant: Tenant<T>;
  readonly policy: string;
  inFlight: number;
  items: T[];
  head: number;
}

/** A namespace: its active policies and its passes in flight. */
interface Tenant<T> {
  readonly namespace: string;
  inFlight: number;
  /** Its policies' passes in flight, by level. */
  readonly levels: Levels;
  /** Policies with items waiting or passes in flight; idle ones are deleted. */
  readonly slots: Map<string, Slot<T>>;
  /** The policies with items waiting, in round-robin order. */
  readonly waiting: Set<Slot<T>>;
}

export interface Admission<T> {
  readonly item: T;
  /** Hand back to `done()` when the pass ends. */
  readonly slot: Slot<T>;
}

const waitingCount = <T>(s: Slot<T>): number => s.items.length - s.head;

/** Moves a member of a Set to its end (insertion order), unless it is the only one. */
function toBack<S>(set: Set<S>, member: S): void {
  if (set.size === 1) return;
  set.delete(member);
  set.add(member);
}

/** The first member with the fewest passes in flight (ties keep round-robin order). */
function leastBusy<S extends { readonly inFlight: number }>(set: ReadonlySet<S>): S | undefined {
  let best: S | undefined;
  for (const s of set) {
    if (best === undefined || s.inFlight < best.inFlight) best = s;
    if (best.inFlight === 0) break;
  }
  return best;
}

/**
 * Fair admission of waiting passes into a pool of `concurrency` slots.
 *
 * - Order: the namespace with the fewest passes in flight goes first, and in
 *   it the policy with the fewest (max-min fairness); ties go round-robin.
 *   Work-conserving: while the pool has a free slot, any waiting pass gets
 *   it, so one busy namespace alone can use every slot.
 * - Reclaim: a slot held by a slow pass (a target that accepts and never
 *   answers holds it for its whole timeout) is not freed by waiting. So when
 *   the pool is full, a namespace below its share
 *   `max(1, ceil(concurrency / active namespaces))` — or a policy below
 *   `max(1, ceil(namespace share / its active policies))` — is admitted
 *   anyway, for as many extra passes as others hold beyond their share.
 *   Those borrowers get no new slot until the pool is below `concurrency`
 *   again. Nothing is cancelled, and passes in flight never exceed
 *   `2 × concurrency`.
 *
 * Invariant: `inFlight` of the pool, of each tenant and of each slot is the
 * number of admissions not yet `done()`; tenants and slots with nothing
 * waiting and nothing in flight are deleted, so "active" is "present".
 */
export class FairShare<T> {
  readonly #concurrency: number;
  readonly #ceiling: number;
  readonly #tenants = new Map<string, Tenant<T>>();
  /** Tenants with items waiting, in round-robin order. */
  readonly #waiting = new Set<Tenant<T>>();
  /** The namespaces' passes in flight, by level. */
  readonly #levels = new Levels();
  #inFlight = 0;
  #queued = 0;

  constructor(concurrency: number) {
    if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError(`concurrency must be a positive integer, got ${String(concurrency)}`);
    this.#concurrency = concurrency;
    this.#ceiling = 2 * concurrency;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  get queued(): number {
    return this.#queued;
  }

  /** Passes in flight per active namespace. */
  inFlightByNamespace(): Map<string, number> {
    const out = new Map<string, number>();
    for (const t of this.#tenants.values()) out.set(t.namespace, t.inFlight);
    return out;
  }

  push(share: Share, item: T): void {
    let tenant = this.#tenants.get(share.namespace);
    if (tenant === undefined) {
      tenant = { namespace: share.namespace, inFlight: 0, levels: new Levels(), slots: new Map(), waiting: new Set() };
      this.#tenants.set(share.namespace, tenant);
    }
    let slot = tenant.slots.get(share.policy);
    if (slot === undefined) {
      slot = { tenant, policy: share.policy, inFlight: 0, items: [], head: 0 };
      tenant.slots.set(share.policy, slot);
    }
    slot.items.push(item);
    this.#queued++;
    tenant.waiting.add(slot);
    this.#waiting.add(tenant);
  }

  /** The next waiting item that may start now, or undefined. Call until undefined. */
  next(): Admission<T> | undefined {
    if (this.#inFlight >= this.#ceiling) return undefined;
    const tenant = leastBusy(this.#waiting);
    const slot = tenant === undefined ? undefined : leastBusy(tenant.waiting);
    if (tenant === undefined || slot === undefined) return undefined;
    if (this.#inFlight >= this.#concurrency && !this.#mayReclaim(tenant, slot)) return undefined;
    const item = slot.items[slot.head] as T;
    slot.head++;
    this.#queued--;
    // Round-robin: the one just served goes to the back of its set. Moving
    // the only member is skipped: a delete and an add on a one-member Set
    // shrink and regrow its table, an allocation per pass (issue 31 item 6).
    if (waitingCount(slot) === 0) {
      tenant.waiting.delete(slot);
      slot.items = [];
      slot.head = 0;
    } else {
      toBack(tenant.waiting, slot);
      // A queue that never empties (a saturated policy) drops its consumed head now and then.
      if (slot.head >= 1024 && slot.head * 2 >= slot.items.length) {
        slot.items = slot.items.slice(slot.head);
        slot.head = 0;
      }
    }
    if (tenant.waiting.size === 0) this.#waiting.delete(tenant);
    else toBack(this.#waiting, tenant);
    tenant.levels.up(slot.inFlight++);
    this.#levels.up(tenant.inFlight++);
    this.#inFlight++;
    return { item, slot };
  }

  /** An admitted pass ended. */
  done(slot: Slot<T>): void {
    const tenant = slot.tenant;
    tenant.levels.down(slot.inFlight--);
    this.#levels.down(tenant.inFlight--);
    this.#inFlight--;
    if (slot.inFlight === 0 && waitingCount(slot) === 0) tenant.slots.delete(slot.policy);
    if (tenant.slots.size === 0) this.#tenants.delete(tenant.namespace);
  }

  /** Drops every waiting item (passes in flight still end with `done()`). */
  clear(): void {
    for (const tenant of this.#waiting) {
      for (const slot of tenant.waiting) {
        slot.items = [];
        slot.head = 0;
        if (slot.inFlight === 0) tenant.slots.delete(slot.policy);
      }
      tenant.waiting.clear();
      if (tenant.slots.size === 0) this.#tenants.delete(tenant.namespace);
    }
    this.#waiting.clear();
    this.#queued = 0;
  }

  #mayReclaim(tenant: Tenant<T>, slot: Slot<T>): boolean {
    const over = this.#inFlight - this.#concurrency;
    const nsShare = Math.max(1, Math.ceil(this.#concurrency / this.#tenants.size));
    // Slots held beyond a share were borrowed while others were idle.
    if (tenant.inFlight < nsShare) return this.#levels.borrowedExceeds(nsShare, over);
    const policyShare = Math.max(1, Math.ceil(nsShare / tenant.slots.size));
    return slot.inFlight < policyShare && tenant.levels.borrowedExceeds(policyShare, over);
  }
}
