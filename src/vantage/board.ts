import type { Verdict } from './several.ts';
import type { VantageReport } from './report-protocol.ts';

interface Entry {
  readonly result: VantageReport['result'];
  readonly message: string;
  readonly at: number;
}

/** Another vantage's verdict as its owner holds it. */
export interface HeldVerdict {
  readonly from: string;
  readonly verdict: Verdict;
  readonly message: string;
}

/**
 * The owner's view of its pods' other vantages (ADR 0058): the last verdict
 * each one reported per policy and pod, with when. A verdict older than
 * `staleMs` is no verdict (that vantage abstains); entries nobody asked for
 * in twice that long are pruned.
 */
export class VerdictBoard {
  readonly #staleMs: number;
  readonly #entries = new Map<string, Map<string, Entry>>();
  #prunedAt = 0;

  constructor(options: { readonly staleMs: number }) {
    this.#staleMs = options.staleMs;
  }

  /** Takes a verdict; true when it changes what the owner knows (a new result, or one that had gone stale). */
  accept(from: string, r: VantageReport, now: number): boolean {
    const key = `${r.policy}/${r.podUid}`;
    let byFrom = this.#entries.get(key);
    if (byFrom === undefined) this.#entries.set(key, (byFrom = new Map<string, Entry>()));
    const before = byFrom.get(from);
    byFrom.set(from, { result: r.result, message: r.message, at: now });
    this.#prune(now);
    return before === undefined || before.result !== r.result || now - before.at > this.#staleMs;
  }

  /** The fresh verdicts of these vantages on the pod under the policy, in their order (`undefined`: none lately). */
  verdicts(policy: string, podUid: string, from: readonly string[], now: number): HeldVerdict[] {
    const byFrom = this.#entries.get(`${policy}/${podUid}`);
    return from.map((id) => {
      const e = byFrom?.get(id);
      const fresh = e !== undefined && now - e.at <= this.#staleMs;
      return { from: id, verdict: fresh && e.result !== 'unknown' ? e.result : undefined, message: fresh ? e.message : '' };
    });
  }

  get size(): number {
    return this.#entries.size;
  }

  #prune(now: number): void {
    if (now - this.#prunedAt < this.#staleMs) return;
    this.#prunedAt = now;
    for (const [key, byFrom] of this.#entries) {
      for (const [from, e] of byFrom) if (now - e.at > 2 * this.#staleMs) byFrom.delete(from);
      if (byFrom.size === 0) this.#entries.delete(key);
    }
  }
}
