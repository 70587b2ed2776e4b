import type { Clock, Random } from '../../kernel/index.ts';
import { abortLinked, ownedController } from '../abort-fanout.ts';
import { FairShare } from './fair-share.ts';
import type { Admission, Share, Slot } from './fair-share.ts';
import { DueHeap } from './heap.ts';
import { afterPass } from './ticker.ts';
import type { PassTiming } from './ticker.ts';

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
   * Where the ticks fall after the first pass: phaseAt + k·period. A first
   * pass that catches up a missed slot runs now and keeps the ticks on that
   * slot's phase (a shard handover, ADR 0019). @default the first pass
   */
  readonly phaseAt?: number;
  /**
   * Spread the first pass uniformly over one period from now, with the
   * injected random source. The controller spreads its targets itself, by a
   * deterministic phase per key (`spreadDueAt`, ADR 0019), and does not use it.
   * @default false
   */
  readonly jitter?: boolean;
  /**
   * Whose probe this is: concurrency is shared fairly between namespaces,
   * then between policies in a namespace (see fair-share.ts).
   * @default one share for every target without one
   */
  readonly share?: Share;
  /**
   * One pass (gating + probe + record). Must not throw; the signal aborts on
   * remove/replace/stop. Every pass of the target gets the same signal until
   * then (no AbortController per pass, issue 31 item 6), so a pass removes
   * any listener it adds to it. It may say when the next pass is due instead
   * of the next tick (e.g. the end of an initial delay).
   */
  readonly run: (signal: AbortSignal) => Promise<void> | Promise<PassResult>;
}

/** What a pass may tell the scheduler about the next one. */
export interface PassResult {
  /**
   * Run the next pass at this time (ms; at once if already past) and phase
   * the ticks from it, as a trigger does. @default the next tick
   */
  readonly nextDueAt?: number | undefined;
}

export interface SchedulerOptions {
  readonly clock: Clock;
  readonly random: Random;
  /**
   * Passes in flight across all targets, shared fairly between shares
   * (fair-share.ts); up to twice it while a share reclaims slots that others
   * borrowed and hold on slow passes. @default 256
   */
  readonly concurrency?: number;
  /** Called when a pass throws (a bug: passes report failures as outcomes). */
  readonly onPassError?: (key: string, error: unknown) => void;
  /** Called as each pass starts, with its share and how late it starts (ms after it was due). */
  readonly onPassStart?: (share: Share, lagMs: number) => void;
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
  /** The ticker's phase: ticks fall at anchor + k·period (kubelet `time.Ticker`). */
  anchor: number;
  /** The pass in flight or waiting for a slot (its Job), if any. */
  running: Job | undefined;
  /** Aborted when the target is removed or replaced, or the loop stops; every pass until then shares it. */
  controller: AbortController | undefined;
  triggered: boolean;
  /**
   * What the entry's pass promise is handed to (`then`), made at its first
   * pass and kept: a pass then allocates no closure and no async frame.
   */
  onPassEnd: ((result: unknown) => void) | undefined;
  onPassError: ((error: unknown) => void) | undefined;
}

/** A due pass waiting for a probe slot, then running. */
interface Job {
  readonly entry: Entry;
  readonly controller: AbortController;
  readonly dueAt: number;
  /** The `#pump` round right after its dispatch: admitted in a later one, it waited for a probe slot. */
  readonly round: number;
  /** Set when it is admitted. */
  slot: Slot<Job> | undefined;
  startedAt: number;
  waited: boolean;
}

const noShare: Share = { namespace: '', policy: '' };

/**
 * Runs every target once per period on a ticker, as the kubelet's legacy
 * worker does (`time.Ticker`, kubelet-probes.md §3.8; ADR 0009):
 * ticks fall at anchor + k·period, where the anchor is the first pass (or
 * the last trigger, or a time a pass asked for); a pass that outlives one or
 * more ticks is followed at once by one more pass (Go keeps one pending tick
 * and drops the rest), otherwise the next pass waits for the next tick. A
 * pass that waited for a probe slot, or started more than 1 % of its period
 * late, restarts the ticks from its start (ticker.ts, ADR 0064). One
 * target never has two passes at once, and a slow target does not pile up. One
 * FairShare pool bounds concurrency across all targets and admits due passes
 * fairly between namespaces and policies. Time comes from the injected
 * clock; `step()` does one round of dispatching and is what tests drive.
 */
export class Scheduler {
  readonly #clock: Clock;
  readonly #random: Random;
  readonly #pool: FairShare<Job>;
  readonly #onPassError: (key: string, error: unknown) => void;
  readonly #onPassStart: ((share: Share, lagMs: number) => void) | undefined;
  #idleWaiters: (() => void)[] = [];
  readonly #entries = new Map<string, Entry>();
  readonly #heap = new DueHeap();
  #generation = 0;
  #lastLagMs = 0;
  #sleepingUntil = Number.POSITIVE_INFINITY;
  #wake: AbortController | undefined;
  #looping = false;
  #stepQueued = false;
  /** Counts `#pump` calls (see Job.round). */
  #round = 0;

  constructor(options: SchedulerOptions) {
    this.#clock = options.clock;
    this.#random = options.random;
    this.#pool = new FairShare<Job>(options.concurrency ?? 256);
    this.#onPassError = options.onPassError ?? (() => undefined);
    this.#onPassStart = options.onPassStart;
  }

