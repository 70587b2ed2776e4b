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

/** When a target's first pass runs, and the phase its ticks keep afterwards. */
export interface FirstPass {
  readonly dueAt: number;
  readonly phaseAt: number;
}

/**
 * The first pass of a target this replica just gained in a shard handover.
 * Every replica puts a key on the same absolute phase (`spreadDueAt`), so the
 * previous owner probed it on that phase until it let go; only a slot that
 * fell inside the hand-off itself (between the old owner's stop and this
 * replica's plan: tens to hundreds of ms) went unprobed. A slot that fell in
 * the last `catchUpMs` is therefore run at once, with the ticks kept on the
 * phase (the next pass at the next slot); any other first pass waits for its
 * slot. Without it, a slot lost in a replica's stop and another lost in its
 * restart a period later left a pod unprobed for three periods.
 * @param catchUpMs @default min(1 s, period / 2)
 */
export function handoverFirstPass(key: string, periodMs: number, now: number, catchUpMs = Math.min(1000, periodMs / 2)): FirstPass {
  const next = spreadDueAt(key, periodMs, now);
  const last = next === now ? now : next - periodMs;
  return now - last <= catchUpMs ? { dueAt: now, phaseAt: last } : { dueAt: next, phaseAt: next };
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
