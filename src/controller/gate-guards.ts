import type { Clock } from '../kernel/index.ts';
import type { GateCondition, PodRef, WriteContext } from '../writeback/index.ts';
import type { Question } from '../secondopinion/index.ts';
import { releaseReasons } from '../failopen/index.ts';
import { noVantageReason } from './no-vantage.ts';
import { gateSecondOpinion } from './second-opinion.ts';
import type { PolicyEntry } from './policies.ts';
import type { ReadinessGuard } from './readiness-guard.ts';
import type { TargetSet } from './target-set.ts';

/** Why a gate write is held back, and since when (what `kubectl outprobe explain` shows). */
export interface HeldWrite {
  readonly status: string;
  readonly reason: string;
  readonly guard: 'readiness' | 'peer-guard' | 'second-opinion';
  readonly since: number;
}

export interface GateGuardDeps {
  readonly clock: Clock;
  readonly targets: () => TargetSet;
  readonly readiness: () => ReadinessGuard;
  readonly policies: ReadonlyMap<string, PolicyEntry>;
  /** The peer write guard (ADR 0017). @default always */
  readonly confirmedSince?: ((since: number) => boolean) | undefined;
  /** The second opinion (ADR 0018). @default always */
  readonly secondOpinion?: { confirm(question: Question): boolean } | undefined;
  /** A False another vantage's failure backs (ADR 0058): it needs no second opinion. @default never */
  readonly backed?: ((condition: GateCondition, podUid: string) => boolean) | undefined;
  /** Does this replica own the pod now (sharding)? A write for a pod it lost is never sent (ADR 0072). @default always */
  readonly owns?: ((pod: PodRef) => boolean) | undefined;
  /** Once per False write the peer guard holds back (its metric). */
  readonly onPeerHeld?: (() => void) | undefined;
}

/**
 * The guards a gate write passes right before it is sent, in order:
 * ownership (a pod this replica no longer owns gets no write, ADR 0072), the
 * readiness cap (ADR 0032: no False beyond this replica's allowance), the
 * peer write guard (ADR 0017) and the second opinion (ADR 0018). A True is
 * never held. What each refusal was for is kept per pod and condition type
 * until the write goes out, so one pod can be explained.
 */
export class GateGuards {
  readonly #d: GateGuardDeps;
  /** pod UID → condition type → why its write is held. */
  readonly #held = new Map<string, Map<string, HeldWrite>>();
  /** The last refusal was the peer guard's (GateWriter calls onHeld right after mayWrite). */
  #byPeerGuard = false;

  constructor(deps: GateGuardDeps) {
    this.#d = deps;
  }

  /** GateWriter's `mayWrite`. */
  readonly mayWrite = (c: GateCondition, since: number, ctx: WriteContext): boolean => {
    const why = this.#why(c, since, ctx);
    if (why === null) {
      this.#clear(ctx.pod.uid, c.type);
      this.#d.readiness().sending(c, ctx.pod);
      return true;
    }
    const byType = this.#held.get(ctx.pod.uid) ?? new Map<string, HeldWrite>();
    const before = byType.get(c.type);
    byType.set(c.type, { status: c.status, reason: why.reason, guard: why.guard, since: before?.status === c.status ? before.since : this.#d.clock.now() });
    this.#held.set(ctx.pod.uid, byType);
    return false;
  };

  /** GateWriter's `onHeld`: counted as the peer guard's only when the peer guard held it (the second opinion has its own metrics). */
  readonly onHeld = (): void => {
    if (this.#byPeerGuard) this.#d.onPeerHeld?.();
  };

  /** Why the pod's gate writes are held now, by condition type (empty when none is). */
  heldFor(uid: string): ReadonlyMap<string, HeldWrite> {
    return this.#held.get(uid) ?? new Map();
  }

  /** The pod is gone: nothing of it is kept. */
  forget(uid: string): void {
    this.#held.delete(uid);
  }

  #clear(uid: string, type: string): void {
    const byType = this.#held.get(uid);
    if (byType === undefined) return;
    byType.delete(type);
    if (byType.size === 0) this.#held.delete(uid);
  }

  #why(c: GateCondition, since: number, ctx: WriteContext): { readonly reason: string; readonly guard: HeldWrite['guard'] } | null {
    this.#byPeerGuard = false;
    // Ownership moved and the resync has not reached this pod yet (its slices, ADR 0072): no verdict goes, True or
    // False. A fail-open write is no verdict: releases (ADR 0035: orphans are by definition nobody's) and NoVantage
    // (ADR 0040: nobody may probe the pod) are written by a replica that owns no verdict on the pod.
    if (this.#d.owns?.(ctx.pod) === false && !failOpen(c)) return { reason: 'this replica no longer owns the pod (shard membership changed; its targets are being dropped)', guard: 'readiness' };
    const capped = this.#d.readiness().whyHeld(c, ctx.pod);
    if (capped !== null) return { reason: capped, guard: 'readiness' };
    if (c.status === 'True') return null;
    if (this.#d.confirmedSince?.(since) === false) {
      this.#byPeerGuard = true;
      return { reason: 'peer write guard: the failure is newer than the last time this replica saw its peers reach their pods (ADR 0017)', guard: 'peer-guard' };
    }
    // Another vantage's failure backs it (ADR 0058): the second opinion is already in.
    if (this.#d.backed?.(c, ctx.pod.uid) === true) return null;
    const so = this.#d.secondOpinion;
    if (so === undefined || gateSecondOpinion(so, { targets: this.#d.targets(), policies: this.#d.policies }, { condition: c, since, ctx })) return null;
    return { reason: 'second opinion: asked another replica to probe the pod from its vantage; waiting for it to agree (ADR 0018)', guard: 'second-opinion' };
  }
}

/** A True that keeps a gate open without judging the pod: a release (ADR 0035) or NoVantage (ADR 0040). */
function failOpen(c: GateCondition): boolean {
  return c.status === 'True' && (releaseReasons.includes(c.reason) || c.reason === noVantageReason);
}
