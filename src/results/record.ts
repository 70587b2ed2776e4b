import type { Outcome } from '../probing/outcome.ts';
import type { InstanceId } from './instance.ts';
import { sameInstance } from './instance.ts';
import { countedResult } from './result.ts';
import type { CountedResult } from './result.ts';
import type { TargetState } from './target.ts';
import { transitionBetween } from './transition.ts';
import type { Transition } from './transition.ts';

/**
 * What `record` did with an outcome:
 * - `committed`: the run reached its threshold and the value was written
 *   (emitting only if it changed).
 * - `below-threshold`: counted, not yet written.
 * - `errored`: void; counters and committed value unchanged, `lastError` updated.
 * - `voided`: a failure the stall guard voided (the controller stalled during
 *   the probe, ADR 0016): nothing changes, not even `lastError`, since the
 *   target did nothing wrong. It neither counts toward failureThreshold nor
 *   breaks a run of successes.
 * - `stopped` / `no-instance` / `on-hold` / `stale-instance`: ignored, the
 *   target could not have asked for this probe (or the instance changed while
 *   it ran), so the outcome says nothing about the current instance.
 */
export const recordReasons = [
  'committed',
  'below-threshold',
  'errored',
  'voided',
  'stopped',
  'no-instance',
  'stale-instance',
  'on-hold',
] as const;
export type RecordReason = (typeof recordReasons)[number];

export interface RecordResult {
  readonly state: TargetState;
  readonly reason: RecordReason;
  readonly emitted: Transition | null;
}

/**
 * Steps 11–13 of the kubelet pass (kubelet-probes.md §3.2) for one probe
 * outcome: count the run, commit at the threshold, hold after a liveness
 * Failure or any startup result.
 *
 * @param now the probe's time (ms); it becomes the transition's `at`, which
 *   write-back uses as `lastProbeTime`.
 * @param probed the instance the probe was started for (`decision.state.instance`);
 *   when given and no longer current, the outcome is ignored (§3.10 stale results).
 *   @default undefined (not checked)
 */
export function record(state: TargetState, outcome: Outcome, now: number, probed?: InstanceId): RecordResult {
  const ignored = ignoreReason(state, probed);
  if (ignored !== null) return { state, reason: ignored, emitted: null };
  if (outcome.kind === 'errored' && outcome.stall !== undefined) return { state, reason: 'voided', emitted: null };
  if (outcome.kind === 'errored') {
    const consecutive = (state.lastError?.consecutive ?? 0) + 1;
    return { state: { ...state, lastError: { error: outcome.error, at: now, consecutive } }, reason: 'errored', emitted: null };
  }
  const result = countedResult(outcome);
  const resultRun = state.lastResult === result ? state.resultRun + 1 : 1;
  const counted: TargetState = { ...state, lastResult: result, resultRun, lastError: null };
  const { successThreshold, failureThreshold } = state.config;
  if (resultRun < (result === 'success' ? successThreshold : failureThreshold)) {
    return { state: counted, reason: 'below-threshold', emitted: null };
  }
  const written: TargetState = { ...counted, committed: result };
  const next = holds(state, result) ? { ...written, onHold: true, resultRun: 0 } : written;
  const emitted = transitionBetween(state.committed, next, { cause: 'probe', output: outcome.output, at: now });
  return { state: next, reason: 'committed', emitted };
}

function ignoreReason(state: TargetState, probed: InstanceId | undefined): RecordReason | null {
  if (state.stopped) return 'stopped';
  if (state.instance === null) return 'no-instance';
  if (probed !== undefined && !sameInstance(probed, state.instance)) return 'stale-instance';
  if (state.onHold) return 'on-hold';
  return null;
}

/** Step 13 (§3.3): liveness Failure, or any startup result; readiness never holds. */
function holds(state: TargetState, result: CountedResult): boolean {
  const { kind } = state.key;
  return kind === 'startup' || (kind === 'liveness' && result === 'failure');
}

/**
 * The committed value when the target's own probes confirm it: the last
 * counted result equals it and its run has reached the threshold. `null` for
 * a value that is only inherited (a seed) or initial, or not yet re-confirmed
 * after a reconfiguration. Write-back uses this to repair a server-side
 * condition that another writer changed, without ever acting on a value its
 * own probes have not reached (design rule 5).
 */
export function confirmedResult(state: TargetState): CountedResult | null {
  const last = state.lastResult;
  if (last === null || state.stopped || state.committed !== last) return null;
  return state.resultRun >= (last === 'success' ? state.config.successThreshold : state.config.failureThreshold) ? last : null;
}
