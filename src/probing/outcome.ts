/**
 * What one probe attempt produced. Transport failures (refused, reset,
 * timeout, bad status) are outcomes, never exceptions.
 *
 * - success / warning / failure mirror the kubelet's probe.Result; warning
 *   counts as success (only an unfollowed HTTP redirect produces it).
 * - errored is the kubelet's "err != nil": the attempt is void, retried up to
 *   3 times, and if all attempts error the result is discarded, never counted.
 *   An errored outcome that carries `stall` is a failure the stall guard
 *   voided (ADR 0016): the controller itself stalled during the attempt.
 */
export type Outcome =
  | { readonly kind: 'success' | 'warning' | 'failure'; readonly output: string }
  | { readonly kind: 'errored'; readonly error: string; readonly stall?: StallNote };

/**
 * Why the stall guard voided a failed attempt (ADR 0016):
 * - `late-deadline`: the attempt ended `stallMs` after its deadline
 *   (started + timeout), i.e. its timeout timer fired that late;
 * - `loop-stall`: the event loop was blocked for `stallMs` in one piece
 *   while the attempt ran, so the socket could not be read in time.
 */
export interface StallNote {
  readonly cause: 'late-deadline' | 'loop-stall';
  readonly stallMs: number;
  readonly boundMs: number;
  /** The failure the attempt reported, kept for the debug log. */
  readonly failure: string;
}

export function success(output: string): Outcome {
  return { kind: 'success', output };
}
export function warning(output: string): Outcome {
  return { kind: 'warning', output };
}
export function failure(output: string): Outcome {
  return { kind: 'failure', output };
}
export function errored(error: string): Outcome {
  return { kind: 'errored', error };
}
/** A failure the stall guard voided: errored (retried, never counted), with the reason attached. */
export function voided(note: StallNote): Outcome {
  const what = note.cause === 'late-deadline' ? `its deadline fired ${seconds(note.stallMs)} late` : `the event loop stalled for ${seconds(note.stallMs)} during it`;
  return { kind: 'errored', error: `probe void: ${what} (stall bound ${seconds(note.boundMs)}); not counted`, stall: note };
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(3)}s`;

/** True for the outcomes the kubelet counts as Success. */
export function isSuccess(outcome: Outcome): boolean {
  return outcome.kind === 'success' || outcome.kind === 'warning';
}
