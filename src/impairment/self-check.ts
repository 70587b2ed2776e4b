import type { Clock } from '../kernel/index.ts';
import { defaultThresholds } from './decide.ts';
import type { ImpairmentThresholds, PeerView } from './decide.ts';
import { ReachTable } from './reach.ts';
import type { PeerReport } from './report-annotation.ts';
import { ImpairmentState } from './state.ts';
import type { LocalTally } from './tally.ts';
import type { Change } from './state.ts';

/** GET http://<address>/healthz; true on a 2xx. Never throws (a refused or timed-out check is false). */
export type PeerCheck = (address: string, signal: AbortSignal) => Promise<boolean>;

/** What the self-check reports (the observability seam). */
export type SelfCheckEvent =
  | Change
  | { readonly type: 'peers'; readonly peers: number; readonly reached: number };

export interface SelfCheckOptions {
  readonly clock: Clock;
  readonly identity: string;
  /** host:port peers reach this replica's /healthz on; undefined: it advertises none. */
  readonly address: string | undefined;
  /** Live peers as their shard Leases show them (this replica excluded). */
  readonly peers: () => readonly PeerView[];
  /** This replica's owned targets and how many of them fail, in total and per namespace (`tallyTargets`). */
  readonly local: () => LocalTally;
  readonly check: PeerCheck;
  readonly thresholds?: Partial<ImpairmentThresholds>;
  /** @default 1000 */
  readonly intervalMs?: number;
  /** Each check's timeout. @default 500 */
  readonly timeoutMs?: number;
  readonly observe?: (e: SelfCheckEvent) => void;
}

/**
 * Self-partition detection (issue 13, ADR 0017): checks every peer's
 * /healthz each interval, keeps the impairment state, and answers the write
 * guard. `step()` is one round (tests call it); `run()` only loops it.
 */
export class SelfCheck {
  readonly #o: SelfCheckOptions;
  readonly #t: ImpairmentThresholds;
  readonly #reach = new ReachTable();
  readonly #state: ImpairmentState;
  #peers: readonly PeerView[] = [];

  constructor(options: SelfCheckOptions) {
    this.#o = options;
    this.#t = { ...defaultThresholds, ...options.thresholds };
    this.#state = new ImpairmentState(this.#t);
  }

  get impaired(): boolean {
    return this.#state.impaired;
  }

  /**
   * May this replica act on a failure it observed at `since` (write a False
   * gate, remediate)? Only when it is not impaired and, if it has peers, a
   * check of one of them that *started* at or after `since` succeeded: a
   * cut that made the probe fail makes that check fail too, so the first
   * False after a cut waits instead of slipping out before the cut is
   * declared. With no peers (one replica) the guard is off.
   */
  confirmedSince(since: number): boolean {
    if (this.#state.impaired) return false;
    return this.#peers.length === 0 || this.#reach.okStartedSince(since);
  }

  /** What this replica publishes on its Lease. */
  report(): PeerReport {
    const { failing, targets } = this.#o.local();
    return { address: this.#o.address, failing, targets, reached: this.#reach.reachedWithin(this.#o.clock.now(), this.#t.unreachableAfterMs) };
  }

  /** One round: check every peer at once, then decide. Returns the change, if any. */
  async step(signal: AbortSignal): Promise<Change | undefined> {
    const { clock } = this.#o;
    this.#peers = this.#o.peers().filter((p) => p.identity !== this.#o.identity && p.report.address !== undefined);
    this.#reach.setPeers(this.#peers.map((p) => p.identity), clock.now());
    await Promise.all(this.#peers.map(async (p) => {
      const startedAt = clock.now();
      const timeout = AbortSignal.timeout(this.#o.timeoutMs ?? 500);
      const ok = await this.#o.check(p.report.address ?? '', AbortSignal.any([signal, timeout])).catch(() => false);
      this.#reach.record(p.identity, startedAt, clock.now(), ok);
    }));
    const now = clock.now();
    this.#o.observe?.({ type: 'peers', peers: this.#peers.length, reached: this.#reach.reachedWithin(now, this.#t.unreachableAfterMs).length });
    const { failing, targets, byNamespace } = this.#o.local();
    const change = this.#state.step({ now, self: this.#o.identity, peers: this.#peers, reach: this.#reach, failing, targets, byNamespace });
    if (change !== undefined) this.#o.observe?.(change);
    return change;
  }

  /** Rounds every interval until aborted; `onRound` runs after each (held writes are retried then). */
  async run(signal: AbortSignal, onRound: (change: Change | undefined) => Promise<void> | void): Promise<void> {
    const { clock } = this.#o;
    while (!signal.aborted) {
      const due = clock.now() + (this.#o.intervalMs ?? 1000);
      const change = await this.step(signal);
      await onRound(change);
      await clock.sleepUntil(due, signal).catch(() => undefined);
    }
  }
}
