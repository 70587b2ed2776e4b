import { failingHigh, impairedNow, reachesPeers } from './decide.ts';
import type { ImpairmentInput, ImpairmentThresholds } from './decide.ts';

export type Change =
  | { readonly type: 'impaired'; readonly reason: 'unreachable' | 'failing'; readonly message: string }
  | { readonly type: 'recovered'; readonly message: string };

/** An impairment within this long of the last recovery doubles the time to recover. */
export const strikeWindowMs = 10 * 60_000;
/** The time to recover grows to at most this many times `recoverAfterMs`. */
export const maxBackoff = 16;

/**
 * The replica's impairment state, pure: healthy → impaired when a verdict
 * says so; impaired → healthy once it has reached a peer (or had none) for
 * `recoverAfterMs` without a break. While impaired the replica owns no
 * targets, so only reachability can end it; a replica impaired again within
 * `strikeWindowMs` of recovering (its own failures came back with its pods)
 * waits twice as long each time, up to `maxBackoff` times.
 */
export class ImpairmentState {
  readonly #t: ImpairmentThresholds;
  #impairedAt: number | undefined;
  #healthySince: number | undefined;
  #recoveredAt: number | undefined;
  #strikes = 0;
  /** Since when its failing share has stayed high (ADR 0034). */
  #failingSince: number | undefined;

  constructor(thresholds: ImpairmentThresholds) {
    this.#t = thresholds;
  }

  /** What the current (or next) impairment needs to recover: `recoverAfterMs`, doubled per strike. */
  get recoverAfterMs(): number {
    return this.#t.recoverAfterMs * Math.min(maxBackoff, 2 ** Math.max(0, this.#strikes - 1));
  }

  get impaired(): boolean {
    return this.#impairedAt !== undefined;
  }

  /** One evaluation; returns the change it made, if any. */
  step(input: ImpairmentInput): Change | undefined {
    if (failingHigh(input, this.#t)) this.#failingSince ??= input.now;
    else this.#failingSince = undefined;
    if (this.#impairedAt === undefined) {
      const v = impairedNow({ ...input, failingSince: input.failingSince ?? this.#failingSince }, this.#t);
      if (!v.impaired) return undefined;
      this.#impairedAt = input.now;
      this.#healthySince = undefined;
      this.#strikes = this.#recoveredAt !== undefined && input.now - this.#recoveredAt < strikeWindowMs ? this.#strikes + 1 : 1;
      return { type: 'impaired', reason: v.reason, message: v.message };
    }
    if (!reachesPeers(input, this.#t)) {
      this.#healthySince = undefined;
      return undefined;
    }
    this.#healthySince ??= input.now;
    const needMs = this.recoverAfterMs;
    if (input.now - this.#healthySince < needMs) return undefined;
    const after = input.now - this.#impairedAt;
    this.#impairedAt = undefined;
    this.#healthySince = undefined;
    this.#recoveredAt = input.now;
    return { type: 'recovered', message: `reached its peers for ${Math.round(needMs / 1000)}s (impaired for ${Math.round(after / 1000)}s)` };
  }
}
