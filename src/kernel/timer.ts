/**
 * setTimeout's largest delay (2^31 − 1 ms, about 24.8 days). Node turns any
 * longer delay into 1 ms (with a TimeoutOverflowWarning), so a probe timeout
 * beyond it would fire at once: every timer armed from user input goes
 * through `setLongTimeout`.
 */
export const maxTimerMs = 2_147_483_647;

/** Cancels a timer armed by `setLongTimeout`; calling it twice is harmless. */
export type CancelTimer = () => void;

/**
 * setTimeout for any delay: delays above `maxTimerMs` are chained in steps
 * of at most `maxTimerMs`, so the callback runs after `ms` (never early).
 * A non-finite delay never fires; a negative or NaN one fires at once, as
 * setTimeout does.
 */
export function setLongTimeout(callback: () => void, ms: number): CancelTimer {
  let timer: NodeJS.Timeout | undefined;
  let cancelled = false;
  const arm = (left: number): void => {
    if (cancelled) return;
    if (left > maxTimerMs) {
      timer = setTimeout(() => arm(left - maxTimerMs), maxTimerMs);
      return;
    }
    timer = setTimeout(callback, Number.isNaN(left) ? 0 : Math.max(0, left));
  };
  if (ms !== Number.POSITIVE_INFINITY) arm(ms);
  return () => {
    cancelled = true;
    clearTimeout(timer);
  };
}
