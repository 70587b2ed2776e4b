import type { ProbeKind } from '../kernel/index.ts';
import { formatIssue, fromZodIssue } from './issues.ts';
import { toProbeSpec } from './normalize.ts';
import { messages } from './rules.ts';
import { probeSchema } from './schema-probe.ts';
import type { ContainerProbeRef, PolicyProbe, ProbeSpec } from './types.ts';

/** Whether a block's probe is the container's own (`fromContainer`, ADR 0023). */
export function isContainerProbeRef(probe: PolicyProbe): probe is ContainerProbeRef {
  return Object.hasOwn(probe, 'fromContainer');
}

/** Why a container's declared probe cannot be run; the caller adds the pod and container. */
export type ContainerProbeProblem =
  /** The container declares no probe of that field. */
  | { readonly code: 'probe_missing' }
  /** It declares one outprobe refuses (a `host`, an absurd value, no handler, ...). */
  | { readonly code: 'probe_invalid'; readonly message: string }
  /** It is an exec probe, and exec is not enabled or not allowed for the namespace. */
  | { readonly code: 'exec_not_allowed'; readonly message: string };

export type ContainerProbeResolution = { readonly ok: true; readonly probe: ProbeSpec } | ({ readonly ok: false } & ContainerProbeProblem);

/** Fields a Pod's defaulting turns from 0 into the kubelet's default (kubelet-probes.md §1.1). */
const zeroMeansDefault = ['timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold'] as const;

const cache = new WeakMap<ContainerProbeRef, WeakMap<object, ContainerProbeResolution>>();

/**
 * The probe a `fromContainer` block runs on one pod: the container's declared
 * probe (`declared`, a plain JSON object from the pod spec, which is hostile
 * input), with the fields the policy wrote laid over it, then the kubelet's
 * defaults. It passes the same schema as a probe written in a policy, so a
 * `host`, a bad port or an absurd timing is refused exactly as there, and an
 * exec probe runs only where the policy's own exec probe could. Memoised per
 * (policy probe, declared probe) object: a replan of an unchanged pod gets
 * the same ProbeSpec object back.
 */
export function resolveContainerProbe(ref: ContainerProbeRef, declared: object | undefined, kind: ProbeKind): ContainerProbeResolution {
  if (declared === undefined) return { ok: false, code: 'probe_missing' };
  let byDeclared = cache.get(ref);
  if (byDeclared === undefined) cache.set(ref, (byDeclared = new WeakMap()));
  let out = byDeclared.get(declared);
  if (out === undefined) byDeclared.set(declared, (out = resolve(ref, declared, kind)));
  return out;
}

function resolve(ref: ContainerProbeRef, declared: object, kind: ProbeKind): ContainerProbeResolution {
  const merged: Record<string, unknown> = { ...(declared as Record<string, unknown>), fromContainer: undefined };
  for (const field of zeroMeansDefault) if (merged[field] === 0) merged[field] = undefined;
  // Meaningless on readiness (the API server forbids it there); a liveness probe reused for readiness drops it.
  if (kind === 'readiness') merged['terminationGracePeriodSeconds'] = undefined;
  Object.assign(merged, ref.overrides);
  const parsed = probeSchema.safeParse(merged, { reportInput: true });
  if (!parsed.success) {
    const message = parsed.error.issues.map((i) => formatIssue(fromZodIssue(i))).join('; ');
    return { ok: false, code: 'probe_invalid', message };
  }
  const probe = toProbeSpec(parsed.data);
  if (kind !== 'readiness' && probe.successThreshold !== 1) {
    return { ok: false, code: 'probe_invalid', message: `successThreshold: ${messages.successThresholdOne} for a ${kind} probe (it is ${probe.successThreshold})` };
  }
  if (probe.handler.type === 'exec' && ref.exec?.allowed !== true) {
    return { ok: false, code: 'exec_not_allowed', message: ref.exec?.allowed === false ? ref.exec.message : messages.execDisabled };
  }
  const max = ref.maxTimeoutSeconds;
  return { ok: true, probe: max !== undefined && probe.timeoutSeconds > max ? { ...probe, timeoutSeconds: max } : probe };
}
