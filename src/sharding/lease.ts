import type { LeaseJson } from '../kube/index.ts';
import { memberAnnotation } from './member.ts';

/** Label on every shard Lease; membership lists and watches by it. */
export const shardLabel = 'outprobe.io/shard';
/** Annotation on a shard Lease carrying that replica's per-policy counts (see counts.ts). */
export const countsAnnotation = 'outprobe.io/counts';
/** Annotation on a shard Lease carrying that replica's peer report (src/impairment, ADR 0017). */
export const peerAnnotation = 'outprobe.io/peer';

/** A shard Lease as membership needs it. */
export interface ShardLease {
  /** The Lease's name. */
  readonly name: string;
  /** The Lease's UID (the object a rejection Event is about). @default '' */
  readonly uid?: string;
  /** The member identity (holderIdentity); empty means released. */
  readonly holder: string;
  /** renewTime in ms since the epoch; NaN when absent. */
  readonly renewedAt: number;
  readonly durationMs: number;
  /** The raw counts annotation, decoded lazily by the aggregator. */
  readonly counts: string | undefined;
  /** The raw peer report annotation, decoded by the impairment stage. */
  readonly peer?: string | undefined;
  /** The raw member claim annotation (ADR 0036): what the holder declares about its pod, checked against the pod. */
  readonly member?: string | undefined;
}

export const leaseName = (identity: string): string => `outprobe-shard-${identity}`;

/**
 * A Kubernetes MicroTime: RFC 3339 with exactly six fractional digits
 * (`2026-11-23T01:02:03.123456Z`). The API server rejects Lease times with
 * three, which is what Date#toISOString gives.
 */
export function microTime(ms: number): string {
  const iso = new Date(Math.floor(ms)).toISOString(); // …T01:02:03.123Z
  return `${iso.slice(0, -1)}000Z`;
}

/** Parses RFC 3339 (any number of fractional digits); NaN when unparsable. */
export function parseTime(value: unknown): number {
  if (typeof value !== 'string') return Number.NaN;
  // Date.parse copes with 3 fractional digits everywhere; trim longer ones.
  return Date.parse(value.replace(/(\.\d{3})\d+/, '$1'));
}

export function projectLease(raw: LeaseJson): ShardLease {
  const spec = raw.spec ?? {};
  const annotations = raw.metadata?.annotations;
  return {
    name: raw.metadata?.name ?? '',
    uid: raw.metadata?.uid ?? '',
    holder: spec.holderIdentity ?? '',
    renewedAt: parseTime(spec.renewTime),
    durationMs: (spec.leaseDurationSeconds ?? 0) * 1000,
    counts: annotations?.[countsAnnotation],
    peer: annotations?.[peerAnnotation],
    member: annotations?.[memberAnnotation],
  };
}

/** Live at `now`: held, and renewTime + leaseDurationSeconds is still in the future. */
export function isLive(lease: ShardLease, now: number): boolean {
  return lease.holder !== '' && Number.isFinite(lease.renewedAt) && lease.renewedAt + lease.durationMs > now;
}

/** The identities of the live members at `now`, sorted and without duplicates. */
export function liveMembers(leases: Iterable<ShardLease>, now: number): string[] {
  const out = new Set<string>();
  for (const l of leases) if (isLive(l, now)) out.add(l.holder);
  return [...out].sort();
}

/** When the next live lease expires (membership must be recomputed then); Infinity if none. */
export function nextExpiry(leases: Iterable<ShardLease>, now: number): number {
  let next = Number.POSITIVE_INFINITY;
  for (const l of leases) if (isLive(l, now)) next = Math.min(next, l.renewedAt + l.durationMs);
  return next;
}
