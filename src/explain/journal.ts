import type { Clock } from '../kernel/index.ts';
import type { ControllerEvent } from '../controller/index.ts';

/** One probe as a replica saw it: when, the result, the output (truncated), how long it took. */
export interface ProbeRecord {
  readonly at: number;
  readonly result: 'success' | 'warning' | 'failure' | 'errored';
  readonly output: string;
  readonly durationMs: number;
}

/** A committed result change of a target (the kubelet machine's transitions). */
export interface TransitionRecord {
  readonly at: number;
  readonly from: string | null;
  readonly to: string;
  readonly cause: string;
}

export interface JournalOptions {
  readonly clock: Clock;
  /** Results kept per target. @default 10 */
  readonly depth?: number;
  /** Characters kept of a probe's output (what it answered is hostile input: bounded). @default 256 */
  readonly outputChars?: number;
}

interface Entry {
  readonly probes: ProbeRecord[];
  transition: TransitionRecord | undefined;
}

/**
 * The last results of every target this replica probes, from the
 * controller's own events (ADR 0067): what `kubectl outprobe explain`
 * prints as "last N results". Bounded: `depth` records per target, each
 * output cut to `outputChars`; a target no longer probed is dropped by
 * `sweep`. Pure apart from the injected clock.
 */
export class ResultJournal {
  readonly #o: Required<JournalOptions>;
  readonly #byTarget = new Map<string, Entry>();

  constructor(o: JournalOptions) {
    this.#o = { depth: 10, outputChars: 256, ...o };
  }

  /** An observer to tee beside the controller's reporter. */
  readonly observe = (e: ControllerEvent): void => {
    if (e.type === 'probe') {
      const entry = this.#entry(e.target.key);
      const o = e.outcome;
      entry.probes.push({
        at: this.#o.clock.now(),
        result: o.kind,
        output: cut(o.kind === 'errored' ? o.error : o.output, this.#o.outputChars),
        durationMs: Math.round(e.durationMs),
      });
      if (entry.probes.length > this.#o.depth) entry.probes.splice(0, entry.probes.length - this.#o.depth);
    } else if (e.type === 'transition') {
      this.#entry(e.target.key).transition = { at: e.transition.at, from: e.transition.from, to: e.transition.to, cause: e.transition.cause };
    }
  };

  /** The target's last results, oldest first. */
  probes(key: string): readonly ProbeRecord[] {
    return this.#byTarget.get(key)?.probes ?? [];
  }

  /** The target's last committed change, if the journal saw one. */
  lastTransition(key: string): TransitionRecord | undefined {
    return this.#byTarget.get(key)?.transition;
  }

  /** Targets kept. */
  get size(): number {
    return this.#byTarget.size;
  }

  /** Drops what is kept of targets that are no longer probed. */
  sweep(live: (key: string) => boolean): void {
    for (const key of this.#byTarget.keys()) if (!live(key)) this.#byTarget.delete(key);
  }

  #entry(key: string): Entry {
    let entry = this.#byTarget.get(key);
    if (entry === undefined) {
      entry = { probes: [], transition: undefined };
      this.#byTarget.set(key, entry);
    }
    return entry;
  }
}

function cut(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, n)}…`;
}
