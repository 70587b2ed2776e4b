/**
 * The write-back stage: readiness-gate conditions (version-gated, UID-guarded
 * strategic merge patches) and remediation (evictions and deletes with
 * preconditions, under a budget).
 */
export { deletePod, evictPod, patchGateCondition } from './api.ts';
export type { DisruptionOptions, DisruptionResult, DisruptionTarget } from './api.ts';
export { budgetCountsOf, budgetDecision, budgetDecisionFromCounts, failingPercent, isHalted, resolveMaxUnavailable } from './budget.ts';
export type { BudgetCounts, BudgetDecision, BudgetPod, BudgetSpec } from './budget.ts';
export { fleetBudgetDecision, fleetCounts, shareOf } from './fleet-budget.ts';
export type { EntryPod, FleetBudgetInput, FleetCounts } from './fleet-budget.ts';
export { appendEntry, decodeLedger, encodeLedger, ledgerAnnotation, ledgerLabel, ledgerName, maxLedgerEntries, pruneLedger, removeEntry } from './ledger.ts';
export type { LedgerEntry } from './ledger.ts';
export { LedgerStore } from './ledger-store.ts';
export type { LedgerStoreOptions, Reservation } from './ledger-store.ts';
export { GateWriter } from './gate-writer.ts';
export type { GateCondition, GateEntryView, GatePatch, GatePatchResult, GateWriteResult, GateWriteTiming, GateWriterOptions, PodRef, WriteContext } from './gate-writer.ts';
export { WriteQueue, urgencies } from './write-queue.ts';
export type { QueuedWrite, Urgency, WriteOutcome, WriteQueueOptions } from './write-queue.ts';
export { effectiveAction, effectiveBudget, limitNotes, noRemediationLimits, RemediationRate } from './limits.ts';
export type { DisruptionAction, RemediationLimits } from './limits.ts';
