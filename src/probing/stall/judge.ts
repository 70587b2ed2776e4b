import type { Outcome, StallNote } from '../outcome.ts';

/**
 * One probe attempt's timing, all in ms of one monotonic clock.
 */
export interface AttemptTiming {
  readonly startedAt: number;
  readonly endedAt: number;
  /** The attempt's own deadline: timeoutSeconds × 1000. */
  readonly timeoutMs: number;
  /**
   * The longest single event-loop stall that overlapped [startedAt, endedAt],
   * counting only its part inside that window (see StallLog).
   */
  readonly stalledMs: number;
}

/**
 * The stall guard's decision for one attempt (ADR 0016), pure. A failure is
 * void when the controller, not the target, may have caused it:
 *
 * - its deadline fired late: the attempt ended more than `boundMs` after
 *   startedAt + timeoutMs. An executor ends an attempt at its deadline at the
 *   latest, so this lateness is timer drift, whatever stalled the process;
 * - or the event loop was stalled for more than `boundMs` in one piece inside
 *   the attempt: a reply may have sat unread in the socket buffer while the
 *   timeout ran on the wall clock, and a timer and a socket read that become
 *   due during one stall run in timer-first order when it ends.
 *
 * Successes are never void (a stall cannot make a dead target answer), nor
 * are failures that fit in the bound. Errored outcomes stay as they are.
 * Returns null when the outcome counts.
 */
export function judgeAttempt(outcome: Outcome, timing: AttemptTiming, boundMs: number): StallNote | null {
  if (outcome.kind !== 'failure') return null;
  const lateMs = timing.endedAt - timing.startedAt - timing.timeoutMs;
  const stallMs = Math.max(lateMs, timing.stalledMs);
  if (!(stallMs > boundMs)) return null;
  return { cause: lateMs >= timing.stalledMs ? 'late-deadline' : 'loop-stall', stallMs, boundMs, failure: outcome.output };
}
