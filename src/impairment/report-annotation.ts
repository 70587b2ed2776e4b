/**
 * What a replica publishes about itself on its shard Lease, for its peers'
 * impairment decisions: the address of its health listener, how many of its
 * targets fail, and which peers it reached recently. One compact JSON
 * annotation, bounded: at most `maxReached` identities, each cut to 253
 * characters (a Lease's annotations may total 256 KiB; this stays under 20 KiB).
 */
export const maxReached = 64;

export interface PeerReport {
  /** host:port of the replica's /healthz (IPv6 in brackets); undefined when it advertises none. */
  readonly address: string | undefined;
  /** Its owned targets whose committed result is failure. */
  readonly failing: number;
  /** Its owned targets. */
  readonly targets: number;
  /** Identities of the peers it reached recently, sorted. */
  readonly reached: readonly string[];
}

export function encodeReport(r: PeerReport): string {
  const reached = [...new Set(r.reached.map((id) => id.slice(0, 253)))].sort().slice(0, maxReached);
  return JSON.stringify({ ...(r.address === undefined ? {} : { a: r.address }), f: r.failing, t: r.targets, r: reached });
}

const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.floor(v) : 0);

/** Undefined when absent or malformed (a replica of another version publishes nothing usable). */
export function decodeReport(text: string | undefined): PeerReport | undefined {
  if (text === undefined) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined;
  const o = raw as Record<string, unknown>;
  const a = Object.hasOwn(o, 'a') ? o['a'] : undefined;
  const r = Object.hasOwn(o, 'r') ? o['r'] : undefined;
  return {
    address: typeof a === 'string' && a !== '' && a.length <= 300 ? a : undefined,
    failing: count(Object.hasOwn(o, 'f') ? o['f'] : 0),
    targets: count(Object.hasOwn(o, 't') ? o['t'] : 0),
    reached: Array.isArray(r) ? r.filter((x): x is string => typeof x === 'string').slice(0, maxReached) : [],
  };
}
