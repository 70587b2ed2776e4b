import type { ProbeKind } from '../kernel/index.ts';
import type { InstanceId } from './instance.ts';
import type { ProbeResult } from './result.ts';
import type { TargetKey, TargetState } from './target.ts';

/**
 * Why the committed value was written. Only `probe` reflects the container's
 * own health; write-back must remediate on liveness/startup Failure with cause
 * `probe` only (a `not-running` Failure is the kubelet's bookkeeping for a
 * waiting or exited container, not a verdict).
 *
 * - `initial`: the kind's initial value for a new container instance (§2).
 * - `probe`: a run of probe results reached its threshold (§3.2 step 12).
 * - `not-running`: the container is waiting or terminated (step 6).
 * - `pod-deleting`: liveness/startup quiet shutdown on deletion (step 7).
 */
export const transitionCauses = ['initial', 'probe', 'not-running', 'pod-deleting'] as const;
export type TransitionCause = (typeof transitionCauses)[number];

/**
 * A change of a target's committed value: the only thing the results stage
 * sends downstream (style rule 5, kubelet `setInternal`). Writing the value a
 * target already holds emits nothing.
 */
export interface Transition {
  readonly key: TargetKey;
  readonly kind: ProbeKind;
  /** The value committed before; `null` when nothing was committed yet. */
  readonly from: ProbeResult | null;
  readonly to: ProbeResult;
  readonly cause: TransitionCause;
  /** The probe's output for cause `probe` (for event messages); `''` otherwise. */
  readonly output: string;
  /** The `now` of the call that produced it (the probe's time for cause `probe`). */
  readonly at: number;
  /** The container instance the value is about. */
  readonly instance: InstanceId | null;
}

export interface Change {
  readonly cause: TransitionCause;
  readonly output: string;
  readonly at: number;
}

/**
 * The transition between a value committed before and the state after one
 * call, or `null` when the value did not change. A call that writes twice
 * (a new instance's initial value, then Failure because it is not running)
 * yields one transition from the first value to the last, with the last cause.
 */
export function transitionBetween(
  before: ProbeResult | null,
  after: TargetState,
  change: Change | null,
): Transition | null {
  if (change === null || after.committed === null || after.committed === before) return null;
  return {
    key: after.key,
    kind: after.key.kind,
    from: before,
    to: after.committed,
    cause: change.cause,
    output: change.output,
    at: change.at,
    instance: after.instance,
  };
}
