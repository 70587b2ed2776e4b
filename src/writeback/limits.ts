import type { Clock } from '../kernel/index.ts';
import type { BudgetSpec } from './budget.ts';

/**
 * The installer's limits on remediation (issue #10): a ProbePolicy author is
 * trusted with no more than their own RBAC in one namespace, so no policy may
 * raise these, whatever its spec says. Flags of the controller.
 */
export interface RemediationLimits {
  /**
   * Evictions and deletes this replica sends per minute, across every policy
   * (`--max-remediations-per-minute`): a token bucket holding as many tokens
   * as the rate, refilled evenly. 0 sends none. @default Infinity (no limit)
   */
  readonly perMinute: number;
  /** Ceiling for every policy's haltAbovePercentFailing (`--max-halt-above-percent-failing`). @default 100 */
  readonly maxHaltAbovePercentFailing: number;
  /** Honour `liveness.action: Delete` (`--allow-delete-action`); otherwise the pod is evicted. @default true */
  readonly allowDelete: boolean;
}

/** No installer limits: what the Controller uses when it is given none. main.ts always passes the flags. */
export const noRemediationLimits: RemediationLimits = { perMinute: Infinity, maxHaltAbovePercentFailing: 100, allowDelete: true };

export type DisruptionAction = 'Evict' | 'Delete';

/**
 * Delete that the installer does not allow becomes an Eviction rather than
 * making the policy Invalid: an Eviction is strictly gentler (it honours
 * PodDisruptionBudgets), and the policy's readiness gating keeps working.
 */
export function effectiveAction(asked: DisruptionAction, limits: RemediationLimits): DisruptionAction {
  return asked === 'Delete' && !limits.allowDelete ? 'Evict' : asked;
}

/** The policy's budget with haltAbovePercentFailing clamped to the installer's ceiling. */
export function effectiveBudget(spec: BudgetSpec, limits: RemediationLimits): BudgetSpec {
  const halt = Math.min(spec.haltAbovePercentFailing, limits.maxHaltAbovePercentFailing);
  return halt === spec.haltAbovePercentFailing ? spec : { ...spec, haltAbovePercentFailing: halt };
}

/** What of a policy's remediation spec the installer overrides, in words for its status and Events. */
export function limitNotes(
  spec: { readonly action: DisruptionAction | null; readonly budget: BudgetSpec; readonly remediates: boolean },
  limits: RemediationLimits,
): string[] {
  if (!spec.remediates) return [];
  const notes: string[] = [];
  const halt = spec.budget.haltAbovePercentFailing;
  if (halt > limits.maxHaltAbovePercentFailing) {
    notes.push(`haltAbovePercentFailing ${halt} is above the installer's ceiling of ${limits.maxHaltAbovePercentFailing} (--max-halt-above-percent-failing): ${limits.maxHaltAbovePercentFailing} applies`);
  }
  if (spec.action === 'Delete' && !limits.allowDelete) {
    notes.push('liveness.action Delete is not allowed by the installer (--allow-delete-action): pods are evicted instead');
  }
  return notes;
}

/**
 * A token bucket that refuses instead of waiting: a remediation refused now
 * is deferred and asked again on a later step, while the pod still fails.
 */
export class RemediationRate {
  readonly #clock: Clock;
  readonly #perMinute: number;
  #tokens: number;
  #at: number;

  constructor(options: { readonly clock: Clock; readonly perMinute: number }) {
    this.#clock = options.clock;
    this.#perMinute = Math.max(0, options.perMinute);
    this.#tokens = this.#perMinute;
    this.#at = options.clock.now();
  }

  get perMinute(): number {
    return this.#perMinute;
  }

  /** Takes a token if there is one. */
  take(): boolean {
    if (this.#perMinute === Infinity) return true;
    const now = this.#clock.now();
    this.#tokens = Math.min(this.#perMinute, this.#tokens + ((now - this.#at) * this.#perMinute) / 60_000);
    this.#at = now;
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }
}
