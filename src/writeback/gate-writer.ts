import type { Clock } from '../kernel/index.ts';

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

export interface GateWriterOptions {
  readonly clock: Clock;
  readonly patch: GatePatch;
  /** Called after every attempt (metrics, events). */
  readonly onWrite?: (pod: PodRef, condition: GateCondition, result: GateWriteResult, error?: unknown) => void;
  /** Called when a confirmed condition is written again because the server showed `serverStatus`. */
  readonly onRepair?: (pod: PodRef, condition: GateCondition, serverStatus: string | undefined) => void;
  /**
   * How long after a write the informer may still show the pod as it was
   * before it, if the write's own resourceVersion has not been seen. @default 10000
   */
  readonly echoWaitMs?: number;
  /**
   * The write guard (issue 13, ADR 0017): may a condition desired at
   * `desiredAt` be sent now? Asked before every send; a refused write is held
   * (not sent, not failed) and asked again on every `sweep()`. @default always
   */
  readonly mayWrite?: (condition: GateCondition, desiredAt: number) => boolean;
  /** Called once per desired version the guard holds back. */
  readonly onHeld?: (pod: PodRef, condition: GateCondition) => void;
}

interface Entry {
  pod: PodRef;
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
 * write returned (`observe()`), or `echoWaitMs` has passed, a differing
 * status is taken as the informer lagging, not as a change.
 */
export class GateWriter {
  readonly #o: GateWriterOptions;
  /** pod UID → condition type → entry. */
  readonly #entries = new Map<string, Map<string, Entry>>();
  readonly #idle = new Set<() => void>();
  #inFlight = 0;

  constructor(options: GateWriterOptions) {
    this.#o = options;
  }

  /** The informer saw this pod at `resourceVersion`: ends the wait for the echo of a write. */
  observe(uid: string, resourceVersion: string): void {
    const byType = this.#entries.get(uid);
    if (byType === undefined) return;
    for (const e of byType.values()) {
      if (e.echo?.resourceVersion === resourceVersion) e.echo = undefined;
      if (e.inFlight && e.seenInFlight.length < 16) e.seenInFlight.push(resourceVersion);
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
      const fresh: Entry = { pod, desired: condition, version: 1, desiredAt: this.#o.clock.now(), held: undefined, confirmed: serverStatus === condition.status ? 1 : 0, inFlight: false, failedAt: undefined, echo: undefined, seenInFlight: [] };
      if (byType === undefined) this.#entries.set(pod.uid, (byType = new Map<string, Entry>()));
      byType.set(condition.type, fresh);
      this.#kick(fresh);
      return;
    }
    if (sameCondition(entry.desired, condition)) {
      if (entry.inFlight || entry.confirmed < entry.version || serverStatus === condition.status) return;
      if (this.#awaitingEcho(entry)) return;
      this.#o.onRepair?.(pod, condition, serverStatus);
    }
    entry.pod = pod;
    entry.desired = condition;
    entry.desiredAt = this.#o.clock.now();
    entry.version++;
    this.#kick(entry);
  }

  /** Drops every entry of a pod (it was deleted, or this replica no longer owns it). */
  forget(uid: string): void {
    this.#entries.delete(uid);
  }

  /** Retries failed writes whose backoff has passed. */
  sweep(retryAfterMs = 1000): void {
    const now = this.#o.clock.now();
    for (const byType of this.#entries.values()) {
      for (const e of byType.values()) if (e.held !== undefined || (e.failedAt !== undefined && now - e.failedAt >= retryAfterMs)) this.#kick(e);
    }
  }

  /** Entries the write guard holds back now. */
  get held(): number {
    let n = 0;
    for (const byType of this.#entries.values()) for (const e of byType.values()) if (e.held !== undefined) n++;
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

  #awaitingEcho(entry: Entry): boolean {
    if (entry.echo === undefined) return false;
    if (this.#o.clock.now() - entry.echo.at < (this.#o.echoWaitMs ?? 10_000)) return true;
    entry.echo = undefined;
    return false;
  }

  #kick(entry: Entry): void {
    if (entry.inFlight || entry.confirmed >= entry.version) return;
    if (this.#o.mayWrite?.(entry.desired, entry.desiredAt) === false) {
      if (entry.held !== entry.version) this.#o.onHeld?.(entry.pod, entry.desired);
      entry.held = entry.version;
      return;
    }
    entry.held = undefined;
    entry.inFlight = true;
    this.#inFlight++;
    entry.failedAt = undefined;
    entry.seenInFlight = [];
    const version = entry.version;
    const condition = entry.desired;
    void this.#o.patch(entry.pod, condition).then(
      (result) => {
        this.#done(entry);
        if (result === 'gone') {
          const byType = this.#entries.get(entry.pod.uid);
          if (byType?.get(condition.type) === entry) byType.delete(condition.type);
          if (byType?.size === 0) this.#entries.delete(entry.pod.uid);
          this.#o.onWrite?.(entry.pod, condition, 'gone');
          return;
        }
        entry.confirmed = Math.max(entry.confirmed, version);
        entry.echo = entry.seenInFlight.includes(result.resourceVersion) ? undefined : { resourceVersion: result.resourceVersion, at: this.#o.clock.now() };
        this.#o.onWrite?.(entry.pod, condition, 'written');
        this.#kick(entry); // a newer desire may have arrived meanwhile
      },
      (error: unknown) => {
        this.#done(entry);
        entry.failedAt = this.#o.clock.now();
        this.#o.onWrite?.(entry.pod, condition, 'failed', error);
      },
    );
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

function sameCondition(a: GateCondition, b: GateCondition): boolean {
  return a.status === b.status && a.reason === b.reason && a.message === b.message;
}
