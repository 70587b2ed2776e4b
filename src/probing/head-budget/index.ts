/**
 * The shared budget for response-head bytes held by HTTP probes in flight
 * (ADR 0056): a per-probe free allowance, one pool beyond it.
 */
export { HeadBudget, HeadLease, sharedHeadBudget } from './budget.ts';
export type { HeadBudgetOptions } from './budget.ts';
