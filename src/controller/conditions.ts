import type { Pod } from '../kube/index.ts';
import { releaseReasons } from '../failopen/index.ts';
import { InternCache, StringInterner } from '../kube/index.ts';
import type { Transition } from '../results/index.ts';
import type { GateCondition } from '../writeback/index.ts';

/*
 * The gate writer keeps the condition last desired for every pod: thousands
 * of pods turning ready in the same second get one shared condition object
 * (and one copy of its time and message) instead of one each (issue 17). Both
 * caches are bounded; a condition is read-only data.
 */
const timeTexts = new StringInterner({ maxEntries: 1024, maxLength: 32 });
const successes = new InternCache<GateCondition>(4096);

/** RFC 3339 at seconds precision, as the API server stores condition times. */
export function rfc3339(ms: number): string {
  return timeTexts.intern(new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z'));
}

const maxMessage = 1024;

type Times = Pick<GateCondition, 'lastTransitionTime' | 'lastProbeTime'>;

function succeeded(type: string, container: string, at: Times): GateCondition {
  const condition: GateCondition = { type, ...at, status: 'True', reason: 'ProbeSucceeded', message: `Readiness probe of container ${container} succeeded` };
  return successes.intern(JSON.stringify([type, container, at.lastTransitionTime, at.lastProbeTime]), condition);
}
const probeFailed = (type: string, output: string, times: Times): GateCondition =>
  ({ type, ...times, status: 'False', reason: 'ProbeFailed', message: `Readiness probe failed: ${output}`.slice(0, maxMessage) });

/** The gate condition a readiness transition asks for (`null` for Unknown: nothing to write). */
export function gateConditionFor(type: string, container: string, t: Transition): GateCondition | null {
  if (t.to === 'unknown') return null;
  const at = rfc3339(t.at);
  const times = { lastTransitionTime: at, lastProbeTime: at };
  if (t.to === 'success') return succeeded(type, container, times);
  switch (t.cause) {
    case 'probe':
      return probeFailed(type, t.output, times);
    case 'not-running':
      return { type, ...times, status: 'False', reason: 'ContainerNotRunning', message: `Container ${container} is not running` };
    default:
      return { type, ...times, status: 'False', reason: 'NotYetProbed', message: `Readiness probe of container ${container} has not succeeded yet` };
  }
}

/**
 * The condition to write again when the server lost this replica's confirmed
 * status: the condition last desired for the pod, with the times of now (the
 * status changes back now); or, for a value its own probes confirmed without a
 * transition (an inherited True, the initial False), a fresh one in the
 * kubelet's words, with the last failed probe's output.
 */
export function repairCondition(
  type: string,
  container: string,
  status: 'True' | 'False',
  now: number,
  known: { readonly desired: GateCondition | undefined; readonly lastFailure: string },
): GateCondition {
  const at = rfc3339(now);
  const times = { lastTransitionTime: at, lastProbeTime: at };
  if (known.desired !== undefined && known.desired.status === status) return { ...known.desired, ...times };
  return status === 'True' ? succeeded(type, container, times) : probeFailed(type, known.lastFailure, times);
}

/**
 * The reasons outprobe writes on a gate condition, and only outprobe. A
 * condition of a policy's type that carries any other reason (or none) was
 * written by someone else, e.g. another controller whose gate a policy named
 * (`cloud.google.com/load-balancer-neg-ready`) or a person forcing it: outprobe
 * leaves it alone, and never fails it open.
 */
export const ownReasons: ReadonlySet<string> = new Set(['ProbeSucceeded', 'ProbeFailed', 'ContainerNotRunning', 'NotYetProbed', 'PanicFailOpen', 'NoVantage', ...releaseReasons]);

/** The reason of a gate outprobe keeps True although its probe fails: the panic threshold (ADR 0015). */
export const panicFailOpenReason = 'PanicFailOpen';

export { ownTypePrefix } from '../failopen/index.ts';

/**
 * Who wrote a pod's condition of this type: `absent`, `outprobe` (one of
 * {@link ownReasons}) or `foreign` with the reason found.
 */
export function conditionWriter(conditions: readonly { readonly type: string; readonly reason?: string | undefined }[], type: string): { readonly by: 'absent' | 'outprobe' } | { readonly by: 'foreign'; readonly reason: string } {
  const c = conditions.find((x) => x.type === type);
  if (c === undefined) return { by: 'absent' };
  const reason = c.reason ?? '';
  return ownReasons.has(reason) ? { by: 'outprobe' } : { by: 'foreign', reason };
}

/**
 * Fail open under the panic threshold: the pod's readiness probe fails, but
 * holding it False too would put more than the policy's maxUnreadyPercent of
 * its gated pods out of their Services.
 */
export function panicFailOpenCondition(type: string, now: number, text: { readonly policy: string; readonly counts: string; readonly output: string }): GateCondition {
  const at = rfc3339(now);
  const message = `outprobe fails open (ProbePolicy ${text.policy}): ${text.counts}. Readiness probe failed: ${text.output}`.slice(0, maxMessage);
  return { type, status: 'True', reason: panicFailOpenReason, message, lastTransitionTime: at, lastProbeTime: at };
}

/** The status of the pod's condition `type` (a gate), as the pod cache shows it. */
export function gateStatus(pod: Pod, type: string): string | undefined {
  return pod.conditions.find((c) => c.type === type)?.status;
}

/** The reason of the pod's condition `type`, as the pod cache shows it. */
export function conditionReason(pod: Pod, type: string): string | undefined {
  return pod.conditions.find((c) => c.type === type)?.reason;
}
