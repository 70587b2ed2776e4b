import type { Clock } from '../kernel/index.ts';
import { compareResourceVersions, isKubeError } from '../kube/index.ts';
import type { Urgency, WriteQueue } from './write-queue.ts';

/** The readiness-gate condition outprobe owns on a pod (one per policy). */
export interface GateCondition {
  readonly type: string;
  readonly status: 'True' | 'False';
  readonly reason: string;
  readonly message: string;
  /** RFC 3339, seconds precision. */
  readonly lastTransitionTime: string;
  /** RFC 3339: the probe that produced this transition (kubelet leaves it null; §8.4 improvement). */
  readonly lastProbeTime: string;
}

export interface PodRef {
  readonly uid: string;
  readonly namespace: string;
  readonly name: string;
}

/**
 * Sends one condition with a UID guard. Resolves with the pod's
 * resourceVersion after the write when the server took it, 'gone' when the
 * pod no longer exists under that UID (404, or the uid guard's 422 on
 * `metadata.uid`);
 * throws on anything else (retried by the sweep).
 */
export type GatePatch = (pod: PodRef, condition: GateCondition) => Promise<GatePatchResult>;

export type GatePatchResult = { readonly resourceVersion: string } | 'gone';

export type GateWriteResult = 'written' | 'gone' | 'failed';

/** How long a write took: from the desire it sent to the server's answer, and the request alone. */
export interface GateWriteTiming {
  /** From when the condition sent was desired (for a False: its verdict) to the answer: guard holds, queue and request. */
  readonly sinceDesiredMs: number;
  /** From the request's start to its answer. */
  readonly requestMs: number;
}

export interface GateWriterOptions {
  readonly clock: Clock;
  readonly patch: GatePatch;
  /** Called after every attempt (metrics, events). */
  readonly onWrite?: (pod: PodRef, condition: GateCondition, result: GateWriteResult, error: unknown, timing: GateWriteTiming) => void;
  /** Called when a confirmed condition is written again because the server showed `serverStatus`. */
  readonly onRepair?: (pod: PodRef, condition: GateCondition, serverStatus: string | undefined) => void;
  /**
   * How long after a write the informer may still show the pod as it was
   * before it, if the write's own resourceVersion has not been seen and
   * resourceVersions are not comparable (with comparable ones, KEP-5504, the
   * wait ends only when the informer shows the write's version or a newer
   * one, however long its watch lags). @default 10000
   */
  readonly echoWaitMs?: number;
  /**
   * The write guard (issue 13, ADR 0017): may a condition desired at
   * `desiredAt` be sent now? Asked before every send; a refused write is held
   * (not sent, not failed) and asked again on every `sweep()`. @default always
   */
  readonly mayWrite?: (condition: GateCondition, desiredAt: number, context: WriteContext) => boolean;
  /** Called once per desired version the guard holds back. */
  readonly onHeld?: (pod: PodRef, condition: GateCondition) => void;
  /**
   * Writes wait here, most urgent first, and go out as its adaptive limit
   * allows (ADR 0022); a 429/503 is the queue's to back off and resend, not a
   * failure. The condition sent is the one desired when the write leaves the
   * queue. @default none: every write is sent at once
   */
  readonly queue?: WriteQueue;
}

/** What the write guard is told about the write besides the condition. */
export interface WriteContext {
  readonly pod: PodRef;
  /**
   * The condition's status on the pod as the informer showed it when this
   * condition was desired: a False over a False is a repeat, not a change of
   * readiness (the second opinion asks only about a change, ADR 0018).
   */
  readonly serverStatus: string | undefined;
}

/** One desired gate condition and where its write stands. */
export interface GateEntryView {
  readonly type: string;
  readonly desired: GateCondition;
  readonly desiredAt: number;
  /** The condition's status on the pod as last seen. */
  readonly serverStatus: string | undefined;
  /** `confirmed`: the pod shows it; `held`: a guard keeps it back; `queued`/`pending`: waiting to be sent. */
  readonly state: 'confirmed' | 'in-flight' | 'held' | 'queued' | 'pending';
}

