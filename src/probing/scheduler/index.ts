export { Scheduler } from './scheduler.ts';
export type { PassResult, ScheduledTarget, SchedulerOptions, SchedulerStats } from './scheduler.ts';
export { FairShare } from './fair-share.ts';
export { fnv1a, handoverFirstPass, spreadDueAt } from './spread.ts';
export type { FirstPass } from './spread.ts';
export type { Admission, Share } from './fair-share.ts';
