/** The status stage: ProbePolicy `.status` computed purely, written only when it changed. */
export { computeStatus, sameStatus } from './compute.ts';
export type { PolicyCondition, PolicyStatus, StatusInput } from './compute.ts';
