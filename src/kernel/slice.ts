import type { Clock } from './clock.ts';

/** One turn of the event loop: timers and I/O due now run before it resolves. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * A budget of event-loop time for long synchronous work cut into slices
 * (ADR 0066, 0072): once `ms` (by the clock) have been spent since the last
 * turn, `yieldIfSpent` yields one turn of the loop (timers, I/O, a Lease
 * renewal run) and starts a new slice. `yieldTurn` is injectable for tests.
 */
export class Slice {
  readonly #clock: Clock;
  readonly #ms: number;
  readonly #yield: () => Promise<void>;
  #from: number;
  #yields = 0;
  #longest = 0;

  constructor(clock: Clock, ms: number, yieldTurn: () => Promise<void> = nextTurn) {
    this.#clock = clock;
    this.#ms = ms;
    this.#yield = yieldTurn;
    this.#from = clock.now();
  }

  /** Turns yielded so far. */
  get yields(): number {
    return this.#yields;
  }

  /** The longest slice so far (ms by the clock), the one running included. */
  get longestMs(): number {
    return Math.max(this.#longest, this.#clock.now() - this.#from);
  }

  /** Yields one turn if the slice is spent; throws the signal's reason when it was aborted meanwhile. */
  async yieldIfSpent(signal: AbortSignal): Promise<void> {
    const spent = this.#clock.now() - this.#from;
    if (spent < this.#ms) return;
    if (spent > this.#longest) this.#longest = spent;
    this.#yields++;
    await this.#yield();
    if (signal.aborted) throw signal.reason;
    this.#from = this.#clock.now();
  }
}
