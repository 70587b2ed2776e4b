/**
 * The panic threshold: a pure guard between `results` and `writeback` that
 * caps how many of a policy's gated pods outprobe holds False (ADR 0015),
 * counted across the replicas and split between them (ADR 0032).
 */
export { decidePanic, maxUnready, panicCounts, panicExitLimit, panicMessage } from './decide.ts';
export type { FailingPod, PanicCounts, PanicInput, PanicState } from './decide.ts';
export { allowanceOf, arrivals, holding, noHold, settling, splitCap, stepHold } from './share.ts';
export type { Allowance, AllowanceInput, HoldInput, HoldState } from './share.ts';
