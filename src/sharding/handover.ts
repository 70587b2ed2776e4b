import { owner } from './rendezvous.ts';

/** A pod this replica gained: who owned it before and when it changed hands. */
export interface Gain {
  readonly previous: string | undefined;
  readonly at: number;
}

/** Who is responsible for a pod among members (vantage rules, ADR 0040). */
export type OwnerOf = (members: readonly string[], uid: string) => string | undefined;

/** A membership change not yet applied to every pod (ADR 0073). */
interface Change {
  readonly seq: number;
  /** The members before; for the first computation, every member but this replica. */
  readonly old: readonly string[];
  readonly after: readonly string[];
  readonly at: number;
  readonly ownerOf: OwnerOf;
}

/**
 * Handover bookkeeping, pure: which pods this replica gained from whom and
 * when, so remediation of a gained pod waits until the previous owner can
 * no longer act on it (DESIGN §5). Readiness is reversible and is not gated.
 *
 * A membership change is applied pod by pod (ADR 0073): `begin` records it
 * in constant time, `settle` applies every change recorded since the pod was
 * last settled, in order, and `finish` ends the round once every pod known
 * was settled (the sliced resync's pass). Asking about a pod (`gain`,
 * `mayRemediate`) settles it first, so an answer is never one change behind,
 * whichever pods the pass has reached.
 */
export class Handover {
  readonly #self: string;
  readonly #leaseDurationMs: number;
  readonly #gains = new Map<string, Gain>();
  /** Changes since the last `finish`, oldest first. */
  #changes: Change[] = [];
  /** pod UID → the last change applied to it (only pods settled since the last `finish`). */
  readonly #settled = new Map<string, number>();
  #seq = 0;

  constructor(self: string, leaseDurationMs: number) {
    this.#self = self;
    this.#leaseDurationMs = leaseDurationMs;
  }

  /**
   * Membership changed from `before` to `after` at `now` (the synchronous
   * form of begin, settle every pod, finish); `uids` are the pods known now.
   * Pods this replica now owns and did not before are recorded as gained
   * from their old owner; pods it lost, or that are gone, are dropped. For
   * the first computation pass `before` = undefined: the old owner is then
   * whoever would own the pod without this replica (it may have been probing
   * it while this replica was starting).
   */
  update(before: readonly string[] | undefined, after: readonly string[], uids: Iterable<string>, now: number, ownerOf: OwnerOf = owner): void {
    this.begin(before, after, now, ownerOf);
    for (const uid of uids) this.settle(uid);
    this.finish();
  }

  /** Records a membership change (constant time); each pod gets it when it is settled. */
  begin(before: readonly string[] | undefined, after: readonly string[], now: number, ownerOf: OwnerOf = owner): void {
    this.#changes.push({ seq: ++this.#seq, old: before ?? after.filter((m) => m !== this.#self), after, at: now, ownerOf });
  }

  /** A change recorded since the last `finish` has not been applied to the pod yet. */
  pending(uid: string): boolean {
    return this.#changes.length > 0 && this.#settled.get(uid) !== this.#seq;
  }

  /** Applies to the pod, in order, every change it has not had yet. */
  settle(uid: string): void {
    if (!this.pending(uid)) return;
    const from = this.#settled.get(uid) ?? 0;
    for (const c of this.#changes) if (c.seq > from) this.#apply(c, uid);
    this.#settled.set(uid, this.#seq);
  }

  /**
   * Every pod known was settled since the last change: the gains of pods not
   * settled (gone meanwhile) are dropped and the round ends. A pod that
   * appears later was not there when the members changed: it gained nothing.
   */
  finish(): void {
    if (this.#changes.length === 0) return;
    for (const uid of this.#gains.keys()) if (this.#settled.get(uid) !== this.#seq) this.#gains.delete(uid);
    this.#changes = [];
    this.#settled.clear();
  }

  gain(uid: string): Gain | undefined {
    this.settle(uid);
    return this.#gains.get(uid);
  }

  /**
   * May this replica remediate the gained pod at `now`? Yes when it was never
   * handed over, when the previous owner is no longer live (Lease expired or
   * released), or, while it is still live (scale-up), once a full lease
   * duration has passed since the change: by then the old owner has seen the
   * new membership (it recomputes at least every renew) and stopped.
   */
  mayRemediate(uid: string, live: readonly string[], now: number): boolean {
    const g = this.gain(uid);
    if (g === undefined || g.previous === undefined || !live.includes(g.previous)) return true;
    return now - g.at >= this.#leaseDurationMs;
  }

  get size(): number {
    return this.#gains.size;
  }

  /** Changes recorded and not yet finished (a pass in progress, or superseded ones it will carry). */
  get unfinished(): number {
    return this.#changes.length;
  }

  #apply(c: Change, uid: string): void {
    if (c.ownerOf(c.after, uid) !== this.#self) {
      this.#gains.delete(uid);
      return;
    }
    const previous = c.ownerOf(c.old, uid);
    if (previous !== this.#self && previous !== undefined) this.#gains.set(uid, { previous, at: c.at });
  }
}
