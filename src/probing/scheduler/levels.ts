/**
 * How many members (namespaces of the pool, or policies of a namespace) hold
 * each number of passes in flight, so the slots borrowed beyond a share are
 * summed in O(max − share) instead of a walk over every member: the reclaim
 * check runs whenever the pool is full, which a saturated pool always is.
 * Invariant: `counts[v]` is the number of members with exactly v ≥ 1 passes
 * in flight, and `max` is the largest such v (0 when none).
 */
export class Levels {
  readonly #counts: number[] = [0];
  #max = 0;

  /** A member went from `from` to `from + 1` passes in flight. */
  up(from: number): void {
    const counts = this.#counts;
    if (from > 0) counts[from] = (counts[from] ?? 1) - 1;
    counts[from + 1] = (counts[from + 1] ?? 0) + 1;
    if (from + 1 > this.#max) this.#max = from + 1;
  }

  /** A member went from `from` to `from - 1` passes in flight. */
  down(from: number): void {
    const counts = this.#counts;
    counts[from] = (counts[from] ?? 1) - 1;
    if (from > 1) counts[from - 1] = (counts[from - 1] ?? 0) + 1;
    while (this.#max > 0 && (counts[this.#max] ?? 0) === 0) this.#max--;
  }

  /** Whether members hold more than `than` passes beyond `share` in all. */
  borrowedExceeds(share: number, than: number): boolean {
    let sum = 0;
    for (let v = this.#max; v > share; v--) {
      sum += (v - share) * (this.#counts[v] ?? 0);
      if (sum > than) return true;
    }
    return false;
  }
}
