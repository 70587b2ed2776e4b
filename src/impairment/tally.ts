import type { NamespaceTally } from './decide.ts';

/** What the impairment decision needs of a replica's owned targets. */
export interface LocalTally {
  readonly failing: number;
  readonly targets: number;
  /** Per namespace (ADR 0055). */
  readonly byNamespace: readonly NamespaceTally[];
}

/** Counts owned targets, and those whose committed result is failure, in total and per namespace. */
export function tallyTargets(targets: Iterable<{ readonly namespace: string; readonly failing: boolean }>): LocalTally {
  const per = new Map<string, { failing: number; targets: number }>();
  let failing = 0;
  let total = 0;
  for (const t of targets) {
    total++;
    if (t.failing) failing++;
    let n = per.get(t.namespace);
    if (n === undefined) per.set(t.namespace, (n = { failing: 0, targets: 0 }));
    n.targets++;
    if (t.failing) n.failing++;
  }
  return { failing, targets: total, byNamespace: [...per.values()] };
}
