import { InternCache, StringInterner } from './intern.ts';
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
  /**
   * `namespace/name`, one string per pod kept across its versions, so that
   * every map keyed by the pod shares it (issue 17). Projections always set
   * it; hand-built pods may leave it out (`podKey` computes it then).
   * @default `${namespace}/${name}`
   */
  readonly key?: string;
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

/**
 * The same text as one flat string. A key built by concatenation is a tree
 * of string pieces that a Map keeps whole (its flattened text besides); the
 * text of an object's own key is flat and shared (issue 17). For keys kept
 * as long as their pod: each call costs an allocation.
 */
export function flatKey(s: string): string {
  return Object.keys({ [s]: 0 })[0] ?? s;
}

/** The pod's `namespace/name`. */
export function podKey(pod: Pick<Pod, 'key' | 'namespace' | 'name'>): string {
  return pod.key ?? `${pod.namespace}/${pod.name}`;
}

const phases = new Set(['Pending', 'Running', 'Succeeded', 'Failed']);

/*
 * A pod's spec and status are written by whoever owns the pod (status
 * possibly by the pod itself): every field is read defensively, so a wrong
 * type becomes "absent" instead of an exception. The reflector skips an
 * object whose projection throws anyway; these keep the rest of the pod.
 *
 * Projections share what repeats (ADR 0030): short strings that recur across
 * pods (namespaces, names of containers, ports and label keys, condition
 * texts) are interned; label sets, the spec part (containers, gates) and
 * conditions are shared by content between pods; what is unique to a pod
 * (its UID, IP, container IDs and statuses) is taken from its previous
 * projection when unchanged. Everything shared is read-only and bounded
 * (`InternCache`): a projection is the same value as without sharing.
 */
const strings = new StringInterner({ maxEntries: 32_768, maxLength: 256 });
const labelSets = new InternCache<Readonly<Record<string, string>>>(8192);
const specParts = new InternCache<SpecPart>(4096);
const conditionCache = new InternCache<PodCondition>(16_384);
/** Entries the projection's caches hold now (each is bounded; for tests and diagnostics). */
export function projectionCacheSizes(): { readonly strings: number; readonly labelSets: number; readonly specParts: number; readonly conditions: number } {
  return { strings: strings.size, labelSets: labelSets.size, specParts: specParts.size, conditions: conditionCache.size };
}
/** Spec parts whose canonical text is longer are not shared (bounds the cache's keys). */
const maxSpecKeyChars = 16_384;
/** Conditions whose canonical text is longer (a long message) are not shared. */
const maxConditionKeyChars = 1024;

const list = (v: unknown): readonly unknown[] => (Array.isArray(v) ? v : []);
const rec = (v: unknown): Readonly<Record<string, unknown>> => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' ? strings.intern(v) : undefined);
/** A string unique to the pod (not interned), the previous projection's copy when it is equal. */
const own = (v: unknown, previous: string | undefined): string | undefined => (typeof v !== 'string' ? undefined : v === previous ? previous : v);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const bool = (v: unknown): boolean | undefined => (typeof v === 'boolean' ? v : undefined);

const emptyStrings: readonly string[] = Object.freeze([]);
const emptyPorts: readonly PodPort[] = Object.freeze([]);
const emptyEnv: Readonly<Record<string, string>> = Object.freeze(Object.create(null) as Record<string, string>);
const emptyLabels: Readonly<Record<string, string>> = emptyEnv;

/** String values only, in an object without a prototype (no `__proto__` or inherited keys); one shared, frozen object per label set. */
function labelMap(v: unknown): Readonly<Record<string, string>> {
  const entries: [string, string][] = [];
  for (const [k, value] of Object.entries(rec(v))) if (typeof value === 'string') entries.push([k, value]);
  if (entries.length === 0) return emptyLabels;
  entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const key = JSON.stringify(entries);
  const out = Object.create(null) as Record<string, string>;
  for (const [k, value] of entries) out[strings.intern(k)] = strings.intern(value);
  return labelSets.intern(key, Object.freeze(out));
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
  let env: Record<string, string> | undefined;
  for (const e of list(raw['env']).map(rec)) {
    const name = str(e['name']);
    const value = str(e['value']);
    if (name === undefined || value === undefined) continue;
    env ??= Object.create(null) as Record<string, string>;
    env[name] = value;
  }
  const ports = list(raw['ports']).map(rec).map((p) => ({ name: str(p['name']), containerPort: num(p['containerPort']) ?? 0 }));
  return {
    name: str(raw['name']) ?? '',
    ports: ports.length === 0 ? emptyPorts : ports,
    env: env ?? emptyEnv,
    sidecar,
    probes: declaredProbes(raw),
  };
}

