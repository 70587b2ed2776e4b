/** What this replica knows of its own checks of one peer. */
export interface PeerReach {
  /** When this replica first saw the peer live with an address (a new peer is given time). */
  readonly firstSeenAt: number;
  /** Start time of the latest check that succeeded; undefined if none did. */
  readonly lastOkStartedAt: number | undefined;
  /** End time of the latest check that succeeded. */
  readonly lastOkAt: number | undefined;
}

/**
 * This replica's checks of its peers' /healthz, pure bookkeeping. A check
 * records when it *started*: the write guard asks for a success that started
 * after the failure it is about to act on was observed (see guard.ts).
 */
export class ReachTable {
  readonly #peers = new Map<string, PeerReach>();

  /** The current peers (live members with an address); forgets the others. */
  setPeers(ids: Iterable<string>, now: number): void {
    const keep = new Set(ids);
    for (const id of this.#peers.keys()) if (!keep.has(id)) this.#peers.delete(id);
    for (const id of keep) if (!this.#peers.has(id)) this.#peers.set(id, { firstSeenAt: now, lastOkStartedAt: undefined, lastOkAt: undefined });
  }

  record(id: string, startedAt: number, endedAt: number, ok: boolean): void {
    const p = this.#peers.get(id);
    if (p === undefined || !ok) return;
    if ((p.lastOkStartedAt ?? -Infinity) >= startedAt) return;
    this.#peers.set(id, { ...p, lastOkStartedAt: startedAt, lastOkAt: endedAt });
  }

  get(id: string): PeerReach | undefined {
    return this.#peers.get(id);
  }

  ids(): string[] {
    return [...this.#peers.keys()].sort();
  }

  get size(): number {
    return this.#peers.size;
  }

  /** Peers with a success that ended within `windowMs` of `now`. */
  reachedWithin(now: number, windowMs: number): string[] {
    return this.ids().filter((id) => now - (this.#peers.get(id)?.lastOkAt ?? -Infinity) <= windowMs);
  }

  /** Did any check that started at or after `t` succeed? */
  okStartedSince(t: number): boolean {
    for (const p of this.#peers.values()) if ((p.lastOkStartedAt ?? -Infinity) >= t) return true;
    return false;
  }
}
