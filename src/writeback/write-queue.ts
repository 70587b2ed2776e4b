import type { Clock } from '../kernel/index.ts';
import { isKubeError } from '../kube/index.ts';
import type { KubeApiError } from '../kube/index.ts';

/**
 * How urgent a gate write is, most urgent first (ADR 0022): a gate turning
 * False; a repair of a condition another writer overwrote; a True after a
 * False; a first-time True. A failure never waits behind initial writes.
 */
export const urgencies = ['false', 'repair', 'recovery', 'initial'] as const;
export type Urgency = (typeof urgencies)[number];

/** One queued write. `run` is called when a slot is free; `undefined`: nothing to send any more (the slot is freed at once). */
export interface QueuedWrite {
  run(): Promise<unknown> | undefined;
}

/** What the queue saw of one sent write. */
export type WriteOutcome =
  | { readonly kind: 'ok'; readonly latencyMs: number }
  | { readonly kind: 'throttled'; readonly latencyMs: number; readonly retryAfterMs: number | undefined; readonly pauseMs: number; readonly priorityLevelUid: string; readonly flowSchemaUid: string }
  | { readonly kind: 'error'; readonly latencyMs: number };

export interface WriteQueueOptions {
  readonly clock: Clock;
  /** The ceiling of writes in flight. @default 64 */
  readonly maxInflight?: number;
  /** Writes in flight at the start (and the floor is 1). @default min(8, maxInflight) */
  readonly initialInflight?: number;
  /** A write slower than this does not grow the limit. @default 1000 */
  readonly slowMs?: number;
  /** Pause after a 429/503 without Retry-After: this, doubled per throttled round in a row (no success between), up to `maxPauseMs`. @default 1000 */
  readonly basePauseMs?: number;
  /** @default 30000 */
  readonly maxPauseMs?: number;
  /** Called after every sent write settles. */
  readonly onOutcome?: (outcome: WriteOutcome, urgency: Urgency) => void;
}

interface Job {
  readonly write: QueuedWrite;
  readonly urgency: Urgency;
  readonly handle: Handle;
  /** Set when the job moved to a more urgent class; its old slot is skipped. */
  stale: boolean;
  sent: boolean;
}

/** What `submit` returns: follows the write when `raise` or a throttle requeues it. */
interface Handle {
  job: Job | undefined;
}

/**
 * The gate-write queue (ADR 0022): writes wait in four FIFO classes by
 * urgency and are sent most urgent first, with at most `limit` in flight.
 * The limit adapts (AIMD on concurrency): +1 per fast success while below
 * the first throttle's level (slow start), +1/limit after; halved on a 429
 * or 503 (once per round: writes sent before the last halving do not halve
 * it again), and no write is sent until the server's Retry-After has passed
 * (without one, a backoff from 1 s doubling to 30 s). A throttled write goes
 * back to the front of its class; other errors are the caller's.
 */
export class WriteQueue {
  readonly #o: WriteQueueOptions;
  readonly #classes: Job[][] = urgencies.map(() => []);
  readonly #heads: number[] = urgencies.map(() => 0);
  #limit: number;
  #threshold = Infinity;
  #inflight = 0;
  #waiting = 0;
  readonly #waitingBy: number[] = urgencies.map(() => 0);
  #pausedUntil = 0;
  /** Bumped on every halving: a throttled write sent before it does not halve again. */
  #round = 0;
  #throttlesInRow = 0;
  #wakeArmed = false;

  constructor(options: WriteQueueOptions) {
    this.#o = options;
    this.#limit = Math.max(1, Math.min(options.initialInflight ?? 8, this.max));
  }

