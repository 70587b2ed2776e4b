import type { ProbeSpec } from './types.ts';

/** A probe's timing in the units the scheduler and executors use. */
export interface ProbeTiming {
  /** `timeoutSeconds` × 1000: the executors' overall deadline. */
  readonly timeoutMs: number;
  /** `periodSeconds` × 1000: from one probe's completion to the next start. */
  readonly periodMs: number;
  /** `initialDelaySeconds` × 1000, counted from the container's `startedAt`. */
  readonly initialDelayMs: number;
}

export function probeTiming(probe: ProbeSpec): ProbeTiming {
  return {
    timeoutMs: probe.timeoutSeconds * 1000,
    periodMs: probe.periodSeconds * 1000,
    initialDelayMs: probe.initialDelaySeconds * 1000,
  };
}

/**
 * The `results` stage's TargetConfig fields of a probe (structurally the same
 * type; `policy` sits upstream of `results` and does not import it).
 */
export function thresholdsOf(probe: ProbeSpec): {
  readonly successThreshold: number;
  readonly failureThreshold: number;
  readonly initialDelaySeconds: number;
} {
  const { successThreshold, failureThreshold, initialDelaySeconds } = probe;
  return { successThreshold, failureThreshold, initialDelaySeconds };
}
