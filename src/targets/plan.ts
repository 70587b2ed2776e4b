import type { ProbeKind } from '../kernel/index.ts';
import { podKey as podKeyOf } from '../kube/index.ts';
import type { Pod, PodContainer } from '../kube/index.ts';
import { isContainerProbeRef, resolveContainerProbe } from '../policy/index.ts';
import type { PolicyProbe, ProbePolicy, ProbeSpec } from '../policy/index.ts';
import { matchesSelector } from './selector.ts';

/** One probe target: the kubelet's (pod UID, container, kind) worker, per policy. */
export interface TargetPlan {
  /** `policyKey/podUid/container/kind` (results' targetKeyString). */
  readonly key: string;
  /** `namespace/name` of the policy. */
  readonly policy: string;
  readonly podKey: string;
  readonly podUid: string;
  readonly kind: ProbeKind;
  readonly container: string;
  readonly probe: ProbeSpec;
  /** Readiness only: the condition type the gate writer owns. */
  readonly conditionType: string | undefined;
}

/**
 * Why a probe block plans no target on a pod: its container is missing (or
 * is a plain init container), or, for a `fromContainer` probe (ADR 0023),
 * the container declares no such probe, declares one outprobe refuses, or an
 * exec probe where exec is not allowed.
 */
export type PlanIssueCode = 'container_missing' | 'probe_missing' | 'probe_invalid' | 'exec_not_allowed';

export interface PlanIssue {
  readonly policy: string;
  readonly podKey: string;
  readonly code: PlanIssueCode;
  readonly message: string;
}

export function policyKey(policy: ProbePolicy): string {
  return `${policy.metadata.namespace ?? ''}/${policy.metadata.name}`;
}

/** Whether a policy selects a pod: same namespace and the label selector matches. */
export function selects(policy: ProbePolicy, pod: Pod): boolean {
  return (policy.metadata.namespace ?? '') === pod.namespace && matchesSelector(pod.labels, policy.spec.selector);
}

/** `null` → the pod's first regular container (not a sidecar). */
function containerFor(pod: Pod, name: string | null): PodContainer | undefined {
  return name === null ? pod.containers.find((c) => !c.sidecar) : pod.containers.find((c) => c.name === name);
}

/**
 * Why a probe block has no container to target. A plain init container gets
 * the API server's words for a probe on one (pkg/apis/core/validation).
 */
function missingContainer(kind: ProbeKind, name: string | null, pod: Pod, podKey: string): string {
  const quoted = JSON.stringify(name ?? '(first)');
  if (name !== null && (pod.plainInitContainers ?? []).includes(name)) {
    return `${kind} probe: container ${quoted} of pod ${podKey}: may not be set for init containers without restartPolicy=Always`;
  }
  return `${kind} probe: container ${quoted} not found in pod ${podKey}`;
}

/**
 * The targets a policy gives a pod: one per probe block (readiness, liveness,
 * startup) whose container exists in the pod. A named container the pod
 * lacks is reported as an issue, not a target.
 */
export function planTargets(policy: ProbePolicy, pod: Pod): { readonly targets: readonly TargetPlan[]; readonly issues: readonly PlanIssue[] } {
  const pk = policyKey(policy);
  const podKey = podKeyOf(pod);
  const targets: TargetPlan[] = [];
  const issues: PlanIssue[] = [];
  const blocks = [
    ['startup', policy.spec.startup, undefined],
    ['liveness', policy.spec.liveness, undefined],
    ['readiness', policy.spec.readiness, policy.spec.readiness?.conditionType],
  ] as const;
  for (const [kind, block, conditionType] of blocks) {
    if (block === null) continue;
    const container = containerFor(pod, block.container);
    if (container === undefined) {
      issues.push({ policy: pk, podKey, code: 'container_missing', message: missingContainer(kind, block.container, pod, podKey) });
      continue;
    }
    const probe = probeFor(block.probe, container, kind);
    if (!probe.ok) {
      issues.push({ policy: pk, podKey, code: probe.code, message: `${kind} probe: container ${JSON.stringify(container.name)} of pod ${podKey}: ${probe.message}` });
      continue;
    }
    targets.push({
      key: `${pk}/${pod.uid}/${container.name}/${kind}`,
      policy: pk,
      podKey,
      podUid: pod.uid,
      kind,
      container: container.name,
      probe: probe.probe,
      conditionType,
    });
  }
  return { targets, issues };
}

/** The probe a block runs in this container: its own, or the container's declared one (ADR 0023). */
function probeFor(
  probe: PolicyProbe,
  container: PodContainer,
  kind: ProbeKind,
): { readonly ok: true; readonly probe: ProbeSpec } | { readonly ok: false; readonly code: PlanIssueCode; readonly message: string } {
  if (!isContainerProbeRef(probe)) return { ok: true, probe };
  const field = probe.fromContainer;
  const r = resolveContainerProbe(probe, container.probes?.[field], kind);
  if (r.ok) return r;
  switch (r.code) {
    case 'probe_missing':
      return { ok: false, code: r.code, message: `declares no ${field} (fromContainer: ${field}); not probed` };
    case 'probe_invalid':
      return { ok: false, code: r.code, message: `its ${field} cannot be run from outside: ${r.message}` };
    case 'exec_not_allowed':
      return { ok: false, code: r.code, message: `its ${field} is an exec probe: ${r.message}` };
  }
}

const probeKeys = new WeakMap<ProbeSpec, string>();

/**
 * A comparable key of a planned probe, computed once per probe object: every
 * target a policy object plans shares its blocks' probe objects, so a replan
 * of thousands of pods compares strings instead of serialising each probe.
 */
export function probeKeyOf(probe: ProbeSpec): string {
  let key = probeKeys.get(probe);
  if (key === undefined) probeKeys.set(probe, (key = JSON.stringify(probe)));
  return key;
}

/** Whether two plans of one target probe the same way and write the same condition (else the target is replanned). */
export function samePlannedProbe(a: TargetPlan, b: TargetPlan): boolean {
  return a.conditionType === b.conditionType && (a.probe === b.probe || probeKeyOf(a.probe) === probeKeyOf(b.probe));
}
