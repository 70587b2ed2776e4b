import type { Transition } from '../results/index.ts';
import type { GateCondition } from '../writeback/index.ts';

/** RFC 3339 at seconds precision, as the API server stores condition times. */
export function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

const maxMessage = 1024;

/** The gate condition a readiness transition asks for (`null` for Unknown: nothing to write). */
export function gateConditionFor(type: string, container: string, t: Transition): GateCondition | null {
  if (t.to === 'unknown') return null;
  const at = rfc3339(t.at);
  const base = { type, lastTransitionTime: at, lastProbeTime: at };
  if (t.to === 'success') return { ...base, status: 'True', reason: 'ProbeSucceeded', message: `Readiness probe of container ${container} succeeded` };
  switch (t.cause) {
    case 'probe':
      return { ...base, status: 'False', reason: 'ProbeFailed', message: `Readiness probe failed: ${t.output}`.slice(0, maxMessage) };
    case 'not-running':
      return { ...base, status: 'False', reason: 'ContainerNotRunning', message: `Container ${container} is not running` };
    default:
      return { ...base, status: 'False', reason: 'NotYetProbed', message: `Readiness probe of container ${container} has not succeeded yet` };
  }
}

/**
 * The condition to write again when the server lost this replica's confirmed
 * status: the last condition the target's transitions asked for, with the
 * times of now (the status changes back now); or, for a value its own probes
 * confirmed without a transition (an inherited True, the initial False), a
 * fresh one in the kubelet's words.
 */
export function repairCondition(
  type: string,
  container: string,
  status: 'True' | 'False',
  target: { readonly gate: GateCondition | null; readonly lastFailure: string },
  now: number,
): GateCondition {
  const at = rfc3339(now);
  const last = target.gate;
  if (last !== null && last.status === status) return { ...last, lastTransitionTime: at, lastProbeTime: at };
  return status === 'True'
    ? { type, status, reason: 'ProbeSucceeded', message: `Readiness probe of container ${container} succeeded`, lastTransitionTime: at, lastProbeTime: at }
    : { type, status, reason: 'ProbeFailed', message: `Readiness probe failed: ${target.lastFailure}`.slice(0, maxMessage), lastTransitionTime: at, lastProbeTime: at };
}

/** Fail open when a policy goes away, so its gate never strands pods (kubelet-probes.md §9). */
export function failOpenCondition(type: string, now: number): GateCondition {
  const at = rfc3339(now);
  return { type, status: 'True', reason: 'PolicyRemoved', message: 'The ProbePolicy that owned this readiness gate was removed; outprobe no longer gates this pod', lastTransitionTime: at, lastProbeTime: at };
}