interface Entry {
  pod: PodRef;
  /** The server status `desire()` was last given with the current desired condition. */
  serverStatus: string | undefined;
  desired: GateCondition;
  /** Bumped on every accepted change of `desired`. */
  version: number;
  /** When the current `desired` was accepted (what the write guard asks about). */
  desiredAt: number;
  /** The version the guard held back last, if it is still held. */
  held: number | undefined;
  /** The version the server confirmed (or already had). */
  confirmed: number;
  inFlight: boolean;
  /** The queue handle while a write of this entry waits in the queue. */
  queued: object | undefined;
  /** The current desire repairs a condition another writer overwrote. */
  repairing: boolean;
  /** A False was desired or shown on the server before: a True now is a recovery, not a first write. */
  wasFalse: boolean;
  failedAt: number | undefined;
  /** This replica's last write, until the informer shows its resourceVersion. */
  echo: { readonly resourceVersion: string; readonly at: number } | undefined;
  /** Versions the informer showed while a write was in flight (its watch may beat the response). */
  seenInFlight: string[];
}

/**
 * Version-gated writes of gate conditions (kubelet status manager pattern,
 * kubelet-probes.md §8.4): each (pod, condition type) has a desired condition
 * with a local version that only grows and the last version the server
 * confirmed; a write is sent only when desired is newer, one write per entry
 * is in flight at a time, and a write that completes after a newer desire was
 * accepted is followed by the newer one, so a stale write never has the last
 * word. Failed writes are retried by `sweep()`.
 *
 * A confirmed condition can still be overwritten on the server by another
 * writer: a replica that owned the pod before and whose write landed late, or
 * a person. `desire()` called again with the same condition and a server
 * status that differs repairs that, unless the server status may predate this
 * replica's own last write: until the informer shows the resourceVersion that
 * write returned or a newer one (`observe()`), a differing status is taken as
 * the informer lagging, not as a change. Without comparable resourceVersions
 * (KEP-5504) the wait also ends after `echoWaitMs`.
 */
export class GateWriter {
  readonly #o: GateWriterOptions;
  /** pod UID → condition type → entry. */
  readonly #entries = new Map<string, Map<string, Entry>>();
  readonly #idle = new Set<() => void>();
  /**
   * Entries the write guard holds or whose last write failed: all that
   * `sweep()` can act on, so a sweep costs what waits, not every pod's entry
   * (issue 17: 100,000 entries every 500 ms step).
   */
  readonly #waiting = new Set<Entry>();
  #inFlight = 0;

  constructor(options: GateWriterOptions) {
    this.#o = options;
  }

  /** The informer saw this pod at `resourceVersion`: ends the wait for the echo of a write. */
  observe(uid: string, resourceVersion: string): void {
    const byType = this.#entries.get(uid);
    if (byType === undefined) return;
    for (const e of byType.values()) {
      if (e.echo !== undefined && atOrAfter(resourceVersion, e.echo.resourceVersion)) e.echo = undefined;
      if (e.inFlight) e.seenInFlight[Math.min(e.seenInFlight.length, 15)] = resourceVersion; // the newest stays
    }
  }

