import type { ProbePolicy } from '../policy/index.ts';
import type { InjectionView } from './mutate.ts';

/** What the controller's policy cache holds per policy (structurally its PolicyEntry). */
export interface CachedPolicy {
  readonly namespace: string;
  /** Undefined when invalid: an invalid policy injects nothing. */
  readonly policy: ProbePolicy | undefined;
}

export interface CacheViewOptions {
  readonly policies: ReadonlyMap<string, CachedPolicy>;
  readonly namespaceLabels: (namespace: string) => Readonly<Record<string, string>> | undefined;
  /** outprobe's own namespace; kube-system is always excluded too. */
  readonly ownNamespace: string | undefined;
}

/** The webhook's view over the controller's informer caches. */
export function cacheView(o: CacheViewOptions): InjectionView {
  return {
    namespaceLabels: o.namespaceLabels,
    *policies(namespace) {
      for (const e of o.policies.values()) if (e.namespace === namespace && e.policy !== undefined) yield e.policy;
    },
    excluded: new Set(['kube-system', ...(o.ownNamespace === undefined ? [] : [o.ownNamespace])]),
  };
}
