/**
 * The write-back stage: readiness-gate conditions (version-gated, UID-guarded
 * strategic merge patches) and remediation (evictions and deletes with
 * preconditions, under a budget).
 */
export { deletePod, evictPod, patchGateCondition } from './api.ts';
export type { DisruptionOptions, DisruptionResult, DisruptionTarget } from './api.ts';
export { budgetCountsOf, budgetDecision, budgetDecisionFromCounts, failingPercent, isHalted, resolveMaxUnavailable } from './budget.ts';
export type { BudgetCounts, BudgetDecision, BudgetPod, BudgetSpec } from './budget.ts';
export { GateWriter } from './gate-writer.ts';
export type { GateCondition, GatePatch, GatePatchResult, GateWriteResult, GateWriteTiming, GateWriterOptions, PodRef, WriteContext } from './gate-writer.ts';
export { WriteQueue, urgencies } from './write-queue.ts';
export type { QueuedWrite, Urgency, WriteOutcome, WriteQueueOptions } from './write-queue.ts';
export { effectiveAction, effectiveBudget, limitNotes, noRemediationLimits, RemediationRate } from './limits.ts';
export type { DisruptionAction, RemediationLimits } from './limits.ts';
