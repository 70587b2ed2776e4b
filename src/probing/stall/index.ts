/**
 * The stall guard (ADR 0016): a failed probe attempt that overlapped a stall
 * of the controller's own event loop, or whose deadline fired late, is void:
 * errored, retried, never counted.
 */
export { EventLoopMonitor } from './monitor.ts';
export type { ArmTimer, EventLoopMonitorOptions, StallGuard } from './monitor.ts';
export { guardedAttempt } from './guard.ts';
export { judgeAttempt } from './judge.ts';
export type { AttemptTiming } from './judge.ts';
export { StallLog } from './stall-log.ts';
