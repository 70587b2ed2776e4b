/**
 * Probe deadlines on one timer (issue 16): instead of a `setTimeout` (and an
 * AbortController) per probe, each probe puts itself in a list of the
 * probes with the same timeout. Probes of one timeout end in the order they
 * started, so every list is sorted by deadline and its head is the next to
 * expire; one timer, armed for the earliest head, sweeps every list when it
 * fires. Adding and removing are O(1) and allocate nothing: the probe
 * object itself is the list node.
 *
 * A deadline never fires early: an entry fires only once `now()` has reached
 * it. It may fire late by as much as the event loop runs late, as a
 * `setTimeout` would. The timer is cleared when no deadline is pending, so an
 * idle sweep holds no timer (and keeps no process alive).
 */

import { maxTimerMs } from '../kernel/index.ts';

/** A probe waiting for its deadline: the list links live on the probe itself. */
export interface DeadlineEntry {
  /** Called once, at or after the deadline, unless removed first. */
  onDeadline(): void;
  /** Set by the sweep. */
  deadlineAt: number;
  deadlineNext: DeadlineEntry | undefined;
  deadlinePrev: DeadlineEntry | undefined;
  deadlineList: DeadlineList | undefined;
}

/** The entries of one timeout, oldest first. */
export interface DeadlineList {
  head: DeadlineEntry | undefined;
  tail: DeadlineEntry | undefined;
}

export interface DeadlineTimer {
  /** A monotonic clock in ms. */
  readonly now: () => number;
  /** Arms a one-shot timer; returns its cancel. */
  readonly arm: (callback: () => void, ms: number) => () => void;
}

const nodeTimer: DeadlineTimer = {
  now: () => performance.now(),
  arm: (callback, ms) => {
    const timer = setTimeout(callback, ms);
    return () => {
      clearTimeout(timer);
    };
  },
};

/** Lists of more timeouts than this are not kept when empty (a policy has a handful of timeouts). */
const keptEmptyLists = 64;

export class DeadlineSweep {
  readonly #timer: DeadlineTimer;
  readonly #lists = new Map<number, DeadlineList>();
  #pending = 0;
  #armedAt = Number.POSITIVE_INFINITY;
  #cancel: (() => void) | undefined;
  readonly #fire = (): void => {
    this.#sweep();
  };

  constructor(timer: DeadlineTimer = nodeTimer) {
    this.#timer = timer;
  }

  /** Deadlines waiting. */
  get pending(): number {
    return this.#pending;
  }

  /** Whether the sweep holds a timer (only while deadlines are pending). */
  get armed(): boolean {
    return this.#cancel !== undefined;
  }

  /**
   * `entry.onDeadline()` runs `timeoutMs` from now unless `remove(entry)`
   * comes first. An infinite timeout never fires; NaN or a negative one fires
   * on the next sweep, as setTimeout would.
   */
  add(entry: DeadlineEntry, timeoutMs: number): void {
    if (entry.deadlineList !== undefined) this.remove(entry);
    if (timeoutMs === Number.POSITIVE_INFINITY) return;
    const ms = Number.isNaN(timeoutMs) ? 0 : Math.max(0, timeoutMs);
    let list = this.#lists.get(ms);
    if (list === undefined) {
      if (this.#lists.size >= keptEmptyLists) this.#dropEmptyLists();
      list = { head: undefined, tail: undefined };
      this.#lists.set(ms, list);
    }
    const at = this.#timer.now() + ms;
    // Same timeout, later start: the tail (or, if the clock stood still, after it).
    entry.deadlineAt = list.tail === undefined ? at : Math.max(at, list.tail.deadlineAt);
    entry.deadlinePrev = list.tail;
    entry.deadlineNext = undefined;
    entry.deadlineList = list;
    if (list.tail === undefined) list.head = entry;
    else list.tail.deadlineNext = entry;
    list.tail = entry;
    this.#pending++;
    if (entry.deadlineAt < this.#armedAt) this.#arm(entry.deadlineAt);
  }

  /** Forgets an entry's deadline; harmless if it fired or was never added. */
  remove(entry: DeadlineEntry): void {
    const list = entry.deadlineList;
    if (list === undefined) return;
    const { deadlinePrev: prev, deadlineNext: next } = entry;
    if (prev === undefined) list.head = next;
    else prev.deadlineNext = next;
    if (next === undefined) list.tail = prev;
    else next.deadlinePrev = prev;
    entry.deadlineList = undefined;
    entry.deadlinePrev = undefined;
    entry.deadlineNext = undefined;
    this.#pending--;
    // The armed timer may now be early: it re-arms when it fires. With
    // nothing left it goes, so an idle sweep holds no timer.
    if (this.#pending === 0) this.#disarm();
  }

  #arm(at: number): void {
    this.#cancel?.();
    this.#armedAt = at;
    // Past setTimeout's range, the timer fires early and the sweep re-arms (never fires an entry early).
    this.#cancel = this.#timer.arm(this.#fire, Math.min(maxTimerMs, Math.max(1, Math.ceil(at - this.#timer.now()))));
  }

  #disarm(): void {
    this.#cancel?.();
    this.#cancel = undefined;
    this.#armedAt = Number.POSITIVE_INFINITY;
  }

  #sweep(): void {
    this.#cancel = undefined;
    this.#armedAt = Number.POSITIVE_INFINITY;
    const now = this.#timer.now();
    const due: DeadlineEntry[] = [];
    let next = Number.POSITIVE_INFINITY;
    for (const list of this.#lists.values()) {
      let head = list.head;
      while (head !== undefined && head.deadlineAt <= now) {
        const entry = head;
        head = entry.deadlineNext;
        this.remove(entry);
        due.push(entry);
      }
      if (head !== undefined && head.deadlineAt < next) next = head.deadlineAt;
    }
    if (next !== Number.POSITIVE_INFINITY) this.#arm(next);
    // Callbacks last: one may add or remove entries (a retry starts at once).
    for (const entry of due) entry.onDeadline();
  }

  #dropEmptyLists(): void {
    for (const [ms, list] of this.#lists) if (list.head === undefined) this.#lists.delete(ms);
  }
}
