import { panicExitMarginPercent } from '../policy/index.ts';

/**
 * The panic threshold (issue 13, ADR 0015), as a pure decision: which of a
 * policy's failing gated pods outprobe may hold False, and which it keeps
 * True (fails open) because holding them too would take more than
 * `maxUnreadyPercent` of the policy's gated pods out of their Services.
 */

/** A gated pod whose readiness probe outprobe has seen fail (its own probes, at the threshold). */
export interface FailingPod {
  readonly uid: string;
  /** When it turned failing (ms): older failures are held first, the newest fail open first. */
  readonly since: number;
}

export interface PanicInput {
  /** 0–100; 100 disables the guard. */
  readonly maxUnreadyPercent: number;
  /** Gated pods of the policy whose gate this replica writes (its share when sharded). */
  readonly gated: number;
  readonly failing: readonly FailingPod[];
  /**
   * The most this replica may hold False now (its allowance of the policy's
   * fleet-wide cap, ADR 0032). @default maxUnready(maxUnreadyPercent, gated)
   */
  readonly limit?: number;
  /** At most this many failing end panic. @default panicExitLimit(maxUnreadyPercent, gated), never above `limit` */
  readonly exitLimit?: number;
  /** The cap reported as `maxUnready` (this replica's share of the policy's cap). @default `limit` */
  readonly share?: number;
  /**
   * Failing pods whose gate is False already (inherited in a handover, or
   * held before): in panic they may stay held although the previous decision
   * did not hold them, since keeping a False is no flap. @default none
   */
  readonly alreadyFalse?: ReadonlySet<string>;
}

export interface PanicState {
  readonly panic: boolean;
  readonly gated: number;
  readonly failing: number;
  /**
   * The most pods that may be held False: ⌊maxUnreadyPercent × gated / 100⌋,
   * or this replica's share of the policy's fleet-wide cap (ADR 0032).
   */
  readonly maxUnready: number;
  readonly maxUnreadyPercent: number;
  /** Failing pods held False. */
  readonly held: ReadonlySet<string>;
  /** Failing pods kept True (failed open), most recently failed first. */
  readonly failOpen: readonly string[];
}

export function maxUnready(percent: number, gated: number): number {
  return Math.floor((Math.max(0, Math.min(100, percent)) * gated) / 100);
}

/** At most this many failing pods end panic: the threshold less the hysteresis margin. */
export function panicExitLimit(percent: number, gated: number): number {
  return percent >= 100 ? gated : maxUnready(percent - panicExitMarginPercent, gated);
}

const oldestFirst = (a: FailingPod, b: FailingPod): number => a.since - b.since || (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0);

/**
 * - Not in panic, and the failing pods fit within `maxUnready`: all held.
 * - More fail than that: panic starts; the `maxUnready` oldest failures are
 *   held (they were False already), the rest fail open.
 * - In panic: the held set only shrinks (a pod that failed open stays True
 *   while panic lasts, so gates do not flap at the edge) and never exceeds
 *   `maxUnready` (when pods go away, the newest held are released first).
 * - Panic ends when at most `panicExitLimit` pods fail; then all are held.
 */
export function decidePanic(input: PanicInput, previous: PanicState | undefined): PanicState {
  const ordered = [...input.failing].sort(oldestFirst);
  const max = Math.max(0, input.limit ?? maxUnready(input.maxUnreadyPercent, input.gated));
  const exit = Math.min(max, input.exitLimit ?? panicExitLimit(input.maxUnreadyPercent, input.gated));
  const base = { gated: input.gated, failing: ordered.length, maxUnready: input.share ?? max, maxUnreadyPercent: input.maxUnreadyPercent };
  const wasPanic = previous?.panic === true;
  const calm = wasPanic ? ordered.length <= exit : ordered.length <= max;
  if (calm) return { ...base, panic: false, held: new Set(ordered.map((p) => p.uid)), failOpen: [] };
  const already = input.alreadyFalse;
  const eligible = wasPanic ? ordered.filter((p) => previous.held.has(p.uid) || already?.has(p.uid) === true) : ordered;
  const held = new Set(eligible.slice(0, max).map((p) => p.uid));
  const failOpen = ordered.filter((p) => !held.has(p.uid)).reverse().map((p) => p.uid);
  return { ...base, panic: true, held, failOpen };
}

/** The counts in words, for the policy condition, Events and the fail-open gate message. */
export function panicMessage(s: PanicCounts): string {
  return `${s.failing} of ${s.gated} gated pods fail readiness; at most ${s.maxUnreadyPercent}% (${s.maxUnready}) may be held unready: failing open (${s.held} held unready, ${s.failing - s.held} kept ready)`;
}

export interface PanicCounts {
  readonly gated: number;
  readonly failing: number;
  readonly held: number;
  readonly maxUnready: number;
  readonly maxUnreadyPercent: number;
}

export function panicCounts(s: PanicState): PanicCounts {
  return { gated: s.gated, failing: s.failing, held: s.held.size, maxUnready: s.maxUnready, maxUnreadyPercent: s.maxUnreadyPercent };
}
