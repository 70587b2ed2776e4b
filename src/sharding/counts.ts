import { isLive } from './lease.ts';
import type { ShardLease } from './lease.ts';

/** The per-policy numbers only the replica probing a pod knows (the controller's LocalCounts). */
export interface PolicyCounts {
  readonly failing: number;
  readonly erroring: number;
  readonly remediations: number;
  /** Pods whose node and this replica disagree on readiness (ADR 0023). @default 0 */
  readonly diverged?: number;
  /** The panic threshold over this replica's share (ADR 0015); absent when it writes no gates for the policy. */
  readonly panic?: PanicShare;
}

/** One replica's panic threshold state for a policy: its counts, and whether it fails open. */
export interface PanicShare {
  readonly gated: number;
  readonly failing: number;
  readonly held: number;
  readonly maxUnready: number;
  readonly panic: boolean;
}

/**
 * The counts annotation: `{"<ns>/<policy>":[failing,erroring,remediations],…}`,
 * followed by `gated,panicFailing,held,maxUnready,panic(0|1)` when the replica
 * applies the policy's panic threshold, then the diverged count when it is
 * not 0 (ADR 0023): `[f,e,r,diverged]` or `[f,e,r,g,pf,h,m,p,diverged]`.
 * Compact, because it rides on every renew of the replica's own Lease; a
 * reader of the three-number form (an older replica) ignores the rest, and
 * the lengths 3 and 8 of older replicas read as 0 diverged.
 */
export function encodeCounts(counts: ReadonlyMap<string, PolicyCounts>): string {
  const out: Record<string, number[]> = {};
  for (const [key, c] of [...counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const p = c.panic;
    const base = p === undefined ? [c.failing, c.erroring, c.remediations] : [c.failing, c.erroring, c.remediations, p.gated, p.failing, p.held, p.maxUnready, p.panic ? 1 : 0];
    out[key] = (c.diverged ?? 0) > 0 ? [...base, c.diverged ?? 0] : base;
  }
  return JSON.stringify(out);
}

/** Decodes one policy's counts; zeros when absent or malformed (a replica on another version). */
export function decodeCounts(text: string | undefined, policyKey: string): PolicyCounts {
  const zero = { failing: 0, erroring: 0, remediations: 0 };
  if (text === undefined) return zero;
  try {
    const all = JSON.parse(text) as Record<string, unknown>;
    const v = Object.hasOwn(all, policyKey) ? all[policyKey] : undefined;
    if (!Array.isArray(v)) return zero;
    const n = (i: number): number => (typeof v[i] === 'number' && Number.isFinite(v[i]) && v[i] >= 0 ? Math.floor(v[i]) : 0);
    const counts = { failing: n(0), erroring: n(1), remediations: n(2) };
    // Length 4: diverged without a panic share; 9: after one (ADR 0023).
    const diverged = v.length === 4 ? n(3) : v.length >= 9 ? n(8) : 0;
    const base = diverged === 0 ? counts : { ...counts, diverged };
    if (v.length < 8) return base;
    return { ...base, panic: { gated: n(3), failing: n(4), held: n(5), maxUnready: n(6), panic: n(7) === 1 } };
  } catch {
    return zero;
  }
}

/**
 * Cluster-wide counts for one policy: this replica's own (fresh) numbers plus
 * what every other live member last published. Expired members are left out:
 * their pods are being re-probed by the survivors, who count them.
 */
export function aggregateCounts(input: {
  readonly self: string;
  readonly leases: Iterable<ShardLease>;
  readonly now: number;
  readonly policyKey: string;
  readonly local: PolicyCounts;
}): PolicyCounts {
  let { failing, erroring, remediations } = input.local;
  let diverged = input.local.diverged ?? 0;
  let panic = input.local.panic;
  for (const l of input.leases) {
    if (l.holder === input.self || !isLive(l, input.now)) continue;
    const c = decodeCounts(l.counts, input.policyKey);
    failing += c.failing;
    erroring += c.erroring;
    remediations += c.remediations;
    diverged += c.diverged ?? 0;
    if (c.panic !== undefined) panic = panic === undefined ? c.panic : addPanic(panic, c.panic);
  }
  const counts = { failing, erroring, remediations, ...(diverged === 0 ? {} : { diverged }) };
  return panic === undefined ? counts : { ...counts, panic };
}

/** Per-replica shares add up; the policy is in panic where any replica fails open (ADR 0015). */
function addPanic(a: PanicShare, b: PanicShare): PanicShare {
  return { gated: a.gated + b.gated, failing: a.failing + b.failing, held: a.held + b.held, maxUnready: a.maxUnready + b.maxUnready, panic: a.panic || b.panic };
}