  get max(): number {
    return Math.max(1, this.#o.maxInflight ?? 64);
  }

  /** The current concurrency limit (an integer between 1 and `max`). */
  get limit(): number {
    return Math.floor(this.#limit);
  }

  get inflight(): number {
    return this.#inflight;
  }

  /** Writes waiting for a slot. */
  get waiting(): number {
    return this.#waiting;
  }

  /** Writes waiting for a slot, by urgency. */
  waitingBy(): Record<Urgency, number> {
    return Object.fromEntries(urgencies.map((u, i) => [u, this.#waitingBy[i] ?? 0])) as Record<Urgency, number>;
  }

  /** No write is sent before this time (ms since the epoch; 0: not paused). */
  get pausedUntil(): number {
    return this.#pausedUntil;
  }

  /** Queues a write and sends what the limit allows. Returns a handle for `raise`. */
  submit(write: QueuedWrite, urgency: Urgency): object {
    const handle: Handle = { job: undefined };
    this.#push(write, urgency, handle);
    this.step();
    return handle;
  }

  /** Moves a queued write to a more urgent class (no-op if it was sent or is already as urgent). */
  raise(handle: object, urgency: Urgency): void {
    const h = handle as Handle;
    const job = h.job;
    if (job === undefined || job.sent || urgencies.indexOf(urgency) >= urgencies.indexOf(job.urgency)) return;
    job.stale = true;
    this.#uncount(job.urgency);
    this.#push(job.write, urgency, h);
    this.step();
  }

  /** Sends queued writes while a slot is free and the server has not asked to wait. */
  step(): void {
    const now = this.#o.clock.now();
    if (now < this.#pausedUntil) {
      this.#armWake();
      return;
    }
    while (this.#inflight < this.limit) {
      const job = this.#next();
      if (job === undefined) return;
      this.#send(job, now);
    }
  }

  #push(write: QueuedWrite, urgency: Urgency, handle: Handle, front = false): void {
    const job: Job = { write, urgency, handle, stale: false, sent: false };
    handle.job = job;
    const i = urgencies.indexOf(urgency);
    const list = this.#classes[i] ?? [];
    if (front) list.splice(this.#heads[i] ?? 0, 0, job);
    else list.push(job);
    this.#waiting++;
    this.#waitingBy[i] = (this.#waitingBy[i] ?? 0) + 1;
  }

  #uncount(urgency: Urgency): void {
    const i = urgencies.indexOf(urgency);
    this.#waiting--;
    this.#waitingBy[i] = (this.#waitingBy[i] ?? 0) - 1;
  }

  #next(): Job | undefined {
    for (let i = 0; i < urgencies.length; i++) {
      const list = this.#classes[i] ?? [];
      let head = this.#heads[i] ?? 0;
      while (head < list.length) {
        const job = list[head++];
        if (job === undefined || job.stale) continue;
        job.sent = true;
        this.#heads[i] = head;
        this.#compact(i);
        this.#uncount(job.urgency);
        return job;
      }
      this.#heads[i] = head;
      this.#compact(i);
    }
    return undefined;
  }

  #compact(i: number): void {
    const list = this.#classes[i];
    const head = this.#heads[i] ?? 0;
    if (list === undefined || head < 1024 || head * 2 < list.length) return;
    list.splice(0, head);
    this.#heads[i] = 0;
  }

  #send(job: Job, sentAt: number): void {
    const pending = job.write.run();
    if (pending === undefined) return;
    this.#inflight++;
    const round = this.#round;
    pending.then(
      () => this.#settled(job, sentAt, round, undefined),
      (err: unknown) => this.#settled(job, sentAt, round, err),
    );
  }

  #settled(job: Job, sentAt: number, round: number, err: unknown): void {
    this.#inflight--;
    const now = this.#o.clock.now();
    const latencyMs = now - sentAt;
    if (err === undefined) {
      this.#throttlesInRow = 0;
      // Grow only while writes wait for a slot: an idle queue's limit says nothing about the server.
      if (latencyMs < (this.#o.slowMs ?? 1000) && this.#waiting > 0) this.#grow();
      this.#o.onOutcome?.({ kind: 'ok', latencyMs }, job.urgency);
    } else if (isKubeError(err, 'TooManyRequests') || isKubeError(err, 'Unavailable')) {
      this.#throttled(job, round, latencyMs, err);
    } else {
      this.#o.onOutcome?.({ kind: 'error', latencyMs }, job.urgency);
    }
    this.step();
  }

  #grow(): void {
    const step = this.#limit < this.#threshold ? 1 : 1 / this.#limit;
    this.#limit = Math.min(this.max, this.#limit + step);
  }

  #throttled(job: Job, round: number, latencyMs: number, err: KubeApiError): void {
    const now = this.#o.clock.now();
    const { retryAfterMs, priorityLevelUid, flowSchemaUid } = err;
    if (round === this.#round) {
      this.#limit = Math.max(1, Math.floor(this.#limit / 2));
      this.#threshold = this.#limit;
      this.#round++;
      this.#throttlesInRow++;
    }
    const backoff = Math.min(this.#o.maxPauseMs ?? 30_000, (this.#o.basePauseMs ?? 1000) * 2 ** (this.#throttlesInRow - 1));
    // Retry-After exactly when the server sends one (a 0 still waits 100 ms: never a tight loop).
    const pauseMs = retryAfterMs === undefined ? backoff : Math.max(100, retryAfterMs);
    this.#pausedUntil = Math.max(this.#pausedUntil, now + pauseMs);
    // Back to the front of its class: it was next in line before.
    this.#push(job.write, job.urgency, job.handle, true);
    this.#o.onOutcome?.({ kind: 'throttled', latencyMs, retryAfterMs, pauseMs, priorityLevelUid, flowSchemaUid }, job.urgency);
  }

  #armWake(): void {
    if (this.#wakeArmed || this.#waiting === 0) return;
    this.#wakeArmed = true;
    void this.#o.clock.sleepUntil(this.#pausedUntil).then(() => {
      this.#wakeArmed = false;
      this.step();
    });
  }
}
