import { resolveMaxUnavailable } from './budget.ts';
import type { BudgetDecision, BudgetSpec } from './budget.ts';
import type { LedgerEntry } from './ledger.ts';

/**
 * The remediation budget over the whole fleet (ADR 0033), pure: the halt
 * and maxUnavailable of design §4 rule 4 counted across the replicas, and
 * each replica's share of maxUnavailable.
 *
 * - Halt: the policy's failing pods across the replicas (each replica probes
 *   only the pods it owns, so its own count is about 1/n of the policy's),
 *   plus the pods remediated within the ledger's window that no longer count
 *   as failing (terminating or gone): an evicted pod and its replacement do
 *   not reset the count. The denominator is the policy's pods that are not
 *   terminating: a replacement stands in for the pod it replaces, it does
 *   not grow the policy.
 * - maxUnavailable: the other pods the kubelet shows not Ready or that are
 *   terminating, plus every replica's remediations in flight (ledger entries
 *   whose pods are still Ready).
 * - Share: this replica's own remediations not yet over (their pods still
 *   exist) stay under ⌈maxUnavailable × ownedPods / pods⌉, at least 1, so no
 *   replica alone takes the whole budget.
 */

/** Where a ledger entry's pod stands in this replica's informer. */
export type EntryPod = 'gone' | 'terminating' | 'available' | 'unavailable';

export interface FleetBudgetInput {
  /** This replica's identity. */
  readonly self: string;
  readonly candidateUid: string;
  /** The policy's selected pods that are not terminating. */
  readonly pods: number;
  /** Of them, the ones this replica owns. */
  readonly ownedPods: number;
  /** Of them, failing liveness or startup across the fleet: this replica's own count plus what the live peers published. */
  readonly failing: number;
  /** Other pods than the candidate that are not Ready or are terminating, remediations in flight not counted. */
  readonly unavailable: number;
  /** The ledger's entries inside its window, plus this replica's remediations in flight not yet written there. */
  readonly entries: readonly LedgerEntry[];
  /** Where an entry's pod stands. */
  readonly podOf: (entry: LedgerEntry) => EntryPod;
}

export interface FleetCounts {
  readonly failing: number;
  /** Remediated within the window, terminating or gone (no longer in `failing`). */
  readonly remediated: number;
  readonly unavailable: number;
  /** Remediations in flight (their pods still Ready), every replica's. */
  readonly inFlight: number;
  readonly max: number;
  readonly share: number;
  /** This replica's remediations whose pods still exist. */
  readonly own: number;
}

export function shareOf(max: number, ownedPods: number, pods: number): number {
  if (pods <= 0) return Math.max(1, max);
  return Math.max(1, Math.ceil((max * ownedPods) / pods));
}

export function fleetCounts(input: FleetBudgetInput, spec: BudgetSpec): FleetCounts {
  let remediated = 0;
  let inFlight = 0;
  let own = 0;
  const seen = new Set<string>();
  for (const e of input.entries) {
    if (e.uid === input.candidateUid || seen.has(e.uid)) continue;
    seen.add(e.uid);
    const where = input.podOf(e);
    if (where === 'gone' || where === 'terminating') remediated++;
    if (where === 'available') inFlight++;
    if (e.replica === input.self && where !== 'gone') own++;
  }
  const max = resolveMaxUnavailable(spec.maxUnavailable, input.pods);
  return { failing: input.failing, remediated, unavailable: input.unavailable + inFlight, inFlight, max, share: shareOf(max, input.ownedPods, input.pods), own };
}

export function fleetBudgetDecision(input: FleetBudgetInput, spec: BudgetSpec): BudgetDecision {
  const c = fleetCounts(input, spec);
  const failing = c.failing + c.remediated;
  const percent = input.pods === 0 ? 0 : (failing * 100) / input.pods;
  if (percent > spec.haltAbovePercentFailing) {
    return {
      allow: false,
      reason: 'halted',
      message: `${c.failing} of ${input.pods} pods fail across the replicas and ${c.remediated} were remediated recently (${Math.round(percent)}%), above haltAbovePercentFailing ${spec.haltAbovePercentFailing}%: remediation halted`,
    };
  }
  if (c.unavailable >= c.max) {
    return {
      allow: false,
      reason: 'budget',
      message: `${c.unavailable} other pods are unavailable or being remediated across the replicas (${c.inFlight} in flight), maxUnavailable is ${String(spec.maxUnavailable)} (${c.max}): remediation deferred`,
    };
  }
  if (c.own >= c.share) {
    return {
      allow: false,
      reason: 'share',
      message: `this replica has ${c.own} remediations not yet over, its share of maxUnavailable ${c.max} is ${c.share} (${input.ownedPods} of ${input.pods} pods): remediation deferred`,
    };
  }
  return { allow: true };
}
