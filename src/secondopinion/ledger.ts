/** What the ledger says about acting on one failure now. */
export type LedgerDecision = 'agreed' | 'ask' | 'wait';

/** How an ask ended, as the ledger counts it. */
export type AskEnd = 'agreed' | 'disagreed' | 'error';

interface Entry {
  inFlight: boolean;
  /** Start of the latest ask a peer agreed with. */
  agreedAskedAt: number | undefined;
  /** No new ask before this (after a disagreement: one period; after an error: the retry delay). */
  nextAskAt: number;
  /** Asks that ended in an error in a row: the next ask goes to the next peer in the order. */
  errors: number;
  /** When the first of those errors ended (undefined: the last ask did not end in an error). */
  errorsSince: number | undefined;
  lastUsedAt: number;
}

/** Entries not asked about for this long are dropped (the pod went away or recovered). */
export const idleMs = 5 * 60_000;

/**
 * Second opinions per (policy, pod, probe kind), pure bookkeeping with the
 * time passed in. An agreement counts only for a failure observed at or
 * before the ask started (the same causal rule as the peer write guard of
 * ADR 0017): a peer that probed before the failure has not confirmed it.
 * After a disagreement the failure is asked about again no sooner than one
 * probe period later; after an error, after the retry delay.
 */
export class Ledger {
  readonly #entries = new Map<string, Entry>();
  #prunedAt = 0;

  decide(key: string, since: number, now: number): LedgerDecision {
    this.#prune(now);
    const e = this.#entries.get(key);
    if (e === undefined) return 'ask';
    e.lastUsedAt = now;
    if (e.agreedAskedAt !== undefined && e.agreedAskedAt >= since) return 'agreed';
    return e.inFlight || now < e.nextAskAt ? 'wait' : 'ask';
  }

  /** Errors in a row for this key (which peer to ask next). */
  errors(key: string): number {
    return this.#entries.get(key)?.errors ?? 0;
  }

  /** When the current run of errors for this key began; undefined when the last ask did not end in one. */
  errorsSince(key: string): number | undefined {
    return this.#entries.get(key)?.errorsSince;
  }

  started(key: string, now: number): void {
    const e = this.#entries.get(key) ?? { inFlight: false, agreedAskedAt: undefined, nextAskAt: now, errors: 0, errorsSince: undefined, lastUsedAt: now };
    e.inFlight = true;
    e.lastUsedAt = now;
    this.#entries.set(key, e);
  }

  settled(key: string, end: { readonly askedAt: number; readonly now: number; readonly result: AskEnd; readonly againAfterMs: number }): void {
    const e = this.#entries.get(key);
    if (e === undefined) return;
    e.inFlight = false;
    e.lastUsedAt = end.now;
    if (end.result === 'agreed') {
      e.agreedAskedAt = Math.max(e.agreedAskedAt ?? -Infinity, end.askedAt);
      e.errors = 0;
      e.errorsSince = undefined;
      return;
    }
    e.nextAskAt = end.now + end.againAfterMs;
    e.errors = end.result === 'error' ? e.errors + 1 : 0;
    e.errorsSince = end.result === 'error' ? (e.errorsSince ?? end.now) : undefined;
  }

  get size(): number {
    return this.#entries.size;
  }

  #prune(now: number): void {
    if (now - this.#prunedAt < 60_000) return;
    this.#prunedAt = now;
    for (const [key, e] of this.#entries) if (!e.inFlight && now - e.lastUsedAt > idleMs) this.#entries.delete(key);
  }
}
