/**
 * The ticker a target's passes run on (ADR 0009, ADR 0064): ticks at
 * anchor + k·period, as the kubelet's `time.Ticker`, except that a pass
 * outprobe itself started late restarts it.
 */

/**
 * How late a pass may start and still keep its ticker's phase, when it did
 * not wait for a probe slot: 1 % of the period (timers and a busy event loop
 * make every pass a little late; keeping the phase then keeps a target on the
 * phase every replica gives it, ADR 0019).
 */
export function phaseSlackMs(periodMs: number): number {
  return periodMs / 100;
}

/** When one pass was due and started, and whether it waited in the pool for a probe slot. */
export interface PassTiming {
  readonly dueAt: number;
  readonly startedAt: number;
  readonly waited: boolean;
}

/**
 * The ticker after a pass that completed at `now`: its phase and when the
 * next pass is due. A pass that waited for a probe slot, or started later
 * than `phaseSlackMs` (waits the kubelet's goroutines do not have), restarts
 * the ticker from its start, so the next pass falls one whole period after
 * it instead of at the old phase: a late pass is never followed by a short
 * gap, and a backlog never drains as probes above one per period (issue 31:
 * 2,214 probes/s for 2,000 due, gaps of 8.7 s, ADR 0064). Only a tick that
 * fell while such a pass ran is pending, none that fell while it waited.
 */
export function afterPass(anchor: number, periodMs: number, pass: PassTiming, now: number): { readonly anchor: number; readonly dueAt: number } {
  const late = pass.waited || pass.startedAt - pass.dueAt > phaseSlackMs(periodMs);
  const phase = late ? pass.startedAt : anchor;
  return { anchor: phase, dueAt: nextTick(phase, periodMs, late ? pass.startedAt : pass.dueAt, now) };
}

/**
 * When a ticker phased at `anchor` next lets a pass through that was due at
 * `dueAt` and completed at `now`: at once if a tick fell after the pass was
 * due (Go's ticker keeps one pending tick), else at the next tick. A pass
 * whose ticker restarted at its start counts from its start (`dueAt` =
 * start): only a tick that fell while it ran is pending, none that fell
 * while it waited to start.
 */
export function nextTick(anchor: number, periodMs: number, dueAt: number, now: number): number {
  if (periodMs <= 0) return now;
  const lastTick = anchor + Math.floor((now - anchor) / periodMs) * periodMs;
  return lastTick > dueAt ? now : lastTick + periodMs;
}
