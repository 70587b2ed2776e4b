import type { VantageDecision } from '../policy/index.ts';
import { ranked } from '../sharding/rendezvous.ts';
import type { PodPlace, Spread, VantageMember } from './eligible.ts';

/**
 * The tiers of members that may probe a pod, best first (ADR 0040), every
 * one of them: `eligible()` keeps only the first non-empty one (the owner's
 * tier); further vantages (ADR 0058) are taken from the next tiers when the
 * first runs out. Members of unknown vantage are a tier only where no known
 * member may probe the pod at all.
 */
function tiers(members: readonly VantageMember[], pod: PodPlace, spread: Spread): string[][] {
  if (spread === 'any') return [members.map((m) => m.identity)];
  const known = members.filter((m) => m.node !== undefined);
  const otherNode = known.filter((m) => pod.node === undefined || m.node !== pod.node);
  const out: VantageMember[][] = [];
  if (spread === 'zone' && pod.zone !== undefined) {
    const otherZone = otherNode.filter((m) => m.zone !== undefined && m.zone !== pod.zone);
    out.push(otherZone, otherNode.filter((m) => !otherZone.includes(m)));
  } else {
    out.push(otherNode);
  }
  const nonEmpty = out.filter((t) => t.length > 0).map((t) => t.map((m) => m.identity));
  if (nonEmpty.length > 0) return nonEmpty;
  return [members.filter((m) => m.node === undefined).map((m) => m.identity)];
}

/**
 * The pod's vantages (ADR 0058): up to `count` members, owner first, each
 * tier in the pod's rendezvous order. The first is exactly `assign()`'s
 * owner, so asking for more vantages never moves a gate's writer; the others
 * are the next eligible members (never the pod's own node unless spread is
 * `any`). Under `zone` they are spread over zones: one per zone first (the
 * other zones', then another node in the pod's own zone), then the rest in
 * order; so with two zones, count 2 is one vantage in the other zone and
 * one in the pod's own. Fewer members than `count`: as many as there are
 * (none: NoVantage).
 */
export function vantagesOf(members: readonly VantageMember[], podUid: string, pod: PodPlace, spread: Spread, count: number): string[] {
  const order = tiers(members, pod, spread).flatMap((tier) => ranked(tier, podUid));
  if (spread !== 'zone' || count <= 1) return order.slice(0, count);
  const byId = new Map(members.map((m) => [m.identity, m]));
  const zoneKey = (id: string): string => {
    const m = byId.get(id);
    return m?.zone ?? `node:${m?.node ?? id}`;
  };
  const seen = new Set<string>();
  const first: string[] = [];
  const rest: string[] = [];
  for (const id of order) {
    const z = zoneKey(id);
    if (seen.has(z)) rest.push(id);
    else {
      seen.add(z);
      first.push(id);
    }
  }
  return [...first, ...rest].slice(0, count);
}

/** One vantage's verdict: its state machine's committed result; `undefined` when it has none (abstains). */
export type Verdict = 'success' | 'failure' | undefined;

/**
 * The combined verdict of a pod's vantages (ADR 0058), over those with a
 * verdict (a vantage that has none, or reported none lately, abstains):
 * - quorum: failure when more than half of them fail (2 of 2, 2 of 3);
 * - all: failure when every one of them fails;
 * - any: failure when one of them fails.
 * No verdict at all: `undefined` (nothing to write).
 */
export function combine(decision: VantageDecision, verdicts: readonly Verdict[]): Verdict {
  const known = verdicts.filter((v) => v !== undefined);
  if (known.length === 0) return undefined;
  const failing = known.filter((v) => v === 'failure').length;
  const failed = decision === 'any' ? failing >= 1 : decision === 'all' ? failing === known.length : failing * 2 > known.length;
  return failed ? 'failure' : 'success';
}
