import { owner, ranked } from '../sharding/rendezvous.ts';

/**
 * Where a policy's verdicts may come from (`spec.vantage.spread`, ADR 0040):
 * `node` (default): never from the pod's own node; `zone`: from another zone
 * where one is known, else from another node; `any`: from any replica (the
 * plain rendezvous owner, the pod's own node included).
 */
export const spreads = ['node', 'zone', 'any'] as const;
export type Spread = (typeof spreads)[number];
export const defaultSpread: Spread = 'node';

/** A live shard member as vantage sees it: its node (from its proven pod) and that node's zone; `undefined` when unknown. */
export interface VantageMember {
  readonly identity: string;
  readonly node: string | undefined;
  readonly zone: string | undefined;
}

/** Where the pod runs: its `spec.nodeName` (undefined before it is scheduled) and that node's zone. */
export interface PodPlace {
  readonly node: string | undefined;
  readonly zone: string | undefined;
}

/**
 * The members that may probe the pod, best tier first; only the first
 * non-empty tier is eligible (a member of a worse tier is never chosen where
 * a better one would do):
 * - node: members on another known node; then members whose node is unknown
 *   (an older replica's Lease, "vantage unknown").
 * - zone: members in another known zone; then on another known node; then
 *   unknown.
 * - any: every member.
 * A pod whose node is not known yet (not scheduled) has no own node to
 * avoid: every member with a known node is eligible.
 */
export function eligible(members: readonly VantageMember[], pod: PodPlace, spread: Spread): string[] {
  if (spread === 'any') return members.map((m) => m.identity);
  const known = members.filter((m) => m.node !== undefined);
  const otherNode = known.filter((m) => pod.node === undefined || m.node !== pod.node);
  if (spread === 'zone' && pod.zone !== undefined) {
    const otherZone = otherNode.filter((m) => m.zone !== undefined && m.zone !== pod.zone);
    if (otherZone.length > 0) return otherZone.map((m) => m.identity);
  }
  if (otherNode.length > 0) return otherNode.map((m) => m.identity);
  return members.filter((m) => m.node === undefined).map((m) => m.identity);
}

export type Assignment =
  /** The member that probes the pod and writes its gate. */
  | { readonly kind: 'owner'; readonly identity: string }
  /**
   * No member may probe it (NoVantage): nobody probes it; `keeper`, the
   * plain rendezvous owner over every member, reports it and keeps its gate
   * open. Undefined with no members at all.
   */
  | { readonly kind: 'none'; readonly keeper: string | undefined };

/**
 * Who probes the pod: rendezvous hashing over the eligible members only, so
 * ownership stays stable and moves only the pods it must when members come
 * and go or the pod's node is learned.
 */
export function assign(members: readonly VantageMember[], podUid: string, pod: PodPlace, spread: Spread): Assignment {
  const ids = eligible(members, pod, spread);
  const o = owner(ids, podUid);
  return o === undefined ? { kind: 'none', keeper: owner(members.map((m) => m.identity), podUid) } : { kind: 'owner', identity: o };
}

/**
 * The members to ask for a second opinion on the pod, in its rendezvous
 * order over the eligible members (never one on the pod's own node unless
 * the spread is `any`). `candidates` narrows to the reachable peers.
 */
export function secondOpinionOrder(members: readonly VantageMember[], podUid: string, pod: PodPlace, spread: Spread, candidates: readonly string[]): string[] {
  const allowed = new Set(eligible(members, pod, spread));
  return ranked(candidates.filter((c) => allowed.has(c)), podUid);
}

/** The strictest spread of the policies selecting a pod (`zone` over `node` over `any`); `node` when none says. */
export function strictest(list: Iterable<Spread>): Spread {
  let out: Spread | undefined;
  for (const s of list) {
    if (s === 'zone') return 'zone';
    if (s === 'node' || out === undefined) out = s;
  }
  return out ?? defaultSpread;
}

/** "node n1 (zone a)": where a verdict was taken, for the gate's message. */
export function vantageText(node: string | undefined, zone: string | undefined): string {
  if (node === undefined || node === '') return 'an unknown node';
  return zone === undefined || zone === '' ? `node ${node}` : `node ${node} (zone ${zone})`;
}
