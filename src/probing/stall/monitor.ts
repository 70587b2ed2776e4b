import { performance } from 'node:perf_hooks';
import type { Outcome, StallNote } from '../outcome.ts';
import { judgeAttempt } from './judge.ts';
import { StallLog } from './stall-log.ts';

/**
 * The seam the runner sees: open a window when a probe attempt starts; the
 * returned function closes it and judges the attempt's outcome.
 */
export interface StallGuard {
  open(): (outcome: Outcome, timeoutMs: number) => StallNote | null;
}

/** Arms a one-shot timer; returns a function that cancels it. */
export type ArmTimer = (callback: () => void, ms: number) => () => void;

export interface EventLoopMonitorOptions {
  /** A stall longer than this voids the failures it overlaps; 0 never voids. */
  readonly boundMs: number;
  /**
   * A monotonic clock in ms. The wall clock would turn an NTP step into a
   * stall (or hide one). @default performance.now
   */
  readonly now?: () => number;
  /** One-shot timer for the sampler. @default setTimeout, unref'd */
  readonly arm?: ArmTimer;
  /** How often the sampler looks. @default 20 */
  readonly intervalMs?: number;
  /** Each sample's delay in ms (for the `outprobe_event_loop_delay_seconds` histogram). */
  readonly onDelay?: (delayMs: number) => void;
  /** How long a stall is remembered. @default 600000 (10 min, above any probe attempt) */
  readonly horizonMs?: number;
}

const unrefTimer: ArmTimer = (callback, ms) => {
  const t = setTimeout(callback, ms);
  t.unref();
  return () => {
    clearTimeout(t);
  };
};

/**
 * Measures event-loop delay the way a stalled probe feels it: a timer armed
 * every `intervalMs` notes how late it fires (the same measurement as
 * perf_hooks.monitorEventLoopDelay, but with timestamps, which that API does
 * not keep). Each delay above the bound becomes a stall interval in a
 * StallLog; a probe window also counts the sampler's current lateness, so a
 * stall that has just ended is seen even when the probe's own timer ran
 * before the sampler's.
 */
export class EventLoopMonitor implements StallGuard {
  readonly #boundMs: number;
  readonly #now: () => number;
  readonly #arm: ArmTimer;
  readonly #intervalMs: number;
  readonly #onDelay: (delayMs: number) => void;
  readonly #log: StallLog;
  #dueAt: number | undefined;
  #cancel: (() => void) | undefined;

  constructor(options: EventLoopMonitorOptions) {
    this.#boundMs = options.boundMs;
    this.#now = options.now ?? (() => performance.now());
    this.#arm = options.arm ?? unrefTimer;
    this.#intervalMs = options.intervalMs ?? 20;
    this.#onDelay = options.onDelay ?? (() => undefined);
    this.#log = new StallLog(options.horizonMs ?? 600_000);
  }

  start(): void {
    if (this.#cancel !== undefined) return;
    this.#schedule();
  }

  stop(): void {
    this.#cancel?.();
    this.#cancel = undefined;
    this.#dueAt = undefined;
  }

  open(): (outcome: Outcome, timeoutMs: number) => StallNote | null {
    const startedAt = this.#now();
    return (outcome, timeoutMs) => {
      if (this.#boundMs <= 0) return null;
      const endedAt = this.#now();
      const pendingFrom = this.#dueAt !== undefined && this.#dueAt < endedAt ? this.#dueAt : undefined;
      const stalledMs = this.#log.longestWithin(startedAt, endedAt, pendingFrom);
      return judgeAttempt(outcome, { startedAt, endedAt, timeoutMs, stalledMs }, this.#boundMs);
    };
  }

  /** Did the event loop stall (beyond the bound) within the last `ms`, or is it stalled now? (ADR 0033) */
  stalledWithin(ms: number): boolean {
    if (this.#boundMs <= 0) return false;
    const now = this.#now();
    const pendingFrom = this.#dueAt !== undefined && this.#dueAt + this.#boundMs < now ? this.#dueAt : undefined;
    return this.#log.longestWithin(now - ms, now, pendingFrom) > 0;
  }

  #schedule(): void {
    this.#dueAt = this.#now() + this.#intervalMs;
    this.#cancel = this.#arm(() => {
      this.#fired();
    }, this.#intervalMs);
  }

  #fired(): void {
    const firedAt = this.#now();
    const dueAt = this.#dueAt ?? firedAt;
    const delayMs = Math.max(0, firedAt - dueAt);
    if (delayMs > this.#boundMs) this.#log.add(dueAt, firedAt);
    this.#onDelay(delayMs);
    this.#schedule();
  }
}
