/**
 * What one probe attempt produced. Transport failures (refused, reset,
 * timeout, bad status) are outcomes, never exceptions.
 *
 * - success / warning / failure mirror the kubelet's probe.Result; warning
 *   counts as success (only an unfollowed HTTP redirect produces it).
 * - errored is the kubelet's "err != nil": the attempt is void, retried up to
 *   3 times, and if all attempts error the result is discarded, never counted.
 */
export type Outcome =
  | { readonly kind: 'success' | 'warning' | 'failure'; readonly output: string }
  | { readonly kind: 'errored'; readonly error: string };

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

/** True for the outcomes the kubelet counts as Success. */
export function isSuccess(outcome: Outcome): boolean {
  return outcome.kind === 'success' || outcome.kind === 'warning';
}
