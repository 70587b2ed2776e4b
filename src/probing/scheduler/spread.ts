/**
 * Where a newly planned target's first pass falls (issue 18, ADR 0019): at
 * its own phase within the period, `fnv1a(key) mod period`, on the absolute
 * clock. Targets planned together (process start, a policy created again, a
 * probe edit, a shard handover) are spread evenly over one period instead of
 * probing at once and staying aligned on the ticker for good; the same key
 * always gets the same phase, so a target planned again (or by another
 * replica) keeps the slot it had.
 */
export function spreadDueAt(key: string, periodMs: number, now: number): number {
  if (!(periodMs > 0)) return now;
  const phase = fnv1a(key) % periodMs;
  const offset = (((phase - (now % periodMs)) % periodMs) + periodMs) % periodMs;
  return now + offset;
}

/** 32-bit FNV-1a over UTF-16 code units: cheap, deterministic, well mixed for short keys. */
export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
