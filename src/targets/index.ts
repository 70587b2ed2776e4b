/**
 * The targets stage (pure): policy × pod → probe targets, and at probe time
 * the concrete request (pod IP, resolved port, vetted address).
 */
export { AddressGuard } from './address.ts';
export { planTargets, policyKey, probeKeyOf, samePlannedProbe, selects } from './plan.ts';
export type { PlanIssue, PlanIssueCode, TargetPlan } from './plan.ts';
export { resolvePort } from './port.ts';
export type { PortResolution } from './port.ts';
export { buildRequest, expandCommand } from './request.ts';
export type { ProbeRequest } from './request.ts';
export { matchesSelector } from './selector.ts';
