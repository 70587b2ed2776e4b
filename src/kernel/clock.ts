import { maxTimerMs } from './timer.ts';

/**
 * Time as a dependency. Domain code never calls Date.now() or setTimeout
 * directly; it receives a Clock, so tests can drive loops with a fake one.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /**
   * Resolves at `atMs` (or at once if that is past); rejects with the
   * signal's reason when the signal aborts first.
   */
  sleepUntil(atMs: number, signal?: AbortSignal): Promise<void>;
}

/** A source of uniform random numbers in [0, 1). */
export type Random = () => number;

/** The real clock, built once in main and in I/O shells. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleepUntil: (atMs, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted === true) {
        reject(signal.reason as Error);
        return;
      }
      let timer: NodeJS.Timeout | undefined;
      const onAbort = (): void => {
        clearTimeout(timer);
        reject(signal?.reason as Error);
      };
      const arm = (): void => {
        const left = atMs - Date.now();
        if (left <= 0) {
          signal?.removeEventListener('abort', onAbort);
          resolve();
          return;
        }
        // Sleeps longer than setTimeout's largest delay are chained.
        timer = setTimeout(arm, Math.min(left, maxTimerMs));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      arm();
    }),
};

export const systemRandom: Random = () => Math.random();
