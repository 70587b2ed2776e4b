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
      const onAbort = (): void => {
        clearTimeout(timer);
        reject(signal?.reason as Error);
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, Math.max(0, atMs - Date.now()));
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};

export const systemRandom: Random = () => Math.random();
