import { decide } from './decide.ts';
import type { Decision } from './decide.ts';
import { sameInstance } from './instance.ts';
import type { TargetState } from './target.ts';
import { instanceOf } from './view.ts';
import type { ContainerObservation, ContainerView } from './view.ts';

/**
 * outprobe's "started" for one container (kubelet-probes.md §3.6, outprobe
 * mapping): running, and its startup result for *this* instance is a committed
 * Success (or the policy has no startup probe), and the kubelet's own
 * `started` is not reported false.
 *
 * @param startup the container's startup target after this pass's `decide`,
 *   or `null` when the policy defines no startup probe (not "not created yet":
 *   a missing startup target would ungate liveness).
 */
export function containerStarted(container: ContainerView | undefined, startup: TargetState | null): boolean {
  if (container?.state !== 'running' || container.started === false) return false;
  const instance = instanceOf(container);
  if (instance === null) return false;
  if (startup === null) return true;
  // A result committed for a previous instance says nothing about this one.
  return startup.committed === 'success' && sameInstance(startup.instance, instance);
}

/**
 * The targets one policy has for one container (same pod, container, policy);
 * `null` where the policy defines no probe of that kind.
 */
export interface ContainerTargets {
  readonly startup: TargetState | null;
  readonly liveness: TargetState | null;
  readonly readiness: TargetState | null;
}

export interface ContainerDecisions {
  /** `containerStarted` after the startup target's pass. */
  readonly started: boolean;
  readonly startup: Decision | null;
  readonly liveness: Decision | null;
  readonly readiness: Decision | null;
}

/**
 * One pass over all of a container's targets in the order gating needs: the
 * startup target first (it may write its initial value for a new instance),
 * then liveness and readiness gated on the resulting `started`. Callers that
 * schedule targets separately can instead call `decide` with
 * `containerStarted(container, startupState)` themselves.
 */
export function decideContainer(
  targets: ContainerTargets,
  observed: ContainerObservation,
  now: number,
): ContainerDecisions {
  const startup = targets.startup === null ? null : decide(targets.startup, { ...observed, started: false }, now);
  const started = containerStarted(observed.container, startup === null ? null : startup.state);
  const view = { ...observed, started };
  return {
    started,
    startup,
    liveness: targets.liveness === null ? null : decide(targets.liveness, view, now),
    readiness: targets.readiness === null ? null : decide(targets.readiness, view, now),
  };
}
