export { Scheduler } from './scheduler.ts';
export type { ScheduledTarget, SchedulerOptions, SchedulerStats } from './scheduler.ts';