function status(v: unknown, previous: PodContainerStatus | undefined): PodContainerStatus {
  const raw = rec(v);
  const st = rec(raw['state']);
  const state = st['running'] !== undefined ? 'running' : st['terminated'] !== undefined ? 'terminated' : 'waiting';
  const containerId = own(raw['containerID'], previous?.containerId);
  const next: PodContainerStatus = {
    name: str(raw['name']) ?? '',
    containerId: containerId === '' ? undefined : containerId,
    restartCount: num(raw['restartCount']) ?? 0,
    state,
    startedAt: time(rec(st['running'])['startedAt']),
    started: bool(raw['started']),
    ready: raw['ready'] === true,
  };
  return previous !== undefined && sameStatus(previous, next) ? previous : next;
}

function sameStatus(a: PodContainerStatus, b: PodContainerStatus): boolean {
  return a.name === b.name && a.containerId === b.containerId && a.restartCount === b.restartCount && a.state === b.state && a.startedAt === b.startedAt && a.started === b.started && a.ready === b.ready;
}

function condition(v: unknown): PodCondition {
  const c = rec(v);
  const st = c['status'];
  const next: PodCondition = {
    type: str(c['type']) ?? '',
    status: st === 'True' || st === 'False' ? st : 'Unknown',
    reason: str(c['reason']),
    message: str(c['message']),
    lastTransitionTime: str(c['lastTransitionTime']),
  };
  const key = JSON.stringify([next.type, next.status, next.reason, next.message, next.lastTransitionTime]);
  return key.length > maxConditionKeyChars ? next : conditionCache.intern(key, next);
}

/** What pods of one template have in common (the node apart). */
type SpecPart = Pick<Pod, 'hostNetwork' | 'restartPolicy' | 'terminationGracePeriodSeconds' | 'readinessGates' | 'containers' | 'plainInitContainers'>;

function specPart(spec: Readonly<Record<string, unknown>>): SpecPart {
  const inits = list(spec['initContainers']);
  const sidecars = inits.filter((c) => rec(c)['restartPolicy'] === 'Always');
  const plain = inits.filter((c) => rec(c)['restartPolicy'] !== 'Always').map((c) => str(rec(c)['name']) ?? '');
  const gates = list(spec['readinessGates']).map((g) => str(rec(g)['conditionType']) ?? '').filter((t) => t !== '');
  const part: SpecPart = {
    hostNetwork: spec['hostNetwork'] === true,
    restartPolicy: str(spec['restartPolicy']) ?? 'Always',
    terminationGracePeriodSeconds: num(spec['terminationGracePeriodSeconds']) ?? 30,
    readinessGates: gates.length === 0 ? emptyStrings : gates,
    containers: [...sidecars.map((c) => container(c, true)), ...list(spec['containers']).map((c) => container(c, false))],
    plainInitContainers: plain.length === 0 ? undefined : plain,
  };
  const key = JSON.stringify(part);
  return key.length > maxSpecKeyChars ? part : specParts.intern(key, part);
}

type StatusPart = Pick<Pod, 'phase' | 'podIP' | 'containerStatuses' | 'conditions'>;

function statusPart(st: Readonly<Record<string, unknown>>, previous: Pod | undefined): StatusPart {
  const phase = str(st['phase']) ?? '';
  const podIP = own(st['podIP'], previous?.podIP);
  const raws = [...list(st['containerStatuses']), ...list(st['initContainerStatuses'])];
  const statuses = raws.map((s, i) => status(s, previous?.containerStatuses[i]));
  const conditions = list(st['conditions']).map(condition);
  return {
    phase: phases.has(phase) ? (phase as Pod['phase']) : 'Unknown',
    podIP: podIP === '' ? undefined : podIP,
    containerStatuses: previous !== undefined && sameItems(previous.containerStatuses, statuses) ? previous.containerStatuses : statuses,
    conditions: previous !== undefined && sameItems(previous.conditions, conditions) ? previous.conditions : conditions,
  };
}

/** The same objects in the same order. */
function sameItems<T>(a: readonly T[], b: readonly T[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * API pod (list item or watch object) → Pod. `previous`, the projection of
 * an earlier version of the same pod, lends the strings and objects that did
 * not change (a different pod's is ignored).
 */
export function projectPod(obj: PodJson, previous?: Pod): Pod {
  const raw = rec(obj);
  const m = rec(raw['metadata']);
  const namespace = str(m['namespace']) ?? '';
  const name = own(m['name'], previous?.name) ?? '';
  const uid = own(m['uid'], previous?.uid) ?? '';
  // Another pod's projection (a different namespace or name) lends nothing.
  const prev = previous !== undefined && previous.namespace === namespace && previous.name === name ? previous : undefined;
  return {
    key: prev?.key ?? flatKey(`${namespace}/${name}`),
    uid,
    namespace,
    name,
    resourceVersion: typeof m['resourceVersion'] === 'string' ? m['resourceVersion'] : '',
    labels: labelMap(m['labels']),
    deletionTimestamp: time(m['deletionTimestamp']),
    nodeName: str(rec(raw['spec'])['nodeName']),
    ...specPart(rec(raw['spec'])),
    ...statusPart(rec(raw['status']), prev),
  };
}
