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
 * Sends one condition with a UID guard. Resolves 'ok' when the server took it,
 * 'gone' when the pod no longer exists under that UID (404, or 409 from the
 * uid guard); throws on anything else (retried by the sweep).
 */
export type GatePatch = (pod: PodRef, condition: GateCondition) => Promise<'ok' | 'gone'>;

export type GateWriteResult = 'written' | 'gone' | 'failed';

export interface GateWriterOptions {
  readonly clock: Clock;
  readonly patch: GatePatch;
  /** Called after every attempt (metrics, events). */
  readonly onWrite?: (pod: PodRef, condition: GateCondition, result: GateWriteResult, error?: unknown) => void;
}

interface Entry {
  pod: PodRef;
  desired: GateCondition;
  /** Bumped on every accepted change of `desired`. */
  version: number;
  /** The version the server confirmed (or already had). */
  confirmed: number;
  inFlight: boolean;
  failedAt: number | undefined;
}

const key = (uid: string, type: string): string => `${uid}\u0000${type}`;

/**
 * Version-gated writes of gate conditions (kubelet status manager pattern,
 * kubelet-probes.md §8.4): each (pod, condition type) has a desired condition
 * with a local version that only grows and the last version the server
 * confirmed; a write is sent only when desired is newer, one write per entry
 * is in flight at a time, and a write that completes after a newer desire was
 * accepted is followed by the newer one, so a stale write never has the last
 * word. Failed writes are retried by `sweep()`.
 */
export class GateWriter {
  readonly #o: GateWriterOptions;
  readonly #entries = new Map<string, Entry>();
  readonly #idle = new Set<() => void>();
  #inFlight = 0;

  constructor(options: GateWriterOptions) {
    this.#o = options;
  }

  /**
   * Records what the server has now (from the informer). When it already
   * matches what is desired, no write is needed: this is what keeps a
   * restarted controller at zero writes for pods whose condition is right.
   */
  observe(pod: PodRef, current: { readonly type: string; readonly status: string } | undefined, type: string): void {
    const entry = this.#entries.get(key(pod.uid, type));
    if (entry === undefined || entry.inFlight || current === undefined) return;
    if (current.status === entry.desired.status && entry.confirmed < entry.version) entry.confirmed = entry.version;
  }

  /**
   * Sets the desired condition. `serverStatus` is the condition's status on
   * the pod as last seen; when it already equals `condition.status` and no
   * other value was desired before, nothing is written.
   */
  desire(pod: PodRef, condition: GateCondition, serverStatus: string | undefined): void {
    const k = key(pod.uid, condition.type);
    const entry = this.#entries.get(k);
    if (entry === undefined) {
      const fresh: Entry = { pod, desired: condition, version: 1, confirmed: serverStatus === condition.status ? 1 : 0, inFlight: false, failedAt: undefined };
      this.#entries.set(k, fresh);
      this.#kick(fresh);
      return;
    }
    if (sameCondition(entry.desired, condition)) return;
    entry.pod = pod;
    entry.desired = condition;
    entry.version++;
    this.#kick(entry);
  }

  /** Drops every entry of a pod (it was deleted, or this replica no longer owns it). */
  forget(uid: string): void {
    for (const [k, e] of this.#entries) if (e.pod.uid === uid) this.#entries.delete(k);
  }

  /** Retries failed writes whose backoff has passed. */
  sweep(retryAfterMs = 1000): void {
    const now = this.#o.clock.now();
    for (const e of this.#entries.values()) if (e.failedAt !== undefined && now - e.failedAt >= retryAfterMs) this.#kick(e);
  }

  /** Desired but unconfirmed entries (0 in steady state). */
  get pending(): number {
    let n = 0;
    for (const e of this.#entries.values()) if (e.confirmed < e.version) n++;
    return n;
  }

  /** Resolves when nothing is in flight. */
  settled(): Promise<void> {
    if (this.#inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.add(resolve));
  }

  /** The desired condition for a pod, if any (for status aggregation). */
  desired(uid: string, type: string): GateCondition | undefined {
    return this.#entries.get(key(uid, type))?.desired;
  }

  #kick(entry: Entry): void {
    if (entry.inFlight || entry.confirmed >= entry.version) return;
    entry.inFlight = true;
    this.#inFlight++;
    entry.failedAt = undefined;
    const version = entry.version;
    const condition = entry.desired;
    void this.#o.patch(entry.pod, condition).then(
      (result) => {
        this.#done(entry);
        if (result === 'gone') {
          this.#entries.delete(key(entry.pod.uid, condition.type));
          this.#o.onWrite?.(entry.pod, condition, 'gone');
          return;
        }
        entry.confirmed = Math.max(entry.confirmed, version);
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
