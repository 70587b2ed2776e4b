/**
 * Accounting for Events that could not be sent (write queue full, per-object
 * rate cap, failed write). An event recorded with a fold target is not lost
 * silently: it is counted against that object (a pod's ProbePolicy) and, once
 * per interval, the recorder writes one summary Event there saying how many
 * were not sent and about how many objects. Pure and clock-free.
 */
import type { InvolvedObject } from './events.ts';

/** Where an unsent event is accounted. */
export interface EventFold {
  /** The object the summary Event is about (e.g. the pod's ProbePolicy). */
  readonly into: InvolvedObject;
  /** The summary Event's reason, e.g. `ReadinessGateChangesFolded`. */
  readonly reason: string;
  /** What the folded events were, plural, e.g. `gate changes`. */
  readonly what: string;
}

/** One summary due to be written. */
export interface FoldSummary {
  readonly into: InvolvedObject;
  readonly reason: string;
  readonly message: string;
  /** Events it accounts for. */
  readonly count: number;
  /** Distinct objects those events were about. */
  readonly objects: number;
  readonly sinceMs: number;
}

interface Entry {
  readonly fold: EventFold;
  readonly kind: string;
  readonly objects: Set<string>;
  count: number;
  readonly sinceMs: number;
}

export function foldMessage(s: { readonly count: number; readonly objects: number; readonly what: string; readonly kind: string; readonly seconds: number }): string {
  const noun = `${s.kind.toLowerCase()}${s.objects === 1 ? '' : 's'}`;
  return `${s.count} ${s.what} on ${s.objects} ${noun} were not sent as Events in the last ${s.seconds}s (outprobe's Event rate limit); each ${s.kind.toLowerCase()}'s own status shows its current state`;
}

export class FoldLedger {
  readonly #entries = new Map<string, Entry>();

  /** Counts one unsent event about `object` (kind and uid) against `fold`. */
  add(fold: EventFold, object: { readonly kind: string; readonly uid: string }, nowMs: number): void {
    const key = `${fold.into.uid}\u0000${fold.reason}`;
    let entry = this.#entries.get(key);
    if (entry === undefined) this.#entries.set(key, (entry = { fold, kind: object.kind, objects: new Set(), count: 0, sinceMs: nowMs }));
    entry.count++;
    entry.objects.add(object.uid);
  }

  /** When the oldest open summary falls due, or undefined when none is open. */
  nextDueMs(intervalMs: number): number | undefined {
    let next: number | undefined;
    for (const e of this.#entries.values()) next = next === undefined ? e.sinceMs + intervalMs : Math.min(next, e.sinceMs + intervalMs);
    return next;
  }

  /** Takes the summaries open at least `intervalMs` (all of them when `intervalMs` is 0). */
  take(nowMs: number, intervalMs: number): FoldSummary[] {
    const out: FoldSummary[] = [];
    for (const [key, e] of this.#entries) {
      if (nowMs - e.sinceMs < intervalMs) continue;
      this.#entries.delete(key);
      const seconds = Math.max(1, Math.ceil((nowMs - e.sinceMs) / 1000));
      const message = foldMessage({ count: e.count, objects: e.objects.size, what: e.fold.what, kind: e.kind, seconds });
      out.push({ into: e.fold.into, reason: e.fold.reason, message, count: e.count, objects: e.objects.size, sinceMs: e.sinceMs });
    }
    return out;
  }

  get open(): number {
    return this.#entries.size;
  }
}
