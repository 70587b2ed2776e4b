export type { Clock, Random } from './clock.ts';
export { systemClock, systemRandom } from './clock.ts';
export type { ProbeKind } from './probe-kind.ts';
export { probeKinds, probeKindTitle } from './probe-kind.ts';
export type { CancelTimer } from './timer.ts';
export { maxTimerMs, setLongTimeout } from './timer.ts';
export { nextTurn, Slice } from './slice.ts';
