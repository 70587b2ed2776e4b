/**
 * Fail-open rules (issue 30, ADR 0035): which gates outprobe writes True when
 * it stops writing them (a policy changed, was deleted or became Invalid, a pod
 * was orphaned, uninstall), and only over what outprobe wrote.
 */
export { claimOf, claimed, gateReleasedReason, orphanBoundMs, orphaned, ownTypePrefix, policyRemovedReason, releasable, releaseCondition, releaseReasons, releasedByChange, strandedGates } from './release.ts';
export type { ReleaseCause, Writer } from './release.ts';
export { planUninstall } from './uninstall.ts';
export type { JsonPatchOp, PodJsonView, UninstallPlan } from './uninstall.ts';