  /**
   * Sets the desired condition. `serverStatus` is the condition's status on
   * the pod as the informer last showed it; when it already equals
   * `condition.status` and no other value was desired before, nothing is
   * written. The same condition desired again while the server shows another
   * status is written again (see the class comment).
   */
  desire(pod: PodRef, condition: GateCondition, serverStatus: string | undefined): void {
    let byType = this.#entries.get(pod.uid);
    const entry = byType?.get(condition.type);
    if (entry === undefined) {
      const fresh: Entry = { pod, serverStatus, desired: condition, version: 1, desiredAt: this.#o.clock.now(), held: undefined, confirmed: serverStatus === condition.status ? 1 : 0, inFlight: false, queued: undefined, repairing: false, wasFalse: serverStatus === 'False', failedAt: undefined, echo: undefined, seenInFlight: [] };
      if (byType === undefined) this.#entries.set(pod.uid, (byType = new Map<string, Entry>()));
      byType.set(condition.type, fresh);
      this.#kick(fresh);
      return;
    }
    if (sameCondition(entry.desired, condition)) {
      if (entry.inFlight || entry.confirmed < entry.version || serverStatus === condition.status) return;
      if (this.#awaitingEcho(entry)) return;
      this.#o.onRepair?.(pod, condition, serverStatus);
      entry.repairing = true;
    } else entry.repairing = false;
    entry.wasFalse ||= entry.desired.status === 'False' || serverStatus === 'False';
    entry.pod = pod;
    entry.serverStatus = serverStatus;
    entry.desired = condition;
    entry.desiredAt = this.#o.clock.now();
    entry.version++;
    this.#kick(entry);
  }

  /** Drops every entry of a pod (it was deleted, or this replica no longer owns it). */
  forget(uid: string): void {
    for (const e of this.#entries.get(uid)?.values() ?? []) this.#waiting.delete(e);
    this.#entries.delete(uid);
  }

  /** Retries failed writes whose backoff has passed. */
  sweep(retryAfterMs = 1000): void {
    const now = this.#o.clock.now();
    // A copy: a kick takes entries out (sent) or puts them back (held again, failed at once).
    for (const e of [...this.#waiting]) if (e.held !== undefined || (e.failedAt !== undefined && now - e.failedAt >= retryAfterMs)) this.#kick(e);
  }

  /** Entries the write guard holds back now. */
  get held(): number {
    let n = 0;
    for (const e of this.#waiting) if (e.held !== undefined) n++;
    return n;
  }

  /** Desired but unconfirmed entries (0 in steady state). */
  get pending(): number {
    let n = 0;
    for (const byType of this.#entries.values()) for (const e of byType.values()) if (e.confirmed < e.version) n++;
    return n;
  }

  /** Resolves when nothing is in flight. */
  settled(): Promise<void> {
    if (this.#inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.add(resolve));
  }

  /** The desired condition for a pod, if any (for status aggregation). */
  desired(uid: string, type: string): GateCondition | undefined {
    return this.#entries.get(uid)?.get(type)?.desired;
  }

  /** A pod's gate entries as this writer holds them (what `kubectl outprobe explain` shows). */
  inspect(uid: string): GateEntryView[] {
    const out: GateEntryView[] = [];
    for (const e of this.#entries.get(uid)?.values() ?? []) {
      const state = e.confirmed >= e.version ? 'confirmed' : e.inFlight ? 'in-flight' : e.held === e.version ? 'held' : e.queued !== undefined ? 'queued' : 'pending';
      out.push({ type: e.desired.type, desired: e.desired, desiredAt: e.desiredAt, serverStatus: e.serverStatus, state });
    }
    return out;
  }

  #awaitingEcho(entry: Entry): boolean {
    if (entry.echo === undefined) return false;
    // Comparable versions: the informer has not shown the write yet, so what it shows is older.
    if (compareResourceVersions(entry.echo.resourceVersion, entry.echo.resourceVersion) !== null) return true;
    if (this.#o.clock.now() - entry.echo.at < (this.#o.echoWaitMs ?? 10_000)) return true;
    entry.echo = undefined;
    return false;
  }

  #kick(entry: Entry): void {
    if (entry.inFlight || entry.confirmed >= entry.version) return;
    const queue = this.#o.queue;
    if (queue === undefined) {
      void this.#send(entry)?.catch(() => undefined);
      return;
    }
    const urgency = urgencyOf(entry);
    if (entry.queued !== undefined) {
      queue.raise(entry.queued, urgency);
      return;
    }
    let left = false as boolean;
    const handle = queue.submit(
      {
        run: () => {
          left = true;
          entry.queued = undefined;
          const sent = this.#send(entry);
          // A throttled write goes back into the queue under the same handle (the queue resends it).
          sent?.catch((error: unknown) => {
            if (isThrottle(error)) entry.queued = handle;
          });
          return sent;
        },
      },
      urgency,
    );
    if (!left) entry.queued = handle; // sent at once when the queue had room
  }

  /** Sends the entry's desired condition now; `undefined` when there is nothing to send (forgotten, confirmed, held). */
  #send(entry: Entry): Promise<GatePatchResult> | undefined {
    if (entry.inFlight || entry.confirmed >= entry.version || this.#entries.get(entry.pod.uid)?.get(entry.desired.type) !== entry) return undefined;
    if (this.#o.mayWrite?.(entry.desired, entry.desiredAt, { pod: entry.pod, serverStatus: entry.serverStatus }) === false) {
      if (entry.held !== entry.version) this.#o.onHeld?.(entry.pod, entry.desired);
      entry.held = entry.version;
      this.#waiting.add(entry);
      return undefined;
    }
    entry.held = undefined;
    entry.inFlight = true;
    this.#inFlight++;
    entry.failedAt = undefined;
    this.#waiting.delete(entry);
    entry.seenInFlight = [];
    const version = entry.version;
    const condition = entry.desired;
    const desiredAt = entry.desiredAt;
    const sentAt = this.#o.clock.now();
    const timing = (): GateWriteTiming => {
      const now = this.#o.clock.now();
      return { sinceDesiredMs: now - desiredAt, requestMs: now - sentAt };
    };
    const sent = this.#o.patch(entry.pod, condition);
    sent.then(
      (result) => {
        this.#done(entry);
        if (result === 'gone') {
          const byType = this.#entries.get(entry.pod.uid);
          if (byType?.get(condition.type) === entry) byType.delete(condition.type);
          this.#waiting.delete(entry);
          if (byType?.size === 0) this.#entries.delete(entry.pod.uid);
          this.#o.onWrite?.(entry.pod, condition, 'gone', undefined, timing());
          return;
        }
        entry.confirmed = Math.max(entry.confirmed, version);
        if (entry.confirmed >= entry.version) entry.repairing = false;
        entry.echo = entry.seenInFlight.some((rv) => atOrAfter(rv, result.resourceVersion)) ? undefined : { resourceVersion: result.resourceVersion, at: this.#o.clock.now() };
        this.#o.onWrite?.(entry.pod, condition, 'written', undefined, timing());
        this.#kick(entry); // a newer desire may have arrived meanwhile
      },
      (error: unknown) => {
        this.#done(entry);
        if (this.#o.queue !== undefined && isThrottle(error)) return; // the queue waits and resends it
        entry.failedAt = this.#o.clock.now();
        if (this.#entries.get(entry.pod.uid)?.get(condition.type) === entry) this.#waiting.add(entry);
        this.#o.onWrite?.(entry.pod, condition, 'failed', error, timing());
      },
    );
    return sent;
  }

  #done(entry: Entry): void {
    entry.inFlight = false;
    this.#inFlight--;
    if (this.#inFlight === 0) {
      for (const resolve of this.#idle) resolve();
      this.#idle.clear();
    }
  }
}

/** `seen` shows the write `written` returned: the same version, or (comparable versions) a newer one. */
function atOrAfter(seen: string, written: string): boolean {
  return seen === written || (compareResourceVersions(seen, written) ?? -1) >= 0;
}

function sameCondition(a: GateCondition, b: GateCondition): boolean {
  return a.status === b.status && a.reason === b.reason && a.message === b.message;
}

function urgencyOf(entry: Entry): Urgency {
  if (entry.desired.status === 'False') return 'false';
  if (entry.repairing) return 'repair';
  return entry.wasFalse ? 'recovery' : 'initial';
}

/** A 429 or 503: the server asks us to slow down (the queue's to handle). */
function isThrottle(error: unknown): boolean {
  return isKubeError(error, 'TooManyRequests') || isKubeError(error, 'Unavailable');
}
