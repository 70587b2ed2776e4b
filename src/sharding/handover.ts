import { owner } from './rendezvous.ts';

/** A pod this replica gained: who owned it before and when it changed hands. */
export interface Gain {
  readonly previous: string | undefined;
  readonly at: number;
}

/**
 * Handover bookkeeping, pure: which pods this replica gained from whom and
 * when, so remediation of a gained pod waits until the previous owner can
 * no longer act on it (DESIGN §5). Readiness is reversible and is not gated.
 */
export class Handover {
  readonly #self: string;
  readonly #leaseDurationMs: number;
  readonly #gains = new Map<string, Gain>();

  constructor(self: string, leaseDurationMs: number) {
    this.#self = self;
    this.#leaseDurationMs = leaseDurationMs;
  }

  /**
   * Membership changed from `before` to `after` at `now`; `uids` are the pods
   * known now. Pods this replica now owns and did not before are recorded as
   * gained from their old owner; pods it lost, or that are gone, are dropped.
   * For the first computation pass `before` = undefined: the old owner is
   * then whoever would own the pod without this replica (it may have been
   * probing it while this replica was starting). `ownerOf`: who is
   * responsible for a pod among members (vantage rules, ADR 0040).
   */
  update(before: readonly string[] | undefined, after: readonly string[], uids: Iterable<string>, now: number, ownerOf: (members: readonly string[], uid: string) => string | undefined = owner): void {
    const old = before ?? after.filter((m) => m !== this.#self);
    const seen = new Set<string>();
    for (const uid of uids) {
      seen.add(uid);
      if (ownerOf(after, uid) !== this.#self) {
        this.#gains.delete(uid);
        continue;
      }
      const previous = ownerOf(old, uid);
      if (previous !== this.#self && previous !== undefined) this.#gains.set(uid, { previous, at: now });
    }
    for (const uid of this.#gains.keys()) if (!seen.has(uid)) this.#gains.delete(uid);
  }

  gain(uid: string): Gain | undefined {
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
    const g = this.#gains.get(uid);
    if (g === undefined || g.previous === undefined || !live.includes(g.previous)) return true;
    return now - g.at >= this.#leaseDurationMs;
  }

  get size(): number {
    return this.#gains.size;
  }
}
