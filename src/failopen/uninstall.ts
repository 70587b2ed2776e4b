import { ownTypePrefix, releaseCondition } from './release.ts';

/** The parts of a pod (as the API server returns it) the uninstall release reads. */
export interface PodJsonView {
  readonly metadata?: { readonly name?: string; readonly namespace?: string; readonly uid?: string; readonly resourceVersion?: string };
  readonly spec?: { readonly readinessGates?: readonly { readonly conditionType?: string }[] };
  readonly status?: { readonly phase?: string; readonly conditions?: readonly { readonly type?: string; readonly status?: string; readonly reason?: string }[] };
}

export type JsonPatchOp = { readonly op: 'test' | 'replace' | 'add'; readonly path: string; readonly value: unknown };

/** What releasing one pod's gates at uninstall takes: the JSON patch, and the gates left to another writer. */
export interface UninstallPlan {
  /** The gates to write True (reason GateReleased). */
  readonly released: readonly string[];
  /** Listed gates another writer set (never touched). */
  readonly foreign: readonly string[];
  /** A JSON patch of pods/status, guarded by the pod's uid and resourceVersion: it applies only to the pod as read. Null: nothing to write. */
  readonly patch: readonly JsonPatchOp[] | null;
}

/**
 * The uninstall release of one pod (`node src/release-gates.ts`, the chart's
 * pre-delete hook): every gate the pod lists whose condition outprobe wrote
 * (`ownReasons`) and is not True, and every `outprobe.io/` gate not written
 * yet, becomes True with reason GateReleased. The patch tests the pod's uid
 * and resourceVersion, so a condition another writer set after the read is
 * never overwritten: the write fails and the caller reads the pod again.
 */
export function planUninstall(pod: PodJsonView, ownReasons: ReadonlySet<string>, at: string): UninstallPlan {
  const gates = gatesOf(pod);
  if (gates.length === 0) return { released: [], foreign: [], patch: null };
  const conditions = pod.status?.conditions;
  const released: string[] = [];
  const foreign: string[] = [];
  const ops: JsonPatchOp[] = [];
  for (const type of gates) {
    const index = conditions?.findIndex((c) => c.type === type) ?? -1;
    const verdict = gateVerdict(type, index < 0 ? undefined : conditions?.[index], ownReasons);
    if (verdict === 'foreign') foreign.push(type);
    if (verdict !== 'release') continue;
    released.push(type);
    ops.push(opFor(releaseCondition(type, 'uninstall', at), index, conditions === undefined && !ops.some((o) => o.op === 'add')));
  }
  return { released, foreign, patch: ops.length === 0 ? null : [...guardOf(pod), ...ops] };
}

/** The gates a running pod lists (none for a finished one). */
function gatesOf(pod: PodJsonView): string[] {
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return [];
  return (pod.spec?.readinessGates ?? []).flatMap((g) => (g.conditionType === undefined ? [] : [g.conditionType]));
}

/** Replace the condition at `index`; or add it, creating the list when the pod has none yet. */
function opFor(value: unknown, index: number, createList: boolean): JsonPatchOp {
  if (index >= 0) return { op: 'replace', path: `/status/conditions/${index}`, value };
  return createList ? { op: 'add', path: '/status/conditions', value: [value] } : { op: 'add', path: '/status/conditions/-', value };
}

/** The patch applies only to the pod as read: same uid, same resourceVersion. */
function guardOf(pod: PodJsonView): JsonPatchOp[] {
  return [
    { op: 'test', path: '/metadata/uid', value: pod.metadata?.uid ?? '' },
    { op: 'test', path: '/metadata/resourceVersion', value: pod.metadata?.resourceVersion ?? '' },
  ];
}

/** One listed gate: released (outprobe's and not True, or an outprobe.io/ one not written yet), another writer's, or left as it is. */
function gateVerdict(type: string, c: { readonly status?: string; readonly reason?: string } | undefined, ownReasons: ReadonlySet<string>): 'release' | 'foreign' | 'keep' {
  if (c === undefined) return type.startsWith(ownTypePrefix) ? 'release' : 'keep';
  if (!ownReasons.has(c.reason ?? '')) return 'foreign';
  return c.status === 'True' ? 'keep' : 'release';
}
