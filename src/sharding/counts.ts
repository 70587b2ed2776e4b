import { isLive } from './lease.ts';
import type { ShardLease } from './lease.ts';

/** The per-policy numbers only the replica probing a pod knows (the controller's LocalCounts). */
export interface PolicyCounts {
  readonly failing: number;
  readonly erroring: number;
  readonly remediations: number;
}

/**
 * The counts annotation: `{"<ns>/<policy>":[failing,erroring,remediations],…}`.
 * Compact, because it rides on every renew of the replica's own Lease.
 */
export function encodeCounts(counts: ReadonlyMap<string, PolicyCounts>): string {
  const out: Record<string, [number, number, number]> = {};
  for (const [key, c] of [...counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) out[key] = [c.failing, c.erroring, c.remediations];
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
    const n = (i: number): number => (typeof v[i] === 'number' && Number.isFinite(v[i]) ? v[i] : 0);
    return { failing: n(0), erroring: n(1), remediations: n(2) };
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
  for (const l of input.leases) {
    if (l.holder === input.self || !isLive(l, input.now)) continue;
    const c = decodeCounts(l.counts, input.policyKey);
    failing += c.failing;
    erroring += c.erroring;
    remediations += c.remediations;
  }
  return { failing, erroring, remediations };
}
