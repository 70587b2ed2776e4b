/**
 * The node agent's view of a pod: the raw fields it folds, probes and
 * rewrites, read defensively from the API object (a wrong type is "absent").
 * Container statuses stay raw, because a status patch must send the whole
 * list back (core/v1 containerStatuses has no patch merge key).
 */
import type { RawObject } from '../../../src/kube/index.ts';

export type Raw = Readonly<Record<string, unknown>>;

export interface RawCondition {
  readonly type: string;
  readonly status: string;
  readonly reason?: string;
  readonly message?: string;
  readonly lastTransitionTime?: string;
}

export interface AgentContainer {
  readonly name: string;
  /** A restartable init container (sidecar). */
  readonly sidecar: boolean;
  readonly readinessProbe: Raw | undefined;
  readonly livenessProbe: Raw | undefined;
  readonly startupProbe: Raw | undefined;
}

export interface AgentPod {
  readonly raw: RawObject;
  readonly uid: string;
  readonly namespace: string;
  readonly name: string;
  readonly resourceVersion: string;
  readonly generation: number;
  readonly nodeName: string | undefined;
  readonly deleting: boolean;
  readonly phase: string;
  readonly podIP: string | undefined;
  readonly readinessGates: readonly string[];
  readonly containers: readonly AgentContainer[];
  readonly conditions: readonly RawCondition[];
  /** undefined: the pod has no `containerStatuses` at all (Go's nil). */
  readonly containerStatuses: readonly Raw[] | undefined;
  readonly initContainerStatuses: readonly Raw[] | undefined;
}

const rec = (v: unknown): Raw => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Raw) : {});
const list = (v: unknown): readonly unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const optRec = (v: unknown): Raw | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Raw) : undefined);

function container(v: unknown, sidecar: boolean): AgentContainer {
  const c = rec(v);
  return {
    name: str(c['name']) ?? '',
    sidecar,
    readinessProbe: optRec(c['readinessProbe']),
    livenessProbe: optRec(c['livenessProbe']),
    startupProbe: optRec(c['startupProbe']),
  };
}

function condition(v: unknown): RawCondition {
  const c = rec(v);
  const out: { -readonly [K in keyof RawCondition]: RawCondition[K] } = { type: str(c['type']) ?? '', status: str(c['status']) ?? '' };
  const reason = str(c['reason']);
  const message = str(c['message']);
  const ltt = str(c['lastTransitionTime']);
  if (reason !== undefined) out.reason = reason;
  if (message !== undefined) out.message = message;
  if (ltt !== undefined) out.lastTransitionTime = ltt;
  return out;
}

const statusList = (v: unknown): readonly Raw[] | undefined => (Array.isArray(v) ? v.map(rec) : undefined);

export function projectAgentPod(raw: RawObject): AgentPod {
  const meta = rec(raw['metadata']);
  const spec = rec(raw['spec']);
  const status = rec(raw['status']);
  const sidecars = list(spec['initContainers']).filter((c) => rec(c)['restartPolicy'] === 'Always');
  const generation = meta['generation'];
  return {
    raw,
    uid: str(meta['uid']) ?? '',
    namespace: str(meta['namespace']) ?? '',
    name: str(meta['name']) ?? '',
    resourceVersion: str(meta['resourceVersion']) ?? '',
    generation: typeof generation === 'number' ? generation : 0,
    nodeName: str(spec['nodeName']),
    deleting: meta['deletionTimestamp'] !== undefined && meta['deletionTimestamp'] !== null,
    phase: str(status['phase']) ?? 'Pending',
    podIP: str(status['podIP']),
    readinessGates: list(spec['readinessGates']).map((g) => str(rec(g)['conditionType']) ?? ''),
    containers: [...sidecars.map((c) => container(c, true)), ...list(spec['containers']).map((c) => container(c, false))],
    conditions: list(status['conditions']).map(condition),
    containerStatuses: statusList(status['containerStatuses']),
    initContainerStatuses: statusList(status['initContainerStatuses']),
  };
}

/** The status entry for a container (sidecars live in initContainerStatuses). */
export function statusOf(pod: AgentPod, c: AgentContainer): Raw | undefined {
  const statuses = c.sidecar ? pod.initContainerStatuses : pod.containerStatuses;
  return statuses?.find((s) => s['name'] === c.name);
}

export function stateOf(status: Raw | undefined): 'running' | 'waiting' | 'terminated' {
  const state = rec(status?.['state']);
  if (state['running'] !== undefined) return 'running';
  if (state['terminated'] !== undefined) return 'terminated';
  return 'waiting';
}

export function startedAtOf(status: Raw | undefined): number | undefined {
  const at = str(rec(rec(status?.['state'])['running'])['startedAt']);
  if (at === undefined) return undefined;
  const ms = Date.parse(at);
  return Number.isNaN(ms) ? undefined : ms;
}
