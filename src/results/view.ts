import type { InstanceId } from './instance.ts';

/**
 * What one pass reads from the API about a pod and a container. The results
 * stage never fetches anything: callers build these views from the informer
 * cache and pass them in, with times already converted to ms since the epoch.
 */

/** Pod phases as the API spells them; only the terminal two matter here. */
export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';

export interface PodView {
  /** `metadata.uid`; must equal the target key's pod UID, else the target stops. */
  readonly uid: string;
  readonly phase: PodPhase;
  /**
   * `metadata.deletionTimestamp` in ms, when set. Liveness and startup targets
   * stop quietly once it is set; readiness keeps probing until the pod is gone.
   * @default undefined (not being deleted)
   */
  readonly deletionTimestamp?: number | undefined;
}

/** The container's state block: exactly one of running, waiting, terminated. */
export type ContainerState = 'running' | 'waiting' | 'terminated';

export interface ContainerView {
  /**
   * `containerStatuses[].containerID`. Empty or missing means the container
   * has not been created yet: the pass does nothing (§3.2 step 3).
   */
  readonly containerId?: string | undefined;
  /** `containerStatuses[].restartCount`. */
  readonly restartCount: number;
  /** Which state block is set; a status with none set counts as `waiting`. */
  readonly state: ContainerState;
  /**
   * `state.running.startedAt` in ms, used for the initial delay. When missing
   * the delay is treated as elapsed, as the kubelet does with a zero time.
   * @default undefined
   */
  readonly startedAt?: number | undefined;
  /**
   * The kubelet's `containerStatuses[].started`. When the API reports it,
   * `false` keeps liveness and readiness gated (§3.6 outprobe mapping).
   * @default undefined (not reported: does not gate)
   */
  readonly started?: boolean | undefined;
  /**
   * Whether a terminated container will be started again: the pod's
   * restartPolicy is not `Never`, or the container is a sidecar. A target
   * whose container terminated for good stops (§3.2 step 6).
   * @default true
   */
  readonly restartable?: boolean | undefined;
}

/** The pod and one of its containers, as read for a pass. */
export interface ContainerObservation {
  /** `undefined` when the pod is not in the cache (not synced yet, or gone). */
  readonly pod: PodView | undefined;
  /** `undefined` when the pod has no status for this container name. */
  readonly container: ContainerView | undefined;
}

/** What `decide` reads for one target. */
export interface TargetView extends ContainerObservation {
  /**
   * Whether the container counts as started (see `containerStarted`). Gates
   * liveness and readiness; ignored by a startup target, which gates on its
   * own committed result.
   */
  readonly started: boolean;
}

/** The instance a view describes, or `null` when the container does not exist yet. */
export function instanceOf(container: ContainerView | undefined): InstanceId | null {
  if (container === undefined) return null;
  const { containerId } = container;
  if (containerId === undefined || containerId === '') return null;
  return { containerId, restartCount: container.restartCount };
}
