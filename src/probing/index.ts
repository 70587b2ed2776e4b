/**
 * The probing stage: executors (HTTP, TCP, gRPC) that turn a resolved probe
 * request into an Outcome, and the scheduler that runs probe passes on time
 * with bounded concurrency, shared fairly between namespaces and policies.
 */
export { createHttpProber, maxBodyBytes, maxRedirects, ProbeDispatcher } from './http/index.ts';
export { HeadBudget, sharedHeadBudget } from './head-budget/index.ts';
export type { HttpProber, HttpProberOptions } from './http/index.ts';
export { createGrpcProber, formatGoDuration } from './grpc/index.ts';
export type { GrpcProber } from './grpc/index.ts';
export { createExecProber, execOutputText, maxExecOutput, maxPublishedExecOutput, sanitizeOutput, withheldExecOutput } from './exec/index.ts';
export type { ExecProber, ExecProberOptions, ExecTarget } from './exec/index.ts';
export { tcpProbe } from './tcp/index.ts';
export type { TcpProber } from './tcp/index.ts';
export { errored, failure, isSuccess, success, voided, warning } from './outcome.ts';
export type { Outcome, StallNote } from './outcome.ts';
export { joinHostPort } from './request.ts';
export type { GrpcProbeRequest, HttpHeader, HttpProbeRequest, TcpProbeRequest } from './request.ts';
export { maxProbeAttempts, probeWithRetries } from './retry.ts';
export { Scheduler } from './scheduler/index.ts';
export type { FirstPass, PassResult, ScheduledTarget, SchedulerOptions, SchedulerStats, Share } from './scheduler/index.ts';
export { FairShare, handoverFirstPass, spreadDueAt } from './scheduler/index.ts';
export { EventLoopMonitor, StallLog, guardedAttempt, judgeAttempt } from './stall/index.ts';
export type { ArmTimer, AttemptTiming, EventLoopMonitorOptions, StallGuard } from './stall/index.ts';
