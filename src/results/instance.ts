/**
 * One running instance of a container. The kubelet keys its caches by
 * container ID; outprobe also treats a higher `restartCount` under the same ID
 * as a new instance (kubelet-probes.md §3.3 outprobe mapping), since the API
 * can report a restart before or without a new ID.
 */
export interface InstanceId {
  readonly containerId: string;
  readonly restartCount: number;
}

/**
 * True when `current` is a different instance from `previous`: no previous
 * instance, another container ID, or the same ID with a higher restart count.
 * A lower restart count under the same ID is a stale read, not a new instance.
 */
export function isNewInstance(previous: InstanceId | null, current: InstanceId): boolean {
  if (previous === null) return true;
  if (previous.containerId !== current.containerId) return true;
  return current.restartCount > previous.restartCount;
}

/** Exactly the same instance (ID and restart count). */
export function sameInstance(a: InstanceId | null, b: InstanceId | null): boolean {
  if (a === null || b === null) return a === b;
  return a.containerId === b.containerId && a.restartCount === b.restartCount;
}
