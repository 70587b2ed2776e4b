import type { ProbePolicy } from '../policy/index.ts';
import { matchesSelector } from '../targets/index.ts';

/** The namespace label that turns injection on for every Enforce-mode policy there (ADR 0021). */
export const injectLabel = 'outprobe.io/inject-readiness-gates';
export const injectLabelValue = 'enabled';

/** What the webhook reads, all from informer caches: never an API call per request. */
export interface InjectionView {
  /** The namespace's labels; `undefined` when the cache does not (yet) hold it: treated as unlabelled. */
  namespaceLabels(namespace: string): Readonly<Record<string, string>> | undefined;
  /** The valid policies of one namespace. */
  policies(namespace: string): Iterable<ProbePolicy>;
  /** Never injected, whatever labels or policies say: kube-system and outprobe's own namespace. */
  readonly excluded: ReadonlySet<string>;
}

/** The part of a pod being created that the decision needs. */
export interface PodShape {
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
  /** Condition types the pod already lists in spec.readinessGates. */
  readonly gates: readonly string[];
  /** Whether spec.readinessGates exists as a list (appended to) or not (created). */
  readonly hasGateList: boolean;
}

export type JsonPatchOp = { readonly op: 'add'; readonly path: string; readonly value: unknown };

/** Why nothing was injected, for metrics and debug logs (bounded values). */
export type SkipReason = 'excluded_namespace' | 'no_policy' | 'already_gated';

export type InjectionDecision =
  | { readonly kind: 'inject'; readonly gates: readonly string[]; readonly patch: readonly JsonPatchOp[] }
  | { readonly kind: 'skip'; readonly reason: SkipReason };

function labelValue(labels: Readonly<Record<string, string>> | undefined, key: string): string | undefined {
  return labels !== undefined && Object.hasOwn(labels, key) ? labels[key] : undefined;
}

/**
 * The gates a new pod should list: the conditionType of every Enforce-mode
 * policy with a readiness probe that selects it, where the namespace is
 * labelled for injection or the policy sets readiness.injectGate. Sorted and
 * without duplicates, so the patch is the same whatever order the cache holds.
 */
export function wantedGates(pod: Pick<PodShape, 'namespace' | 'labels'>, view: InjectionView): string[] {
  const nsEnabled = labelValue(view.namespaceLabels(pod.namespace), injectLabel) === injectLabelValue;
  const out = new Set<string>();
  for (const p of view.policies(pod.namespace)) {
    const r = p.spec.readiness;
    if (r === null || p.spec.mode !== 'Enforce') continue;
    if (!nsEnabled && r.injectGate !== true) continue;
    if (matchesSelector(pod.labels, p.spec.selector)) out.add(r.conditionType);
  }
  return [...out].sort();
}

/** JSONPatch that appends `add` to spec.readinessGates, creating the list when absent. */
export function gatePatch(hasGateList: boolean, add: readonly string[]): JsonPatchOp[] {
  if (add.length === 0) return [];
  if (!hasGateList) return [{ op: 'add', path: '/spec/readinessGates', value: add.map((conditionType) => ({ conditionType })) }];
  return add.map((conditionType) => ({ op: 'add', path: '/spec/readinessGates/-', value: { conditionType } }));
}

/** Idempotent: a gate the pod already lists is never added again. */
export function decideInjection(pod: PodShape, view: InjectionView): InjectionDecision {
  if (view.excluded.has(pod.namespace)) return { kind: 'skip', reason: 'excluded_namespace' };
  const wanted = wantedGates(pod, view);
  if (wanted.length === 0) return { kind: 'skip', reason: 'no_policy' };
  const have = new Set(pod.gates);
  const add = wanted.filter((g) => !have.has(g));
  if (add.length === 0) return { kind: 'skip', reason: 'already_gated' };
  return { kind: 'inject', gates: add, patch: gatePatch(pod.hasGateList, add) };
}
