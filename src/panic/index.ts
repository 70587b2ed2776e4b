/**
 * The panic threshold: a pure guard between `results` and `writeback` that
 * caps how many of a policy's gated pods outprobe holds False (ADR 0015).
 */
export { decidePanic, maxUnready, panicCounts, panicExitLimit, panicMessage } from './decide.ts';
export type { FailingPod, PanicCounts, PanicInput, PanicState } from './decide.ts';