  /** Adds a target, or replaces it (cancelling its in-flight pass) when the key exists. */
  upsert(target: ScheduledTarget): void {
    this.remove(target.key);
    const now = this.#clock.now();
    const jitter = target.jitter === true ? Math.floor(this.#random() * target.periodMs) : 0;
    const dueAt = Math.max(target.firstDueAt, now + jitter);
    const entry: Entry = { target, generation: 0, dueAt, anchor: target.phaseAt ?? dueAt, running: undefined, controller: undefined, triggered: false, onPassEnd: undefined, onPassError: undefined };
    this.#entries.set(target.key, entry);
    this.#schedule(entry, entry.dueAt);
  }

  /** Stops probing a target; an in-flight pass is aborted. */
  remove(key: string): boolean {
    const entry = this.#entries.get(key);
    if (entry === undefined) return false;
    this.#entries.delete(key);
    entry.generation = -1;
    if (entry.controller !== undefined) abortLinked(entry.controller, new Error('target removed'));
    return true;
  }

  has(key: string): boolean {
    return this.#entries.has(key);
  }

  /**
   * Runs a pass as soon as possible (or right after the in-flight one); the
   * ticks restart from it (the kubelet resets its ticker on a manual trigger).
   */
  trigger(key: string): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    if (entry.running !== undefined) {
      entry.triggered = true;
      return;
    }
    entry.anchor = this.#clock.now();
    this.#schedule(entry, entry.anchor);
  }

  /** Hands every due target to the pool, starts what it admits; returns when the next one is due. */
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
    if (dispatched > 0) this.#pump();
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
    for (const entry of this.#entries.values()) if (entry.running !== undefined && entry.controller !== undefined) abortLinked(entry.controller, new Error('scheduler stopped'));
    this.#pool.clear();
    await this.idle();
  }

  /** Resolves when no pass is running or queued. */
  idle(): Promise<void> {
    if (this.#pool.inFlight === 0 && this.#pool.queued === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  stats(): SchedulerStats {
    return { targets: this.#entries.size, inFlight: this.#pool.inFlight, queued: this.#pool.queued, lastLagMs: this.#lastLagMs };
  }

  /** Passes in flight per namespace that has any running or waiting. */
  inFlightByNamespace(): Map<string, number> {
    return this.#pool.inFlightByNamespace();
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
    let controller = entry.controller;
    if (controller === undefined || controller.signal.aborted) {
      // Aborted only through abortLinked: TCP probes on its signal need no listener (abort-fanout.ts).
      controller = ownedController();
      entry.controller = controller;
    }
    // Dispatches are followed by one #pump (step), which is round #round + 1.
    const job: Job = { entry, controller, dueAt: entry.dueAt, round: this.#round + 1, slot: undefined, startedAt: 0, waited: false };
    entry.running = job;
    this.#pool.push(entry.target.share ?? noShare, job);
  }

  /** Starts every pass the pool admits now. */
  #pump(): void {
    const round = ++this.#round;
    for (let next = this.#pool.next(); next !== undefined; next = this.#pool.next()) {
      // Removed or replaced while it waited: it never ran, so it takes no slot.
      if (next.item.controller.signal.aborted) this.#pool.done(next.slot);
      else this.#run(next, next.item.round !== round);
    }
    if (this.#pool.inFlight === 0 && this.#pool.queued === 0 && this.#idleWaiters.length > 0) {
      const waiters = this.#idleWaiters;
      this.#idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  /**
   * Starts an admitted pass and hands its promise the entry's two callbacks
   * (made once per entry): no async function, whose frame and await closures
   * were most of a pass's garbage (issue 31 item 6). A pass that throws
   * instead of returning a promise ends as one that rejected.
   */
  #run(admitted: Admission<Job>, waited: boolean): void {
    const job = admitted.item;
    const entry = job.entry;
    const startedAt = this.#clock.now();
    job.slot = admitted.slot;
    job.startedAt = startedAt;
    job.waited = waited;
    const lagMs = startedAt - job.dueAt;
    this.#lastLagMs = lagMs;
    this.#onPassStart?.(entry.target.share ?? noShare, lagMs);
    const onEnd = (entry.onPassEnd ??= (result) => {
      // A pass resolves with nothing or a PassResult.
      this.#passEnded(entry, (result as PassResult | undefined)?.nextDueAt);
    });
    const onError = (entry.onPassError ??= (error) => {
      try {
        this.#onPassError(entry.target.key, error);
      } finally {
        this.#passEnded(entry, undefined); // the slot is handed back whatever the hook does
      }
    });
    let pass: Promise<unknown>;
    try {
      pass = entry.target.run(job.controller.signal);
    } catch (error: unknown) {
      pass = Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    pass.then(onEnd, onError);
  }

  #passEnded(entry: Entry, asked: number | undefined): void {
    const job = entry.running;
    if (job?.slot === undefined) return; // cannot happen: the entry's pass in flight is its running job
    this.#pool.done(job.slot);
    this.#complete(job, job, asked); // the job holds its own timing (dueAt, startedAt, waited)
    this.#pump();
  }

  #complete(job: Job, pass: PassTiming, asked: number | undefined): void {
    const entry = job.entry;
    if (entry.running !== job) return;
    entry.running = undefined;
    if (entry.generation < 0) return; // removed while running
    const now = this.#clock.now();
    if (entry.triggered || asked !== undefined) {
      // A trigger that arrived during the pass runs right after it (the
      // kubelet's capacity-1 trigger channel); a time the pass asked for wins
      // otherwise. Either restarts the ticks.
      entry.anchor = entry.triggered ? now : Math.max(now, asked ?? now);
      entry.triggered = false;
      this.#schedule(entry, entry.anchor);
      return;
    }
    // A pass that started late restarts the ticks from its start (ticker.ts, ADR 0064).
    const next = afterPass(entry.anchor, entry.target.periodMs, pass, now);
    entry.anchor = next.anchor;
    this.#schedule(entry, next.dueAt);
  }
}
