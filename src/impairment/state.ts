import { impairedNow, reachesPeers } from './decide.ts';
import type { ImpairmentInput, ImpairmentThresholds } from './decide.ts';

export type Change =
  | { readonly type: 'impaired'; readonly reason: 'unreachable' | 'failing'; readonly message: string }
  | { readonly type: 'recovered'; readonly message: string };

/**
 * The replica's impairment state, pure: healthy → impaired when a verdict
 * says so; impaired → healthy once it has reached a peer (or had none) for
 * `recoverAfterMs` without a break. While impaired the replica owns no
 * targets, so only reachability can end it.
 */
export class ImpairmentState {
  readonly #t: ImpairmentThresholds;
  #impairedAt: number | undefined;
  #healthySince: number | undefined;

  constructor(thresholds: ImpairmentThresholds) {
    this.#t = thresholds;
  }

  get impaired(): boolean {
    return this.#impairedAt !== undefined;
  }

  /** One evaluation; returns the change it made, if any. */
  step(input: ImpairmentInput): Change | undefined {
    if (this.#impairedAt === undefined) {
      const v = impairedNow(input, this.#t);
      if (!v.impaired) return undefined;
      this.#impairedAt = input.now;
      this.#healthySince = undefined;
      return { type: 'impaired', reason: v.reason, message: v.message };
    }
    if (!reachesPeers(input, this.#t)) {
      this.#healthySince = undefined;
      return undefined;
    }
    this.#healthySince ??= input.now;
    if (input.now - this.#healthySince < this.#t.recoverAfterMs) return undefined;
    const after = input.now - this.#impairedAt;
    this.#impairedAt = undefined;
    this.#healthySince = undefined;
    return { type: 'recovered', message: `reached its peers for ${Math.round(this.#t.recoverAfterMs / 1000)}s (impaired for ${Math.round(after / 1000)}s)` };
  }
}
