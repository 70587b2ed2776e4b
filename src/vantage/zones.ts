import type { Clock } from '../kernel/index.ts';
import { isKubeError } from '../kube/index.ts';
import type { KubeClient } from '../kube/index.ts';

/** The well-known label of a Node's zone. */
export const zoneLabel = 'topology.kubernetes.io/zone';

export interface NodeZonesOptions {
  readonly client: KubeClient;
  readonly clock: Clock;
  /** A Node's zone is read again after this long (a relabelled or renamed node). @default 300000 */
  readonly ttlMs?: number;
  /** A failed read is tried again after this long; a refused one (403) after ten times that. @default 30000 */
  readonly retryMs?: number;
  /** A zone became known or changed (batched: once per `batchMs`). */
  readonly onChange?: () => void;
  /** @default 200 */
  readonly batchMs?: number;
  /** The first refusal (403): the zones are then unknown unless Leases declare them (`--zone`). */
  readonly onDenied?: (error: unknown) => void;
}

interface Entry {
  zone: string | null | undefined;
  refreshAt: number;
  inFlight: boolean;
}

/**
 * Node zones, read with `get nodes` (no list or watch: the replica reads only
 * the nodes it needs, its members' and, for zone-spread policies, its pods'),
 * each again after a TTL. Answers from the cache at once and reads in the
 * background; `onChange` tells ownership to assign again.
 */
export class NodeZones {
  readonly #o: NodeZonesOptions;
  readonly #entries = new Map<string, Entry>();
  #denied = false;
  #batch: ReturnType<typeof setTimeout> | undefined;

  constructor(options: NodeZonesOptions) {
    this.#o = options;
  }

  /** True after a read was refused (403) and no read has succeeded since. */
  get denied(): boolean {
    return this.#denied;
  }

  /** The node's zone: a string, `null` when its Node has no zone label, `undefined` when not known (yet). */
  zoneOf(node: string): string | null | undefined {
    const now = this.#o.clock.now();
    let e = this.#entries.get(node);
    if (e === undefined) {
      e = { zone: undefined, refreshAt: now, inFlight: false };
      this.#entries.set(node, e);
      if (this.#entries.size > 10_000) this.#entries.delete(this.#entries.keys().next().value ?? node);
    }
    if (!e.inFlight && now >= e.refreshAt) this.#read(node, e);
    return e.zone;
  }

  #read(node: string, e: Entry): void {
    e.inFlight = true;
    const retryMs = this.#o.retryMs ?? 30_000;
    const settle = (zone: string | null | undefined, againMs: number): void => {
      e.inFlight = false;
      e.refreshAt = this.#o.clock.now() + againMs;
      if (zone === e.zone) return;
      e.zone = zone;
      this.#changed();
    };
    this.#o.client.request<{ metadata?: { labels?: Record<string, string> } }>({ method: 'GET', path: `/api/v1/nodes/${encodeURIComponent(node)}`, signal: AbortSignal.timeout(10_000) }).then(
      (raw) => {
        this.#denied = false;
        const z = raw.metadata?.labels?.[zoneLabel];
        settle(typeof z === 'string' && z !== '' ? z : null, this.#o.ttlMs ?? 300_000);
      },
      (err: unknown) => {
        if (isKubeError(err, 'Forbidden')) {
          if (!this.#denied) this.#o.onDenied?.(err);
          this.#denied = true;
          settle(undefined, retryMs * 10);
        } else if (isKubeError(err, 'NotFound')) {
          // A node renamed or gone: no zone, read again later.
          settle(null, retryMs);
        } else {
          // A blip keeps what was known.
          settle(e.zone, retryMs);
        }
      },
    );
  }

  #changed(): void {
    if (this.#batch !== undefined) return;
    this.#batch = setTimeout(() => {
      this.#batch = undefined;
      this.#o.onChange?.();
    }, this.#o.batchMs ?? 200);
    this.#batch.unref();
  }
}
