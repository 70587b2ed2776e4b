import type { Clock } from '../../src/kernel/index.ts';

interface Sleeper {
  readonly at: number;
  readonly resolve: () => void;
}

/**
 * A manual clock for pure unit tests: time moves only when the test calls
 * advance()/set(), and sleepers whose deadline has passed are released in
 * deadline order.
 */
export class FakeClock implements Clock {
  #now: number;
  #sleepers: Sleeper[] = [];

  constructor(startMs = 1_700_000_000_000) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  sleepUntil(atMs: number, signal?: AbortSignal): Promise<void> {
    if (atMs <= this.#now) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const sleeper: Sleeper = { at: atMs, resolve };
      this.#sleepers.push(sleeper);
      signal?.addEventListener(
        'abort',
        () => {
          this.#sleepers = this.#sleepers.filter((s) => s !== sleeper);
          reject(signal.reason as Error);
        },
        { once: true },
      );
    });
  }

  advance(ms: number): void {
    this.set(this.#now + ms);
  }

  set(atMs: number): void {
    this.#now = atMs;
    const due = this.#sleepers.filter((s) => s.at <= atMs).sort((a, b) => a.at - b.at);
    this.#sleepers = this.#sleepers.filter((s) => s.at > atMs);
    for (const s of due) s.resolve();
  }

  get pendingSleepers(): number {
    return this.#sleepers.length;
  }
}
