import { hash64, hashParts } from './hash.ts';

/**
 * Rendezvous (highest random weight) hashing: the owner of `key` is the
 * member with the highest hash64(member, key). Adding a member moves only the
 * keys it now wins (about 1/N); removing one moves only the keys it owned.
 * Ties (astronomically rare) go to the smaller identity, so every replica
 * agrees. `undefined` when there are no members.
 */
export function owner(members: readonly string[], key: string): string | undefined {
  let best: string | undefined;
  let bestHi = -1;
  let bestLo = -1;
  for (const m of members) {
    hashParts(m, key, parts);
    const hi = parts[0] ?? 0;
    const lo = parts[1] ?? 0;
    if (hi > bestHi || (hi === bestHi && (lo > bestLo || (lo === bestLo && best !== undefined && m < best)))) {
      best = m;
      bestHi = hi;
      bestLo = lo;
    }
  }
  return best;
}

/** owner's scratch: [high, low] of one hash (no BigInt per member, issue 31). */
const parts = new Float64Array(2);

/**
 * Every member in rendezvous order for `key`: the owner first, then who
 * would own it if the owner went away, and so on (the same hashes and tie
 * rule as `owner`). The second opinion asks the next member in this order.
 */
export function ranked(members: readonly string[], key: string): string[] {
  const scored = members.map((m) => ({ m, h: hash64(m, key) }));
  scored.sort((a, b) => (a.h > b.h ? -1 : a.h < b.h ? 1 : a.m < b.m ? -1 : a.m > b.m ? 1 : 0));
  return scored.map((s) => s.m);
}
