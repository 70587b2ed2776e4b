import type { Pod } from '../kube/index.ts';
import type { ProbePolicy } from '../policy/index.ts';
import { selects } from '../targets/index.ts';
import type { GateCondition } from '../writeback/index.ts';

/*
 * Fail-open on release (issue 30, ADR 0035): every change that stops outprobe
 * from writing a gate on a pod leaves that gate True, with an outprobe
 * reason, and only over a condition outprobe wrote. Pure: the shell
 * (src/controller/release.ts, src/release-gates.ts) reads the pods and
 * policies and queues the writes.
 */

/** The reason of a gate released because its ProbePolicy was deleted (kept from before ADR 0035). */
export const policyRemovedReason = 'PolicyRemoved';
/** The reason of a gate released for any other cause (the policy changed, the pod was orphaned, uninstall). */
export const gateReleasedReason = 'GateReleased';
/** The reasons a release writes: outprobe's own, so a released gate is still known as outprobe's. */
export const releaseReasons: readonly string[] = [policyRemovedReason, gateReleasedReason];

/** Why outprobe stops writing a gate on a pod. */
export type ReleaseCause =
  /** The policy was deleted (in any mode: outprobe may have written the gate while it was Enforce). */
  | 'deleted'
  /** The policy became Invalid: it writes nothing until it is valid again. */
  | 'invalid'
  /** The policy moved from Enforce to Observe. */
  | 'observe'
  /** The policy no longer has a readiness section. */
  | 'no-readiness'
  /** The policy's readiness.conditionType changed: the old type is released. */
  | 'condition-type'
  /** The policy's selector no longer selects the pod. */
  | 'selector'
  /** Found with no valid Enforce policy writing it (a change this replica did not see, e.g. while it was down). */
  | 'unclaimed'
  /** No live replica has owned the pod for longer than the orphan bound. */
  | 'orphaned'
  /** outprobe is being uninstalled (the chart's pre-delete hook). */
  | 'uninstall';

/** Who wrote a pod's condition of one type (see `conditionWriter` in src/controller/conditions.ts). */
export type Writer = 'absent' | 'outprobe' | 'foreign';

/** The namespace of condition types outprobe names by default (`outprobe.io/<policy>`). */
export const ownTypePrefix = 'outprobe.io/';

/** The condition type a policy writes on a pod: an Enforce policy with a readiness section that selects it. */
export function claimOf(policy: ProbePolicy | undefined, pod: Pod): string | undefined {
  if (policy?.spec.mode !== 'Enforce' || policy.spec.readiness === null) return undefined;
  return selects(policy, pod) ? policy.spec.readiness.conditionType : undefined;
}

/** Whether any of these (valid) policies writes condition `type` on the pod. */
export function claimed(policies: Iterable<ProbePolicy | undefined>, pod: Pod, type: string): boolean {
  for (const p of policies) if (claimOf(p, pod) === type) return true;
  return false;
}

/**
 * The gate a policy change stops outprobe from writing on a pod, and why;
 * `null` when it writes the same gate there as before (or wrote none).
 * `before`: the policy as it was (`undefined` if it was Invalid or unknown:
 * nothing is known of what it wrote); `after`: as it is now, `undefined`
 * when Invalid, `'deleted'` when it is gone.
 */
export function releasedByChange(before: ProbePolicy | undefined, after: ProbePolicy | undefined | 'deleted', pod: Pod): { readonly type: string; readonly cause: ReleaseCause } | null {
  if (after === 'deleted') {
    // Any mode: an Observe policy may have been Enforce when outprobe wrote the gate (issue 30).
    const readiness = before?.spec.readiness ?? null;
    return before !== undefined && readiness !== null && selects(before, pod) ? { type: readiness.conditionType, cause: 'deleted' } : null;
  }
  const type = claimOf(before, pod);
  if (type === undefined) return null;
  if (after === undefined) return { type, cause: 'invalid' };
  if (after.spec.mode !== 'Enforce') return { type, cause: 'observe' };
  if (after.spec.readiness === null) return { type, cause: 'no-readiness' };
  if (after.spec.readiness.conditionType !== type) return { type, cause: 'condition-type' };
  if (!selects(after, pod)) return { type, cause: 'selector' };
  return null;
}

