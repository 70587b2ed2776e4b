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
  const phase = pod.status?.phase;
  const gates = (pod.spec?.readinessGates ?? []).flatMap((g) => (g.conditionType === undefined ? [] : [g.conditionType]));
  if (phase === 'Succeeded' || phase === 'Failed' || gates.length === 0) return { released: [], foreign: [], patch: null };
  const conditions = pod.status?.conditions;
  const released: string[] = [];
  const foreign: string[] = [];
  const ops: JsonPatchOp[] = [];
  let appended = conditions?.length ?? 0;
  for (const type of gates) {
    const at0 = conditions?.findIndex((c) => c.type === type) ?? -1;
    const c = at0 >= 0 ? conditions?.[at0] : undefined;
    const value = releaseCondition(type, 'uninstall', at);
    if (c === undefined) {
      if (!type.startsWith(ownTypePrefix)) continue;
      released.push(type);
      ops.push(conditions === undefined && appended === 0 && ops.length === 0 ? { op: 'add', path: '/status/conditions', value: [value] } : { op: 'add', path: '/status/conditions/-', value });
      appended++;
      continue;
    }
    if (!ownReasons.has(c.reason ?? '')) {
      foreign.push(type);
      continue;
    }
    if (c.status === 'True') continue;
    released.push(type);
    ops.push({ op: 'replace', path: `/status/conditions/${at0}`, value });
  }
  if (ops.length === 0) return { released, foreign, patch: null };
  const guard: JsonPatchOp[] = [
    { op: 'test', path: '/metadata/uid', value: pod.metadata?.uid ?? '' },
    { op: 'test', path: '/metadata/resourceVersion', value: pod.metadata?.resourceVersion ?? '' },
  ];
  return { released, foreign, patch: [...guard, ...ops] };
}
