/**
 * What the agent writes: the pod's containers' `ready` flags and its Ready /
 * ContainersReady conditions, derived from the pod as read plus the probe
 * verdicts, as one strategic-merge status patch guarded by the pod's
 * resourceVersion — or `null` when the pod already says it.
 */
import type { AgentContainer, AgentPod, Raw, RawCondition } from './pod.ts';
import { stateOf } from './pod.ts';
import { generateContainersReadyCondition, generatePodReadyCondition, lastTransitionTime } from './readiness.ts';
import type { ContainerReadiness, FoldSpec, GeneratedCondition } from './readiness.ts';

/**
 * The agent's verdict for one container instance: `true`/`false`, or
 * `undefined` to keep what the status says (an exec probe it cannot run).
 */
export type ReadyVerdict = (container: AgentContainer, status: Raw) => boolean | undefined;

export interface ConditionChange {
  readonly type: 'Ready' | 'ContainersReady';
  readonly from: string | undefined;
  readonly to: string;
  readonly reason: string;
  readonly message: string;
}

export interface StatusPatch {
  readonly body: Record<string, unknown>;
  readonly changes: readonly ConditionChange[];
  /** Containers whose `ready` flips, as `name=true|false`. */
  readonly containers: readonly string[];
}

export function foldSpec(pod: AgentPod): FoldSpec {
  return {
    generation: pod.generation,
    containers: pod.containers.filter((c) => !c.sidecar).map((c) => c.name),
    restartableInitContainers: pod.containers.filter((c) => c.sidecar).map((c) => c.name),
    readinessGates: pod.readinessGates,
  };
}

/** The statuses with `ready` recomputed; the same array when nothing changes. */
function rewritten(pod: AgentPod, statuses: readonly Raw[] | undefined, sidecar: boolean, verdict: ReadyVerdict): readonly Raw[] | undefined {
  if (statuses === undefined) return undefined;
  const out = statuses.map((s) => {
    const c = pod.containers.find((x) => x.name === s['name'] && x.sidecar === sidecar);
    if (c === undefined) return s;
    const ready = stateOf(s) === 'running' ? verdict(c, s) : false;
    if (ready === undefined || ready === (s['ready'] === true)) return s;
    return { ...s, ready };
  });
  return out.some((s, i) => s !== statuses[i]) ? out : statuses;
}

function readinessOf(statuses: readonly Raw[]): ContainerReadiness[] {
  return statuses.map((s) => ({ name: typeof s['name'] === 'string' ? s['name'] : '', ready: s['ready'] === true }));
}

const same = (g: GeneratedCondition, old: RawCondition | undefined): boolean =>
  old !== undefined && old.status === g.status && (old.reason ?? '') === g.reason && (old.message ?? '') === g.message;

function patchCondition(g: GeneratedCondition, old: RawCondition | undefined, now: number): Record<string, unknown> {
  // null deletes a field a previous writer left (a strategic merge keeps omitted fields).
  return {
    type: g.type, status: g.status, reason: g.reason === '' ? null : g.reason, message: g.message === '' ? null : g.message,
    lastTransitionTime: lastTransitionTime(g.status, old, now), lastProbeTime: null, observedGeneration: g.observedGeneration,
  };
}

/** The patch that makes the pod say what its containers and gates say, or null. */
export function statusPatch(pod: AgentPod, verdict: ReadyVerdict, now: number): StatusPatch | null {
  const containerStatuses = rewritten(pod, pod.containerStatuses, false, verdict);
  const initContainerStatuses = rewritten(pod, pod.initContainerStatuses, true, verdict);
  const all = containerStatuses === undefined && initContainerStatuses === undefined
    ? undefined
    : readinessOf([...(initContainerStatuses ?? []), ...(containerStatuses ?? [])]);
  const spec = foldSpec(pod);
  const generated = [
    generateContainersReadyCondition(spec, all, pod.phase),
    generatePodReadyCondition(spec, pod.conditions, all, pod.phase),
  ];
  const status: Record<string, unknown> = {};
  const changes: ConditionChange[] = [];
  const conditions: Record<string, unknown>[] = [];
  for (const g of generated) {
    const old = pod.conditions.find((c) => c.type === g.type);
    if (same(g, old)) continue;
    conditions.push(patchCondition(g, old, now));
    changes.push({ type: g.type, from: old?.status, to: g.status, reason: g.reason, message: g.message });
  }
  if (conditions.length > 0) status['conditions'] = conditions;
  const flips: string[] = [];
  const note = (next: readonly Raw[] | undefined, before: readonly Raw[] | undefined, field: string): void => {
    if (next === before || next === undefined) return;
    status[field] = next;
    next.forEach((s, i) => { if (s !== before?.[i]) flips.push(`${String(s['name'])}=${String(s['ready'])}`); });
  };
  note(containerStatuses, pod.containerStatuses, 'containerStatuses');
  note(initContainerStatuses, pod.initContainerStatuses, 'initContainerStatuses');
  if (Object.keys(status).length === 0) return null;
  return { body: { metadata: { resourceVersion: pod.resourceVersion }, status }, changes, containers: flips };
}
