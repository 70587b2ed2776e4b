import { isNewInstance } from './instance.ts';
import type { InstanceId } from './instance.ts';
import { initialResult } from './result.ts';
import type { ProbeResult } from './result.ts';
import type { Seed, TargetState } from './target.ts';
import { transitionBetween } from './transition.ts';
import type { Change, Transition, TransitionCause } from './transition.ts';
import { instanceOf } from './view.ts';
import type { ContainerView, PodView, TargetView } from './view.ts';

/** What the caller does with this pass: run a probe, do nothing, or drop the target. */
export const decideActions = ['probe', 'skip', 'stop'] as const;
export type DecideAction = (typeof decideActions)[number];

/**
 * Why, as a stable code for logs and metrics. In `decide`'s order:
 * - `stopped` (stop): the target stopped earlier.
 * - `no-pod-status` (skip): pod not in the cache (step 1).
 * - `pod-uid-changed` (stop): the view is of another pod; create a new target.
 * - `pod-finished` (stop): phase Failed or Succeeded (step 2).
 * - `no-container` (skip): no status for the container, or no container ID (step 3).
 * - `on-hold` (skip): held after a liveness Failure or a startup result (step 5).
 * - `not-running` (skip) / `container-terminated` (stop): Failure written (step 6).
 * - `pod-deleting` (stop): liveness/startup wrote Success on deletion (step 7).
 * - `initial-delay` (skip): fewer whole seconds than initialDelaySeconds (step 8).
 * - `already-started` (skip): a startup target whose container has started (step 9).
 * - `not-started` (skip): liveness/readiness while not started (step 9).
 * - `due` (probe).
 */
export const decideReasons = [
  'stopped',
  'no-pod-status',
  'pod-uid-changed',
  'pod-finished',
  'no-container',
  'on-hold',
  'not-running',
  'container-terminated',
  'pod-deleting',
  'initial-delay',
  'already-started',
  'not-started',
  'due',
] as const;
export type DecideReason = (typeof decideReasons)[number];

export interface Decision {
  readonly state: TargetState;
  readonly action: DecideAction;
  readonly reason: DecideReason;
  /** The committed value's change during this pass, if any (at most one per pass). */
  readonly emitted: Transition | null;
  /**
   * Readiness only: run this probe now rather than on the period, because the
   * container became started or a new instance appeared since the target last
   * probed (§3.6 improvement). Raised once, on the first `probe` decision after
   * the target saw an instance change or a pass ending in `no-container`,
   * `not-running` or `not-started`; never on the first instance a target sees
   * already started (the scheduler's first-probe rule covers new targets).
   */
  readonly probeNow: boolean;
  /**
   * For an `initial-delay` skip: when the delay ends (`startedAt +
   * initialDelaySeconds`), so the caller runs the first probe then rather
   * than a period later (§3.10 adopted); `null` otherwise.
   */
  readonly wakeAt: number | null;
}

/** One pass in progress: the value committed when it began, and the last write. */
interface Pass {
  readonly before: ProbeResult | null;
  readonly state: TargetState;
  readonly change: Change | null;
  readonly now: number;
}

/**
 * One kubelet pass (`doProbe` steps 1–9, kubelet-probes.md §3.2) for one
 * target, without probing: says whether to probe now, and writes the values
 * the kubelet writes before probing (initial value, not-running Failure,
 * deletion Success). Pure: `now` is ms since the epoch.
 */
export function decide(state: TargetState, view: TargetView, now: number): Decision {
  const pass: Pass = { before: state.committed, state, change: null, now };
  if (state.stopped) return end(pass, 'stop', 'stopped');
  const { pod, container } = view;
  if (pod === undefined) return end(pass, 'skip', 'no-pod-status');
  if (pod.uid !== state.key.podUid) return end(stop(pass), 'stop', 'pod-uid-changed');
  if (pod.phase === 'Failed' || pod.phase === 'Succeeded') return end(stop(pass), 'stop', 'pod-finished');
  const instance = instanceOf(container);
  if (container === undefined || instance === null) return end(arm(pass), 'skip', 'no-container');
  return afterInstance(observe(pass, instance, container), pod, container, view.started);
}

