import { maxUnready, panicExitLimit } from './decide.ts';

/**
 * The fleet-wide readiness cap (issue 26, ADR 0032), pure: how many False
 * gates a policy may have across every replica, how that cap is split
 * between the live members, and how many of them one replica may hold now.
 */

/**
 * Splits `cap` between `members` in proportion to `weights` (the policy's
 * gated pods each owns) by largest remainder: every member gets
 * ⌊cap × wᵢ / W⌋, and the seats left go one each to the largest remainders
 * (ties: the smaller identity first). Exact integer arithmetic, so every
 * replica computing it from the same inputs gets the same split, and the
 * shares sum to `cap` (to 0 when no member owns a gated pod). A member
 * absent from `weights` weighs 0.
 */
export function splitCap(cap: number, members: readonly string[], weights: ReadonlyMap<string, number>): Map<string, number> {
  const ids = [...new Set(members)].sort();
  const w = ids.map((m) => Math.max(0, Math.floor(weights.get(m) ?? 0)));
  const total = w.reduce((a, b) => a + b, 0);
  const out = new Map<string, number>(ids.map((m) => [m, 0]));
  const c = Math.max(0, Math.floor(cap));
  if (total === 0 || c === 0) return out;
  const rest: { readonly id: string; readonly rem: number }[] = [];
  let given = 0;
  ids.forEach((id, i) => {
    const n = c * (w[i] ?? 0);
    const floor = Math.floor(n / total);
    out.set(id, floor);
    given += floor;
    rest.push({ id, rem: n - floor * total });
  });
  rest.sort((a, b) => b.rem - a.rem || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  for (const r of rest.slice(0, c - given)) out.set(r.id, (out.get(r.id) ?? 0) + 1);
  return out;
}

export interface AllowanceInput {
  /** 0–100 (`spec.readiness.maxUnreadyPercent`). */
  readonly maxUnreadyPercent: number;
  /** This replica. */
  readonly self: string;
  /** The live members, this replica included when it is one. */
  readonly members: readonly string[];
  /**
   * The policy's gated pods by owner (rendezvous over `members`); pods no
   * live member owns under `''`. Their sum is the policy's gated pods.
   */
  readonly gatedBy: ReadonlyMap<string, number>;
  /** False gates (probe failures) on pods this replica does not own, as its pod cache shows them. */
  readonly falseElsewhere: number;
}

export interface Allowance {
  /** The policy's gated pods, every replica's. */
  readonly gated: number;
  /** ⌊maxUnreadyPercent × gated / 100⌋: False gates the whole policy may have. */
  readonly cap: number;
  /** This replica's part of `cap` (`splitCap`). */
  readonly share: number;
  readonly falseElsewhere: number;
  /** What it may hold False now: min(share, cap − falseElsewhere), at least 0. */
  readonly allowance: number;
  /** The same with the hysteresis margin (the cap less 10 points): panic ends at or below it. */
  readonly exitAllowance: number;
}

function sumOf(m: ReadonlyMap<string, number>): number {
  let n = 0;
  for (const v of m.values()) n += v;
  return n;
}

/** A replica's share of the policy's cap and what it may hold False now. */
export function allowanceOf(input: AllowanceInput): Allowance {
  const gated = sumOf(input.gatedBy);
  const cap = maxUnready(input.maxUnreadyPercent, gated);
  const exitCap = Math.min(cap, panicExitLimit(input.maxUnreadyPercent, gated));
  const mine = (c: number): number => (input.members.includes(input.self) ? (splitCap(c, input.members, input.gatedBy).get(input.self) ?? 0) : 0);
  const share = mine(cap);
  const allowance = Math.max(0, Math.min(share, cap - input.falseElsewhere));
  const exitAllowance = Math.max(0, Math.min(mine(exitCap), exitCap - input.falseElsewhere, allowance));
  return { gated, cap, share, falseElsewhere: input.falseElsewhere, allowance, exitAllowance };
}

/**
 * The hold at the start of a mass failure (ADR 0032): while more of this
 * replica's gated pods turned failing within the last `windowMs` than it may
 * hold False (`allowance`), failures arrive faster than its share allows, and
 * the first moments of such a burst are suspect (its own network, a stall, a
 * dependency every pod shares): no new False is sent for the policy until
 * the hold ends, `windowMs` after it began. `windowMs` is the readiness
 * probe's period × failureThreshold, the time one pod needs to be confirmed
 * failing: a real failure of a few pods is written at most that much later,
 * and the self-check (ADR 0017) has that much time to find its own fault. A
 * burst holds once: the next hold needs the burst to end first (at most
 * `allowance` arrivals in the window), so a steady stream of failures is
 * never held for more than `windowMs` at a time.
 */
export interface HoldState {
  /** When the current hold ends (ms), if one is on. */
  readonly until: number | undefined;
  /** The burst that was held is still on: no second hold for it. */
  readonly served: boolean;
}

export interface HoldInput {
  readonly now: number;
  readonly windowMs: number;
  /** When each of this replica's currently failing gated pods turned failing (ms). */
  readonly since: readonly number[];
  readonly allowance: number;
}

export const noHold: HoldState = { until: undefined, served: false };

/** Pods that turned failing within the window ending now. */
export function arrivals(input: Pick<HoldInput, 'now' | 'windowMs' | 'since'>): number {
  let n = 0;
  for (const t of input.since) if (t > input.now - input.windowMs) n++;
  return n;
}

export function stepHold(previous: HoldState, input: HoldInput): HoldState {
  // With nothing it may hold there is nothing to hold back.
  const burst = input.allowance > 0 && arrivals(input) > input.allowance;
  if (previous.until !== undefined && input.now < previous.until) return previous;
  if (!burst) return noHold;
  if (previous.until !== undefined || previous.served) return { until: undefined, served: true };
  return { until: input.now + input.windowMs, served: false };
}

/**
 * A False waits one probe period after its failure was confirmed while
 * another failure of the policy arrived within the window (`arrived` ≥ 2):
 * failures of one cause confirm within one period of each other (targets
 * probe at their own phase in their period, ADR 0019), so by then a burst
 * shows and `stepHold` holds it. A lone failure is not delayed.
 */
export function settling(input: { readonly now: number; readonly since: number; readonly periodMs: number; readonly arrived: number }): boolean {
  return input.arrived >= 2 && input.now - input.since < input.periodMs;
}

/** Is a hold on at `now`? */
export function holding(s: HoldState, now: number): boolean {
  return s.until !== undefined && now < s.until;
}