/**
 * Whether outprobe may write this gate True on release: the pod lists it, it
 * is not True already, and outprobe wrote it; a condition not written yet
 * only for outprobe's own `outprobe.io/` types and only when `absentToo` (a
 * change outprobe saw happen: a type it named itself, that nobody else
 * writes). Never over another writer's condition (a policy that named another
 * controller's gate must not set it True by going away).
 */
export function releasable(pod: Pod, type: string, writer: Writer, absentToo: boolean): boolean {
  if (!pod.readinessGates.includes(type)) return false;
  if (writer === 'foreign') return false;
  if (writer === 'absent') return absentToo && type.startsWith(ownTypePrefix);
  return pod.conditions.find((c) => c.type === type)?.status !== 'True';
}

/**
 * The gates of a pod no policy writes any more (the level rule, beside the
 * edge of a change): listed, written by outprobe, not True, and claimed by
 * none of `policies` (the valid policies of its namespace). A condition not
 * written yet is never released here: the pod may have been created just
 * before its policy.
 */
export function strandedGates(pod: Pod, policies: readonly (ProbePolicy | undefined)[], writerOf: (type: string) => Writer): string[] {
  const out: string[] = [];
  for (const type of pod.readinessGates) {
    if (!releasable(pod, type, writerOf(type), false)) continue;
    if (!claimed(policies, pod, type)) out.push(type);
  }
  return out;
}

/** How long a pod may be owned by no live replica before its gate is released: max(30 s, 2 × the Lease duration). */
export function orphanBoundMs(leaseDurationMs: number): number {
  return Math.max(30_000, 2 * leaseDurationMs);
}

/** Whether the fleet, seen without a live member since `since`, has been so for longer than the bound. */
export function orphaned(since: number | undefined, now: number, boundMs: number): boolean {
  return since !== undefined && now - since > boundMs;
}

/** The condition a release writes (times: RFC 3339 at seconds). `policy`: `namespace/name`, when one is the cause. */
export function releaseCondition(type: string, cause: ReleaseCause, at: string, detail: { readonly policy?: string; readonly boundSeconds?: number } = {}): GateCondition {
  const reason = cause === 'deleted' ? policyRemovedReason : gateReleasedReason;
  return { type, status: 'True', reason, message: releaseMessage(cause, detail), lastTransitionTime: at, lastProbeTime: at };
}

function releaseMessage(cause: ReleaseCause, detail: { readonly policy?: string; readonly boundSeconds?: number }): string {
  const p = `ProbePolicy ${detail.policy ?? ''}`;
  switch (cause) {
    case 'deleted':
      return 'The ProbePolicy that owned this readiness gate was removed; outprobe no longer gates this pod';
    case 'invalid':
      return `${p} is Invalid: outprobe no longer gates this pod until it is valid again`;
    case 'observe':
      return `${p} is in Observe mode: outprobe no longer writes this gate`;
    case 'no-readiness':
      return `${p} no longer has a readiness section: outprobe no longer writes this gate`;
    case 'condition-type':
      return `${p} now writes another readiness.conditionType: outprobe no longer writes this one`;
    case 'selector':
      return `${p} no longer selects this pod: outprobe no longer gates it`;
    case 'unclaimed':
      return 'No valid Enforce ProbePolicy writes this gate on this pod: outprobe released it';
    case 'orphaned':
      return `No live outprobe replica owned this pod for more than ${detail.boundSeconds ?? 0} s: outprobe released its gate`;
    case 'uninstall':
      return 'outprobe was uninstalled: its readiness gate is released';
  }
}
