import { Slice } from '../kernel/index.ts';
import type { Clock } from '../kernel/index.ts';
import type { Pod } from '../kube/index.ts';
import type { PodRef } from '../writeback/index.ts';

export interface ResyncDeps {
  readonly clock: Clock;
  /** The pods now, by key (the pod informer's store). */
  readonly pods: { get(key: string): Pod | undefined; keys(): Iterable<string> };
  /** Keys of the pods this replica holds targets for now. */
  readonly held: () => Iterable<string>;
  /** Does this replica own the pod now (sharding)? */
  readonly owns: (pod: Pod) => boolean;
  /** Plans the pod's targets again (TargetSet.reconcilePod). */
  readonly reconcile: (pod: Pod) => void;
  /** Once every pod is planned again. */
  readonly done?: () => void;
  /** Event-loop time one slice may hold. @default 50 */
  readonly sliceMs?: number;
  /** One turn of the event loop between slices. @default setImmediate */
  readonly yieldTurn?: () => Promise<void>;
}

/**
 * Work a membership change adds to its resync (ADR 0073, sharding's
 * OwnershipPass): `pod` right before each pod of the second pass is planned,
 * `done` after the last one (never when superseded).
 */
export interface ResyncPass {
  pod(pod: Pod): void;
  done(): void;
}

/** How one resync went (for the bench and tests). */
export interface ResyncResult {
  readonly lost: number;
  readonly planned: number;
  readonly yields: number;
  /** The longest slice, by the clock (ms). */
  readonly longestSliceMs: number;
  /** How long collecting the pods it held took, before the first slice (ms). */
  readonly collectMs: number;
  /** A newer resync (or the controller's stop) took over before the end. */
  readonly superseded: boolean;
}

/**
 * Every pod planned again after a shard membership change (ADR 0072), in
 * slices of at most `sliceMs` between which the event loop runs, so a Lease
 * renewal never waits behind it. Two passes, losses first:
 *
 * 1. the pods this replica holds targets for and no longer owns: their
 *    targets, pending and retried gate writes go (the same `reconcile`);
 * 2. every pod in the store, read again by key when its turn comes (a pod
 *    deleted meanwhile is skipped, one changed is planned as it is now):
 *    gains get targets, the rest are replanned as before.
 *
 * Between slices a lost pod not yet reached still has targets, but nothing it
 * does is written: every gate write checks ownership when it is sent
 * (GateGuards), a verdict only becomes a desired write on a pod owned now
 * (TargetSet), remediation and release check it too. A gained pod not yet
 * reached is probed once its slice comes (at most the resync's length later).
 * A newer resync supersedes one still running: it starts over from the
 * losses, with the membership as it is then.
 */
export class Resync {
  readonly #d: ResyncDeps;
  #current: AbortController | undefined;

  constructor(deps: ResyncDeps) {
    this.#d = deps;
  }

  /** A resync is being applied. */
  get running(): boolean {
    return this.#current !== undefined;
  }

  /**
   * Starts a resync (superseding one still running); resolves when it ends,
   * superseded or not. `signal`: the controller's stop. `pass`: the
   * membership change's own work per pod, in the same slices (ADR 0073).
   */
  async run(signal?: AbortSignal, pass?: ResyncPass): Promise<ResyncResult> {
    this.#current?.abort(new Error('superseded by a newer resync'));
    const mine = new AbortController();
    this.#current = mine;
    const stop = signal === undefined ? mine.signal : AbortSignal.any([signal, mine.signal]);
    const slice = new Slice(this.#d.clock, this.#d.sliceMs ?? 50, this.#d.yieldTurn);
    let lost = 0;
    let planned = 0;
    if (stop.aborted) return { lost, planned, yields: 0, longestSliceMs: 0, collectMs: 0, superseded: true };
    const t0 = this.#d.clock.now();
    const held = [...this.#d.held()];
    const collectMs = this.#d.clock.now() - t0;
    const end = (superseded: boolean): ResyncResult => ({ lost, planned, yields: slice.yields, longestSliceMs: slice.longestMs, collectMs, superseded });
    try {
      const { pods, owns, reconcile } = this.#d;
      for (const key of held) {
        await slice.yieldIfSpent(stop);
        const pod = pods.get(key);
        if (pod === undefined || owns(pod)) continue;
        reconcile(pod);
        lost++;
      }
      for (const key of [...pods.keys()]) {
        await slice.yieldIfSpent(stop);
        if (this.#plan(key, pass)) planned++;
      }
      this.#d.done?.();
      pass?.done();
      return end(false);
    } catch (err: unknown) {
      if (!isAborted(stop)) throw err;
      return end(true);
    } finally {
      if (this.#current === mine) this.#current = undefined;
    }
  }

  /** The second pass on one pod, read again by key (false when it is gone): the change's own work on it, then its plan. */
  #plan(key: string, pass: ResyncPass | undefined): boolean {
    const pod = this.#d.pods.get(key);
    if (pod === undefined) return false;
    pass?.pod(pod);
    this.#d.reconcile(pod);
    return true;
  }
}

/** Keys of the pods a target set holds targets for (each once). */
export function* heldPods(targets: { all(): Iterable<{ readonly plan: { readonly podKey: string } }> }): Iterable<string> {
  const seen = new Set<string>();
  for (const t of targets.all()) {
    if (seen.has(t.plan.podKey)) continue;
    seen.add(t.plan.podKey);
    yield t.plan.podKey;
  }
}

/**
 * The gate guards' ownership check (ADR 0072): does this replica own the pod a
 * write is for, as cached now? A pod not cached (or replaced) is not refused
 * here: its write fails on its own. Undefined without sharding.
 */
export function gateOwnership(owns: ((pod: Pod) => boolean) | undefined, pods: () => { get(key: string): Pod | undefined }): ((ref: PodRef) => boolean) | undefined {
  if (owns === undefined) return undefined;
  return (ref) => {
    const pod = pods().get(`${ref.namespace}/${ref.name}`);
    return pod === undefined || pod.uid !== ref.uid || owns(pod);
  };
}

/** Read through a call: TypeScript narrows `signal.aborted` after a first check as if it could not change. */
function isAborted(signal: AbortSignal): boolean {
  return signal.aborted;
}
