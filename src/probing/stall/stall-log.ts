/**
 * The event-loop stalls above the bound that the monitor saw, as intervals
 * [from, to] of one monotonic clock (ms), kept for `horizonMs` after they
 * end. Pure data: the monitor feeds it; a probe window asks it.
 *
 * Invariant: intervals are appended in order of `to` and never overlap (the
 * sampler re-arms only after it fired), so pruning drops a prefix.
 */
export class StallLog {
  readonly #horizonMs: number;
  readonly #stalls: { readonly from: number; readonly to: number }[] = [];

  /** @param horizonMs how long an ended stall is remembered; must exceed the longest probe attempt. */
  constructor(horizonMs: number) {
    this.#horizonMs = horizonMs;
  }

  get size(): number {
    return this.#stalls.length;
  }

  add(from: number, to: number): void {
    this.#stalls.push({ from, to });
    for (let first = this.#stalls[0]; first !== undefined && first.to < to - this.#horizonMs; first = this.#stalls[0]) this.#stalls.shift();
  }

  /**
   * The longest part of one stall inside [start, end]. `pendingFrom`: a stall
   * still going on (the sampler is overdue since then), counted up to `end`.
   */
  longestWithin(start: number, end: number, pendingFrom?: number): number {
    let longest = pendingFrom === undefined ? 0 : overlap(pendingFrom, end, start, end);
    for (let i = this.#stalls.length - 1; i >= 0; i--) {
      const s = this.#stalls[i];
      if (s === undefined || s.to <= start) break; // older ones end earlier still
      longest = Math.max(longest, overlap(s.from, s.to, start, end));
    }
    return longest;
  }
}

function overlap(from: number, to: number, start: number, end: number): number {
  return Math.max(0, Math.min(to, end) - Math.max(from, start));
}
