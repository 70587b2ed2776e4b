/**
 * The remediation budget (design §4 rule 4), as a pure decision: may outprobe
 * evict or delete this pod now?
 *
 * - maxUnavailable: at most this many pods of the policy may be unavailable
 *   at once, where unavailable means being remediated by outprobe or not
 *   Ready in the kubelet's view (excluding the candidate itself). A percent
 *   is taken of the policy's selected pods, rounded down, but at least 1
 *   when the percent is above 0 (so "10%" of 5 pods still allows one).
 * - haltAbovePercentFailing: when more than this share of the policy's pods
 *   fail liveness or startup at the same time, outprobe suspects itself (its
 *   own network, a shared dependency) and remediates nothing.
 */
export interface BudgetPod {
  readonly uid: string;
  /** The kubelet's Ready condition is True. */
  readonly ready: boolean;
  /** Liveness or startup committed Failure for the current container instance. */
  readonly failing: boolean;
  /** outprobe has an eviction or delete in flight, or done and not yet gone. */
  readonly remediating: boolean;
}

export interface BudgetSpec {
  readonly maxUnavailable: number | string;
  readonly haltAbovePercentFailing: number;
}

export type BudgetDecision =
  | { readonly allow: true }
  | { readonly allow: false; readonly reason: 'halted' | 'budget' | 'share'; readonly message: string };

export function resolveMaxUnavailable(value: number | string, total: number): number {
  if (typeof value === 'number') return value;
  const percent = Number(value.replace(/%$/, ''));
  if (!Number.isFinite(percent) || percent <= 0) return 0;
  return Math.max(1, Math.floor((percent * total) / 100));
}

/** What a budget decision reads of the policy's pods (ADR 0031: kept as counts, not listed per decision). */
export interface BudgetCounts {
  /** The policy's selected pods. */
  readonly pods: number;
  /** Of them, failing liveness or startup. */
  readonly failing: number;
  /** Of them, other than the candidate, being remediated or not Ready. */
  readonly unavailable: number;
}

/** The counts of a list of pods, for `candidateUid`. */
export function budgetCountsOf(candidateUid: string, pods: readonly BudgetPod[]): BudgetCounts {
  return {
    pods: pods.length,
    failing: pods.filter((p) => p.failing).length,
    unavailable: pods.filter((p) => p.uid !== candidateUid && (p.remediating || !p.ready)).length,
  };
}

export function failingPercent(pods: readonly BudgetPod[]): number {
  if (pods.length === 0) return 0;
  return (pods.filter((p) => p.failing).length * 100) / pods.length;
}

export function isHalted(pods: readonly BudgetPod[], spec: BudgetSpec): boolean {
  return failingPercent(pods) > spec.haltAbovePercentFailing;
}

export function budgetDecision(candidateUid: string, pods: readonly BudgetPod[], spec: BudgetSpec): BudgetDecision {
  return budgetDecisionFromCounts(budgetCountsOf(candidateUid, pods), spec);
}

/** `budgetDecision` over the counts of the policy's pods. */
export function budgetDecisionFromCounts(counts: BudgetCounts, spec: BudgetSpec): BudgetDecision {
  const { failing, unavailable } = counts;
  const percent = counts.pods === 0 ? 0 : (failing * 100) / counts.pods;
  if (percent > spec.haltAbovePercentFailing) {
    return {
      allow: false,
      reason: 'halted',
      message: `${failing} of ${counts.pods} pods (${Math.round(percent)}%) fail at once, above haltAbovePercentFailing ${spec.haltAbovePercentFailing}%: remediation halted`,
    };
  }
  const max = resolveMaxUnavailable(spec.maxUnavailable, counts.pods);
  if (unavailable >= max) {
    return {
      allow: false,
      reason: 'budget',
      message: `${unavailable} other pods are unavailable or being remediated, maxUnavailable is ${String(spec.maxUnavailable)} (${max}): remediation deferred`,
    };
  }
  return { allow: true };
}
