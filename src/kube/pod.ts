import type { RawObject } from './reflector.ts';

/**
 * The compact in-memory projection of a pod: only what targeting, probing,
 * write-back and remediation read. No managedFields, no annotations, no spec
 * beyond containers' ports/env, the readiness gates and hostNetwork. Times are ms.
 */
export interface PodPort {
  readonly name: string | undefined;
  readonly containerPort: number;
}

export interface PodContainer {
  readonly name: string;
  readonly ports: readonly PodPort[];
  /** Literal env values only (what `$(VAR)` expansion in exec probes may use). */
  readonly env: Readonly<Record<string, string>>;
  /** A restartable init container (sidecar). */
  readonly sidecar: boolean;
}

export interface PodContainerStatus {
  readonly name: string;
  readonly containerId: string | undefined;
  readonly restartCount: number;
  readonly state: 'running' | 'waiting' | 'terminated';
  readonly startedAt: number | undefined;
  readonly started: boolean | undefined;
  readonly ready: boolean;
}

export interface PodCondition {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: string | undefined;
  readonly message: string | undefined;
  readonly lastTransitionTime: string | undefined;
}

export interface Pod {
  readonly uid: string;
  readonly namespace: string;
  readonly name: string;
  readonly resourceVersion: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly nodeName: string | undefined;
  /** `spec.hostNetwork`: the pod IP is the node's, so only declared container ports are probed. */
  readonly hostNetwork: boolean;
  readonly phase: 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';
  readonly podIP: string | undefined;
  readonly deletionTimestamp: number | undefined;
  readonly restartPolicy: string;
  readonly terminationGracePeriodSeconds: number;
  readonly readinessGates: readonly string[];
  readonly containers: readonly PodContainer[];
  /**
   * Names of the plain (not restartable) init containers, which may carry no
   * probes; they are not in `containers`.
   * @default undefined (none)
   */
  readonly plainInitContainers?: readonly string[] | undefined;
  readonly containerStatuses: readonly PodContainerStatus[];
  readonly conditions: readonly PodCondition[];
}

interface RawPod {
  readonly metadata?: {
    readonly uid?: string;
    readonly name?: string;
    readonly namespace?: string;
    readonly resourceVersion?: string;
    readonly labels?: Record<string, string>;
    readonly deletionTimestamp?: string;
  };
  readonly spec?: {
    readonly nodeName?: string;
    readonly hostNetwork?: boolean;
    readonly restartPolicy?: string;
    readonly terminationGracePeriodSeconds?: number;
    readonly readinessGates?: readonly { readonly conditionType?: string }[];
    readonly containers?: readonly RawContainer[];
    readonly initContainers?: readonly (RawContainer & { readonly restartPolicy?: string })[];
  };
  readonly status?: {
    readonly phase?: string;
    readonly podIP?: string;
    readonly conditions?: readonly { type?: string; status?: string; reason?: string; message?: string; lastTransitionTime?: string }[];
    readonly containerStatuses?: readonly RawStatus[];
    readonly initContainerStatuses?: readonly RawStatus[];
  };
}

interface RawContainer {
  readonly name?: string;
  readonly ports?: readonly { readonly name?: string; readonly containerPort?: number }[];
  readonly env?: readonly { readonly name?: string; readonly value?: string }[];
}

interface RawStatus {
  readonly name?: string;
  readonly containerID?: string;
  readonly restartCount?: number;
  readonly started?: boolean;
  readonly ready?: boolean;
  readonly state?: { readonly running?: { readonly startedAt?: string }; readonly terminated?: object; readonly waiting?: object };
}

const phases = new Set(['Pending', 'Running', 'Succeeded', 'Failed']);

function time(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

function container(raw: RawContainer, sidecar: boolean): PodContainer {
  // No prototype: an env var named __proto__ is a key like any other (a plain
  // {} would drop it through the __proto__ setter).
  const env = Object.create(null) as Record<string, string>;
  for (const e of raw.env ?? []) if (e.name !== undefined && e.value !== undefined) env[e.name] = e.value;
  return {
    name: raw.name ?? '',
    ports: (raw.ports ?? []).map((p) => ({ name: p.name, containerPort: p.containerPort ?? 0 })),
    env,
    sidecar,
  };
}

function status(raw: RawStatus): PodContainerStatus {
  const state = raw.state?.running !== undefined ? 'running' : raw.state?.terminated !== undefined ? 'terminated' : 'waiting';
  return {
    name: raw.name ?? '',
    containerId: raw.containerID === '' ? undefined : raw.containerID,
    restartCount: raw.restartCount ?? 0,
    state,
    startedAt: time(raw.state?.running?.startedAt),
    started: raw.started,
    ready: raw.ready === true,
  };
}

function condition(c: NonNullable<NonNullable<RawPod['status']>['conditions']>[number]): PodCondition {
  return {
    type: c.type ?? '',
    status: c.status === 'True' || c.status === 'False' ? c.status : 'Unknown',
    reason: c.reason,
    message: c.message,
    lastTransitionTime: c.lastTransitionTime,
  };
}

function specPart(
  spec: NonNullable<RawPod['spec']>,
): Pick<Pod, 'nodeName' | 'hostNetwork' | 'restartPolicy' | 'terminationGracePeriodSeconds' | 'readinessGates' | 'containers' | 'plainInitContainers'> {
  const sidecars = (spec.initContainers ?? []).filter((c) => c.restartPolicy === 'Always');
  const plain = (spec.initContainers ?? []).filter((c) => c.restartPolicy !== 'Always').map((c) => c.name ?? '');
  return {
    nodeName: spec.nodeName,
    hostNetwork: spec.hostNetwork === true,
    restartPolicy: spec.restartPolicy ?? 'Always',
    terminationGracePeriodSeconds: spec.terminationGracePeriodSeconds ?? 30,
    readinessGates: (spec.readinessGates ?? []).map((g) => g.conditionType ?? '').filter((t) => t !== ''),
    containers: [...sidecars.map((c) => container(c, true)), ...(spec.containers ?? []).map((c) => container(c, false))],
    plainInitContainers: plain,
  };
}

function statusPart(st: NonNullable<RawPod['status']>): Pick<Pod, 'phase' | 'podIP' | 'containerStatuses' | 'conditions'> {
  return {
    phase: phases.has(st.phase ?? '') ? (st.phase as Pod['phase']) : 'Unknown',
    podIP: st.podIP === '' ? undefined : st.podIP,
    containerStatuses: [...(st.containerStatuses ?? []), ...(st.initContainerStatuses ?? [])].map(status),
    conditions: (st.conditions ?? []).map(condition),
  };
}

/** Raw API pod (list item or watch object) → Pod. */
export function projectPod(obj: RawObject): Pod {
  const raw = obj as RawPod;
  const m = raw.metadata ?? {};
  return {
    uid: m.uid ?? '',
    namespace: m.namespace ?? '',
    name: m.name ?? '',
    resourceVersion: m.resourceVersion ?? '',
    labels: m.labels ?? {},
    deletionTimestamp: time(m.deletionTimestamp),
    ...specPart(raw.spec ?? {}),
    ...statusPart(raw.status ?? {}),
  };
}