/** Steps 5–9, once the pass knows which instance it is looking at. */
function afterInstance(pass: Pass, pod: PodView, container: ContainerView, started: boolean): Decision {
  const { kind } = pass.state.key;
  if (pass.state.onHold) return end(pass, 'skip', 'on-hold');
  if (container.state !== 'running') return notRunning(pass, container);
  if (pod.deletionTimestamp !== undefined && kind !== 'readiness') {
    return end(stop(write(pass, 'success', 'pod-deleting')), 'stop', 'pod-deleting');
  }
  if (inInitialDelay(pass.state, container.startedAt, pass.now)) {
    return { ...end(pass, 'skip', 'initial-delay'), wakeAt: delayEnd(pass.state, container.startedAt) };
  }
  if (kind === 'startup') {
    // The startup target gates on its own result: the combined `started`
    // includes it. Normally unreachable (a committed startup result holds);
    // a seeded Success lands here.
    if (pass.state.committed === 'success') return end(pass, 'skip', 'already-started');
  } else if (!started) {
    return end(arm(pass), 'skip', 'not-started');
  }
  return end(pass, 'probe', 'due');
}

/**
 * Step 4. A new instance clears the hold and, unlike the legacy worker, resets
 * the counters (§3.5 improvement), then writes the kind's initial value —
 * except for the first instance of a seeded target whose seed applies.
 */
function observe(pass: Pass, instance: InstanceId, container: ContainerView): Pass {
  const previous = pass.state;
  if (!isNewInstance(previous.instance, instance)) return pass;
  const first = previous.instance === null;
  const fresh: TargetState = {
    ...previous,
    instance,
    lastResult: null,
    resultRun: 0,
    onHold: false,
    seed: null,
    probeNowArmed: previous.probeNowArmed || (!first && previous.key.kind === 'readiness'),
  };
  const next: Pass = { ...pass, state: fresh };
  if (first && previous.seed !== null && seedApplies(previous.seed, container)) return next;
  return write(next, initialResult(previous.key.kind), 'initial');
}

function seedApplies(seed: Seed, container: ContainerView): boolean {
  if (seed.startedBefore === undefined) return true;
  return container.startedAt !== undefined && container.startedAt < seed.startedBefore;
}

/** Step 6: Failure for every kind; the target lives on unless the container exited for good. */
function notRunning(pass: Pass, container: ContainerView): Decision {
  const written = arm(write(pass, 'failure', 'not-running'));
  if (container.state === 'terminated' && container.restartable === false) {
    return end(stop(written), 'stop', 'container-terminated');
  }
  return end(written, 'skip', 'not-running');
}

/** Step 8: whole seconds since start, truncated as Go's int(Seconds()) does. */
function inInitialDelay(state: TargetState, startedAt: number | undefined, now: number): boolean {
  if (startedAt === undefined) return false;
  return Math.trunc((now - startedAt) / 1000) < state.config.initialDelaySeconds;
}

/** The first time step 8 lets a probe through: truncated whole seconds reach the delay exactly then. */
function delayEnd(state: TargetState, startedAt: number | undefined): number | null {
  return startedAt === undefined ? null : startedAt + state.config.initialDelaySeconds * 1000;
}

function write(pass: Pass, value: ProbeResult, cause: TransitionCause): Pass {
  return {
    ...pass,
    state: { ...pass.state, committed: value },
    change: { cause, output: '', at: pass.now },
  };
}

function stop(pass: Pass): Pass {
  return { ...pass, state: { ...pass.state, stopped: true } };
}

/** Readiness only: the next probe decision runs at once. */
function arm(pass: Pass): Pass {
  if (pass.state.key.kind !== 'readiness' || pass.state.probeNowArmed) return pass;
  return { ...pass, state: { ...pass.state, probeNowArmed: true } };
}

function end(pass: Pass, action: DecideAction, reason: DecideReason): Decision {
  const probeNow = action === 'probe' && pass.state.probeNowArmed;
  const state = probeNow ? { ...pass.state, probeNowArmed: false } : pass.state;
  return { state, action, reason, emitted: transitionBetween(pass.before, state, pass.change), probeNow, wakeAt: null };
}
