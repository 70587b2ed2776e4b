import PQueue from 'p-queue';
import type { Clock, Random } from '../../kernel/index.ts';
import { DueHeap } from './heap.ts';

/** One probe target as the scheduler sees it: a key, a period and a pass to run. */
export interface ScheduledTarget {
  readonly key: string;
  readonly periodMs: number;
  /**
   * When the first pass may run, e.g. container start + initialDelaySeconds
   * (kubelet-probes.md §3.10: no phase error from a ticker).
   */
  readonly firstDueAt: number;
  /**
   * Spread the first pass uniformly over one period from now. Used for
   * targets born in the first period after process start and for targets
   * gained in a shard handover, so a restart does not probe everything at once.
   * @default false
   */
  readonly jitter?: boolean;
  /** One pass (gating + probe + record). Must not throw; the signal aborts on remove/replace/stop. */
  readonly run: (signal: AbortSignal) => Promise<void>;
}

export interface SchedulerOptions {
  readonly clock: Clock;
  readonly random: Random;
  /** Maximum passes in flight across all targets. @default 256 */
  readonly concurrency?: number;
  /** Called when a pass throws (a bug: passes report failures as outcomes). */
  readonly onPassError?: (key: string, error: unknown) => void;
}

export interface SchedulerStats {
  readonly targets: number;
  readonly inFlight: number;
  readonly queued: number;
  /** How late the most recent pass started relative to its due time. */
  readonly lastLagMs: number;
}

/**
 * The reason a sleeping loop is woken with. Preallocated: `abort()` without a
 * reason builds a DOMException with a stack trace, which cost about 7 % of a
 * saturated scheduler's CPU.
 */
const wakeUp = new Error('scheduler wake-up');

interface Entry {
  readonly target: ScheduledTarget;
  generation: number;
  dueAt: number;
  running: AbortController | undefined;
  triggered: boolean;
}

/**
 * Runs every target once per period: the next pass is due one period after
 * the previous one *completed* (the mutable worker's rule), so one target
 * never has two passes at once, and a slow target does not pile up. A single
 * p-queue bounds concurrency across all targets. Time comes from the injected
 * clock; `step()` does one round of dispatching and is what tests drive.
 */
export class Scheduler {
  readonly #clock: Clock;
  readonly #random: Random;
  readonly #queue: PQueue;
  readonly #onPassError: (key: string, error: unknown) => void;
  readonly #entries = new Map<string, Entry>();
  readonly #heap = new DueHeap();
  #generation = 0;
  #lastLagMs = 0;
  #sleepingUntil = Number.POSITIVE_INFINITY;
  #wake: AbortController | undefined;
  #looping = false;
  #stepQueued = false;

  constructor(options: SchedulerOptions) {
    this.#clock = options.clock;
    this.#random = options.random;
    this.#queue = new PQueue({ concurrency: options.concurrency ?? 256 });
    this.#onPassError = options.onPassError ?? (() => undefined);
  }

  /** Adds a target, or replaces it (cancelling its in-flight pass) when the key exists. */
  upsert(target: ScheduledTarget): void {
    this.remove(target.key);
    const now = this.#clock.now();
    const jitter = target.jitter === true ? Math.floor(this.#random() * target.periodMs) : 0;
    const entry: Entry = { target, generation: 0, dueAt: Math.max(target.firstDueAt, now + jitter), running: undefined, triggered: false };
    this.#entries.set(target.key, entry);
    this.#schedule(entry, entry.dueAt);
  }

  /** Stops probing a target; an in-flight pass is aborted. */
  remove(key: string): boolean {
    const entry = this.#entries.get(key);
    if (entry === undefined) return false;
    this.#entries.delete(key);
    entry.generation = -1;
    entry.running?.abort(new Error('target removed'));
    return true;
  }

  has(key: string): boolean {
    return this.#entries.has(key);
  }

  /** Runs a pass as soon as possible (or right after the in-flight one); the period restarts from it. */
  trigger(key: string): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    if (entry.running === undefined) this.#schedule(entry, this.#clock.now());
    else entry.triggered = true;
  }

  /** Hands every due target to the queue; returns when the next one is due. */
  step(): { readonly dispatched: number; readonly nextDueAt: number | undefined } {
    const now = this.#clock.now();
    let dispatched = 0;
    for (let top = this.#heap.peek(); top !== undefined && top.dueAt <= now; top = this.#heap.peek()) {
      this.#heap.pop();
      const entry = this.#entries.get(top.key);
      if (entry?.generation !== top.generation) continue; // stale: rescheduled or removed
      this.#dispatch(entry);
      dispatched++;
    }
    return { dispatched, nextDueAt: this.#heap.peek()?.dueAt };
  }

  /** The loop: step, sleep until the next due time (or an earlier wake-up), repeat. */
  async start(signal: AbortSignal): Promise<void> {
    const stop = (): void => this.#wake?.abort(wakeUp);
    signal.addEventListener('abort', stop, { once: true });
    this.#looping = true;
    while (!signal.aborted) {
      const { nextDueAt } = this.step();
      this.#wake = new AbortController();
      this.#sleepingUntil = nextDueAt ?? this.#clock.now() + 60_000;
      await this.#clock.sleepUntil(this.#sleepingUntil, this.#wake.signal).catch(() => undefined);
      this.#sleepingUntil = Number.POSITIVE_INFINITY;
    }
    this.#looping = false;
    signal.removeEventListener('abort', stop);
    for (const entry of this.#entries.values()) entry.running?.abort(new Error('scheduler stopped'));
    this.#queue.clear();
    await this.#queue.onIdle();
  }

  /** Resolves when no pass is running or queued. */
  idle(): Promise<void> {
    return this.#queue.onIdle();
  }

  stats(): SchedulerStats {
    return { targets: this.#entries.size, inFlight: this.#queue.pending, queued: this.#queue.size, lastLagMs: this.#lastLagMs };
  }

  #schedule(entry: Entry, dueAt: number): void {
    entry.generation = ++this.#generation;
    entry.dueAt = dueAt;
    this.#heap.push({ dueAt, key: entry.target.key, generation: entry.generation });
    if (dueAt >= this.#sleepingUntil) return;
    if (this.#looping && dueAt <= this.#clock.now()) {
      // Due at once (a trigger, or a zero period as in the benchmarks): one
      // microtask steps for all of this tick's, and the loop sleeps on.
      this.#queueStep();
      return;
    }
    this.#wake?.abort(wakeUp);
  }

  #queueStep(): void {
    if (this.#stepQueued) return;
    this.#stepQueued = true;
    queueMicrotask(() => {
      this.#stepQueued = false;
      if (this.#looping) this.step();
    });
  }

  #dispatch(entry: Entry): void {
    const controller = new AbortController();
    entry.running = controller;
    const dueAt = entry.dueAt;
    void this.#queue.add(async () => {
      if (controller.signal.aborted) return;
      this.#lastLagMs = this.#clock.now() - dueAt;
      try {
        await entry.target.run(controller.signal);
      } catch (error: unknown) {
        this.#onPassError(entry.target.key, error);
      } finally {
        this.#complete(entry, controller);
      }
    });
  }

  #complete(entry: Entry, controller: AbortController): void {
    if (entry.running !== controller) return;
    entry.running = undefined;
    if (entry.generation < 0) return; // removed while running
    const now = this.#clock.now();
    // A trigger that arrived during the pass runs right after it (the kubelet's
    // capacity-1 trigger channel); otherwise the next pass is one period away.
    this.#schedule(entry, entry.triggered ? now : now + entry.target.periodMs);
    entry.triggered = false;
  }
}
