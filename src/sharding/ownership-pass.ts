import type { Pod } from '../kube/index.ts';

/**
 * What a membership change asks of the host's resync (ADR 0073): ownership
 * switched for every pod at once (`owns` is computed per pod when asked),
 * and the rest of the recompute (each pod's vantage assignment, its handover,
 * the owned count) rides on the resync's own slices instead of one turn of
 * its own before it.
 */
export interface OwnershipPass {
  /** Right before the resync plans the pod again: its handover settled, counted if owned. */
  pod(pod: Pod): void;
  /** Once every pod in the store was passed (never for a pass a newer change superseded). */
  done(): void;
}

/** The pass of one change: `settle` each pod, count those owned, `done` with the count (only while `current`). */
export function ownershipPass(o: {
  readonly settle: (pod: Pod) => void;
  readonly owns: (pod: Pod) => boolean;
  /** Still the latest change (a pass a newer change superseded reports nothing). */
  readonly current: () => boolean;
  readonly done: (owned: number) => void;
}): OwnershipPass {
  let owned = 0;
  return {
    pod: (p) => {
      o.settle(p);
      if (o.owns(p)) owned++;
    },
    done: () => {
      if (o.current()) o.done(owned);
    },
  };
}
