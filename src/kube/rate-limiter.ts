import type { Clock } from '../kernel/index.ts';

/**
 * A token bucket like client-go's flowcontrol limiter: `qps` tokens per
 * second, at most `burst` saved up. Every API call takes one token. Waiters
 * are served in arrival order: each call reserves the next token (the count
 * may go negative) and sleeps until its reservation matures.
 */
export class TokenBucket {
  readonly #clock: Clock;
  readonly #qps: number;
  readonly #burst: number;
  #tokens: number;
  #at: number;

  /** @param qps tokens per second (client-go default 5; outprobe's default 50). @param burst bucket size (default 2 × qps). */
  constructor(options: { readonly clock: Clock; readonly qps: number; readonly burst?: number }) {
    if (!(options.qps > 0)) throw new RangeError(`qps must be > 0, got ${options.qps}`);
    this.#clock = options.clock;
    this.#qps = options.qps;
    this.#burst = Math.max(1, options.burst ?? Math.ceil(options.qps * 2));
    this.#tokens = this.#burst;
    this.#at = options.clock.now();
  }

  /** Reserves a token and returns how long to wait for it (0 when one is free). */
  reserve(): number {
    const now = this.#clock.now();
    this.#tokens = Math.min(this.#burst, this.#tokens + ((now - this.#at) / 1000) * this.#qps);
    this.#at = now;
    this.#tokens -= 1;
    return this.#tokens >= 0 ? 0 : Math.ceil((-this.#tokens / this.#qps) * 1000);
  }

  async acquire(signal?: AbortSignal): Promise<void> {
    const wait = this.reserve();
    if (wait > 0) await this.#clock.sleepUntil(this.#clock.now() + wait, signal);
  }
}

/** Exponential backoff with full jitter on top of half the delay: [d/2, d). */
export function backoffDelay(attempt: number, random: () => number, baseMs = 500, capMs = 30_000): number {
  const d = Math.min(capMs, baseMs * 2 ** Math.min(attempt, 16));
  return Math.floor(d / 2 + random() * (d / 2));
}
