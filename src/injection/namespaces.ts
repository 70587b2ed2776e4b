import type { Clock, Random } from '../kernel/index.ts';
import { Reflector } from '../kube/index.ts';
import type { KubeClient, RawObject, ReflectorSignal } from '../kube/index.ts';

type Labels = Readonly<Record<string, string>>;

function labelsOf(raw: RawObject): Labels {
  const labels = (raw.metadata as { labels?: unknown } | undefined)?.labels;
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  if (typeof labels !== 'object' || labels === null) return out;
  for (const [k, v] of Object.entries(labels)) if (typeof v === 'string') out[k] = v;
  return out;
}

export interface NamespaceLabelsOptions {
  readonly client: KubeClient;
  readonly clock: Clock;
  readonly random: Random;
  /** Only these namespaces (one list+watch each, by metadata.name); empty: all. */
  readonly namespaces: readonly string[];
  readonly onSignal?: (signal: ReflectorSignal) => void;
}

/**
 * Namespace labels from an informer cache, for the webhook's
 * `outprobe.io/inject-readiness-gates` check; only labels are kept.
 */
export class NamespaceLabels {
  readonly #reflectors: readonly Reflector<Labels>[];

  constructor(o: NamespaceLabelsOptions) {
    const base = { client: o.client, clock: o.clock, random: o.random, path: '/api/v1/namespaces', project: labelsOf, onEvent: () => undefined, ...(o.onSignal === undefined ? {} : { onSignal: o.onSignal }) };
    const names = [...new Set(o.namespaces)];
    this.#reflectors = names.length === 0 ? [new Reflector<Labels>(base)] : names.map((n) => new Reflector<Labels>({ ...base, fieldSelector: `metadata.name=${n}` }));
  }

  /** The namespace's labels, or undefined when the cache does not hold it. */
  labels(namespace: string): Labels | undefined {
    for (const r of this.#reflectors) {
      const l = r.store.get(namespace);
      if (l !== undefined) return l;
    }
    return undefined;
  }

  get synced(): boolean {
    return this.#reflectors.every((r) => r.synced);
  }

  async run(signal: AbortSignal): Promise<void> {
    await Promise.all(this.#reflectors.map((r) => r.run(signal)));
  }
}
