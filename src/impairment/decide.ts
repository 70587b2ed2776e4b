import type { PeerReport } from './report-annotation.ts';
import type { ReachTable } from './reach.ts';

/** Thresholds of the impairment decision (flags; defaults documented in ADR 0017). */
export interface ImpairmentThresholds {
  /** Impaired when no peer answered for this long while the peers reach each other. @default 3000 */
  readonly unreachableAfterMs: number;
  /** Impaired when at least this share of its targets fails… @default 0.5 */
  readonly failingShare: number;
  /** …and that share is at least this far above the median share of its peers. @default 0.3 */
  readonly failingMargin: number;
  /** Shares are compared only between replicas owning at least this many targets. @default 10 */
  readonly minTargets: number;
  /** An impaired replica rejoins after reaching a peer (or having none) this long without a break. @default 10000 */
  readonly recoverAfterMs: number;
  /**
   * The failing share must have stayed at or above `failingShare` this long,
   * and it is compared only with peer reports published since it got there
   * (ADR 0034). @default 10000
   */
  readonly failingSustainMs: number;
  /**
   * …and its failures must span at least this many namespaces (tenants), in
   * each of which at least `failingShare` of its targets fail, and at least
   * `failingShare` of the namespaces it probes (ADR 0055): a tenant that
   * fails one replica's source address in its own namespaces cannot make it
   * stand down. @default 3
   */
  readonly minNamespaces: number;
}

export const defaultThresholds: ImpairmentThresholds = { unreachableAfterMs: 3000, failingShare: 0.5, failingMargin: 0.3, minTargets: 10, recoverAfterMs: 10_000, failingSustainMs: 10_000, minNamespaces: 3 };

/** A replica's owned targets in one namespace: how many, how many fail. */
export interface NamespaceTally {
  readonly failing: number;
  readonly targets: number;
}

/** A live peer as its Lease shows it. */
export interface PeerView {
  readonly identity: string;
  readonly report: PeerReport;
  /** When the peer published this report (its Lease's renewTime, ms); unknown: never fresh. */
  readonly reportedAt?: number;
}

export interface ImpairmentInput {
  readonly now: number;
  readonly self: string;
  /** Live peers that publish an address (the others cannot be checked and do not count). */
  readonly peers: readonly PeerView[];
  readonly reach: ReachTable;
  readonly failing: number;
  readonly targets: number;
  /** The same targets per namespace (one entry per namespace it owns targets in; names do not matter). */
  readonly byNamespace: readonly NamespaceTally[];
  /** Since when its own failing share has stayed at or above `failingShare` (ImpairmentState keeps it); undefined: it is not. */
  readonly failingSince?: number | undefined;
}

export type Verdict =
  | { readonly impaired: false }
  | { readonly impaired: true; readonly reason: 'unreachable' | 'failing'; readonly message: string };

const pct = (x: number): string => `${Math.round(x * 100)}%`;

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
}

/**
 * (a) Cut off: no peer answered for `unreachableAfterMs` (counted from when
 * each was first seen), while some peer's Lease says it reached another peer
 * than this one. With a single peer there is no third view, so (a) never
 * applies: two replicas that lose each other cannot tell who is cut off.
 */
function unreachable(input: ImpairmentInput, t: ImpairmentThresholds): Verdict {
  const { now, reach, peers, self } = input;
  if (peers.length === 0) return { impaired: false };
  for (const p of peers) {
    const r = reach.get(p.identity);
    if (r === undefined || now - Math.max(r.firstSeenAt, r.lastOkAt ?? -Infinity) < t.unreachableAfterMs) return { impaired: false };
  }
  const ids = new Set(peers.map((p) => p.identity));
  const witness = peers.find((p) => p.report.reached.some((q) => q !== self && q !== p.identity && ids.has(q)));
  if (witness === undefined) return { impaired: false };
  return { impaired: true, reason: 'unreachable', message: `no peer answered for ${Math.round(t.unreachableAfterMs / 1000)}s while peers reach each other (${witness.identity} reached ${witness.report.reached.filter((q) => q !== self).join(', ')})` };
}

/**
 * How widely its failures spread over tenants (ADR 0055): the namespaces it
 * owns targets in, and those in which at least `failingShare` of them fail.
 */
export function namespaceSpread(byNamespace: readonly NamespaceTally[], t: Pick<ImpairmentThresholds, 'failingShare'>): { readonly namespaces: number; readonly failing: number } {
  let namespaces = 0;
  let failing = 0;
  for (const n of byNamespace) {
    if (n.targets <= 0) continue;
    namespaces++;
    if (n.failing / n.targets >= t.failingShare) failing++;
  }
  return { namespaces, failing };
}

/**
 * The own failing share is at or above the floor (with enough targets to
 * compare), and spread over enough tenants: at least `minNamespaces`
 * namespaces fail, and at least `failingShare` of those it probes (ADR 0055).
 * Whatever a tenant's pods answer is the tenant's to choose, per source
 * address; only failures across many tenants are the replica's own network.
 */
export function failingHigh(input: Pick<ImpairmentInput, 'failing' | 'targets' | 'byNamespace'>, t: ImpairmentThresholds): boolean {
  if (input.targets < t.minTargets || input.failing / input.targets < t.failingShare) return false;
  const s = namespaceSpread(input.byNamespace, t);
  return s.failing >= t.minNamespaces && s.failing >= t.failingShare * s.namespaces;
}

/**
 * (b) Far more failures than its peers, across many tenants: probably its
 * own network, not the pods (a tenant can fail one replica's source address
 * in its own namespaces, ADR 0055). Only once its share has stayed high for `failingSustainMs`, and only
 * against peer reports published since it went high (ADR 0034): when every
 * replica fails at once, a peer's report from before the failure would make
 * each replica in turn the outlier.
 */
function failing(input: ImpairmentInput, t: ImpairmentThresholds): Verdict {
  const since = input.failingSince;
  if (!failingHigh(input, t) || since === undefined || input.now - since < t.failingSustainMs) return { impaired: false };
  const shares = input.peers.filter((p) => p.report.targets >= t.minTargets && (p.reportedAt ?? -Infinity) >= since).map((p) => p.report.failing / p.report.targets);
  if (shares.length === 0) return { impaired: false };
  const own = input.failing / input.targets;
  const theirs = median(shares);
  if (own - theirs < t.failingMargin) return { impaired: false };
  const spread = namespaceSpread(input.byNamespace, t);
  return { impaired: true, reason: 'failing', message: `${pct(own)} of its ${input.targets} targets fail (for ${Math.round((input.now - since) / 1000)}s), in ${spread.failing} of its ${spread.namespaces} namespaces, its peers' median is ${pct(theirs)}` };
}

/** Should a healthy replica declare itself impaired now? */
export function impairedNow(input: ImpairmentInput, t: ImpairmentThresholds): Verdict {
  const a = unreachable(input, t);
  return a.impaired ? a : failing(input, t);
}

/** Healthy enough to count towards rejoining: it reaches a peer now, or it has none. */
export function reachesPeers(input: Pick<ImpairmentInput, 'now' | 'peers' | 'reach'>, t: ImpairmentThresholds): boolean {
  if (input.peers.length === 0) return true;
  return input.peers.some((p) => input.now - (input.reach.get(p.identity)?.lastOkAt ?? -Infinity) < t.unreachableAfterMs);
}
