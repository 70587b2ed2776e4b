import type { PodJson } from './models.ts';

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
  /**
   * The probes the container declares, as plain JSON trimmed to the core/v1
   * Probe fields (what a `fromContainer` policy runs, ADR 0023). Hostile
   * input: the policy stage validates it before anything runs.
   * @default undefined (none declared)
   */
  readonly probes?: DeclaredProbes | undefined;
}

/** A container's `readinessProbe`, `livenessProbe` and `startupProbe`, each when declared. */
export interface DeclaredProbes {
  readonly readinessProbe?: DeclaredProbe;
  readonly livenessProbe?: DeclaredProbe;
  readonly startupProbe?: DeclaredProbe;
}

/** A core/v1 Probe as the pod spec has it: known fields only, values not yet checked. */
export type DeclaredProbe = Readonly<Record<string, unknown>>;

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

const phases = new Set(['Pending', 'Running', 'Succeeded', 'Failed']);

/*
 * A pod's spec and status are written by whoever owns the pod (status
 * possibly by the pod itself): every field is read defensively, so a wrong
 * type becomes "absent" instead of an exception. The reflector skips an
 * object whose projection throws anyway; these keep the rest of the pod.
 */
const list = (v: unknown): readonly unknown[] => (Array.isArray(v) ? v : []);
const rec = (v: unknown): Readonly<Record<string, unknown>> => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const bool = (v: unknown): boolean | undefined => (typeof v === 'boolean' ? v : undefined);

/** String values only, in an object without a prototype (no `__proto__` or inherited keys). */
function stringMap(v: unknown): Record<string, string> {
  const out = Object.create(null) as Record<string, string>;
  for (const [k, value] of Object.entries(rec(v))) if (typeof value === 'string') out[k] = value;
  return out;
}

function time(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

/** Copies the named own fields that are present and not null (a null is an absent field in core/v1). */
function pick(v: unknown, keys: readonly string[]): Record<string, unknown> | undefined {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return undefined;
  const out: Record<string, unknown> = {};
  for (const k of keys) if (Object.hasOwn(v, k) && (v as Record<string, unknown>)[k] != null) out[k] = (v as Record<string, unknown>)[k];
  return out;
}

const probeFields = ['initialDelaySeconds', 'timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold', 'terminationGracePeriodSeconds'];
const handlerFields: Readonly<Record<string, readonly string[]>> = {
  exec: ['command'],
  httpGet: ['path', 'port', 'host', 'scheme', 'httpHeaders'],
  tcpSocket: ['port', 'host'],
  grpc: ['port', 'service'],
};

/**
 * One declared probe, trimmed to what outprobe reads (`host` is kept so that
 * it can be refused, never dropped). Header entries keep only name and value.
 */
function declaredProbe(v: unknown): DeclaredProbe | undefined {
  const probe = pick(v, probeFields);
  if (probe === undefined) return undefined;
  for (const [handler, fields] of Object.entries(handlerFields)) {
    const h = pick(rec(v)[handler], fields);
    if (h === undefined) continue;
    const headers = h['httpHeaders'];
    if (Array.isArray(headers)) h['httpHeaders'] = headers.map((x: unknown) => pick(x, ['name', 'value']) ?? x);
    probe[handler] = h;
  }
  return probe;
}

function declaredProbes(raw: Readonly<Record<string, unknown>>): DeclaredProbes | undefined {
  const out: Record<string, DeclaredProbe> = {};
  for (const field of ['readinessProbe', 'livenessProbe', 'startupProbe']) {
    const p = declaredProbe(raw[field]);
    if (p !== undefined) out[field] = p;
  }
  return Object.keys(out).length === 0 ? undefined : out;
}

function container(v: unknown, sidecar: boolean): PodContainer {
  const raw = rec(v);
  const env = Object.create(null) as Record<string, string>;
  for (const e of list(raw['env']).map(rec)) {
    const name = str(e['name']);
    const value = str(e['value']);
    if (name !== undefined && value !== undefined) env[name] = value;
  }
  return {
    name: str(raw['name']) ?? '',
    ports: list(raw['ports']).map(rec).map((p) => ({ name: str(p['name']), containerPort: num(p['containerPort']) ?? 0 })),
    env,
    sidecar,
    probes: declaredProbes(raw),
  };
}

function status(v: unknown): PodContainerStatus {
  const raw = rec(v);
  const st = rec(raw['state']);
  const state = st['running'] !== undefined ? 'running' : st['terminated'] !== undefined ? 'terminated' : 'waiting';
  const containerId = str(raw['containerID']);
  return {
    name: str(raw['name']) ?? '',
    containerId: containerId === '' ? undefined : containerId,
    restartCount: num(raw['restartCount']) ?? 0,
    state,
    startedAt: time(rec(st['running'])['startedAt']),
    started: bool(raw['started']),
    ready: raw['ready'] === true,
  };
}

function condition(v: unknown): PodCondition {
  const c = rec(v);
  const st = c['status'];
  return {
    type: str(c['type']) ?? '',
    status: st === 'True' || st === 'False' ? st : 'Unknown',
    reason: str(c['reason']),
    message: str(c['message']),
    lastTransitionTime: str(c['lastTransitionTime']),
  };
}

function specPart(
  spec: Readonly<Record<string, unknown>>,
): Pick<Pod, 'nodeName' | 'hostNetwork' | 'restartPolicy' | 'terminationGracePeriodSeconds' | 'readinessGates' | 'containers' | 'plainInitContainers'> {
  const inits = list(spec['initContainers']);
  const sidecars = inits.filter((c) => rec(c)['restartPolicy'] === 'Always');
  const plain = inits.filter((c) => rec(c)['restartPolicy'] !== 'Always').map((c) => str(rec(c)['name']) ?? '');
  return {
    nodeName: str(spec['nodeName']),
    hostNetwork: spec['hostNetwork'] === true,
    restartPolicy: str(spec['restartPolicy']) ?? 'Always',
    terminationGracePeriodSeconds: num(spec['terminationGracePeriodSeconds']) ?? 30,
    readinessGates: list(spec['readinessGates']).map((g) => str(rec(g)['conditionType']) ?? '').filter((t) => t !== ''),
    containers: [...sidecars.map((c) => container(c, true)), ...list(spec['containers']).map((c) => container(c, false))],
    plainInitContainers: plain,
  };
}

function statusPart(st: Readonly<Record<string, unknown>>): Pick<Pod, 'phase' | 'podIP' | 'containerStatuses' | 'conditions'> {
  const phase = str(st['phase']) ?? '';
  const podIP = str(st['podIP']);
  return {
    phase: phases.has(phase) ? (phase as Pod['phase']) : 'Unknown',
    podIP: podIP === '' ? undefined : podIP,
    containerStatuses: [...list(st['containerStatuses']), ...list(st['initContainerStatuses'])].map(status),
    conditions: list(st['conditions']).map(condition),
  };
}

/** API pod (list item or watch object) → Pod. */
export function projectPod(obj: PodJson): Pod {
  const raw = rec(obj);
  const m = rec(raw['metadata']);
  return {
    uid: str(m['uid']) ?? '',
    namespace: str(m['namespace']) ?? '',
    name: str(m['name']) ?? '',
    resourceVersion: str(m['resourceVersion']) ?? '',
    labels: stringMap(m['labels']),
    deletionTimestamp: time(m['deletionTimestamp']),
    ...specPart(rec(raw['spec'])),
    ...statusPart(rec(raw['status'])),
  };
}
