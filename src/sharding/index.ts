/**
 * The sharding stage: one Lease per replica, live membership from the Leases,
 * rendezvous hashing of pod UIDs onto the live members, handover rules, and
 * status counts aggregated through the Leases. Pure core, thin I/O shell
 * (ShardMembership, LeaseWriter).
 */
export { fnv1a64, hash64 } from './hash.ts';
export { owner, ranked } from './rendezvous.ts';
export { countsAnnotation, peerAnnotation, isLive, leaseName, liveMembers, microTime, nextExpiry, parseTime, projectLease, shardLabel } from './lease.ts';
export type { ShardLease } from './lease.ts';
export { aggregateCounts, decodeCounts, encodeCounts } from './counts.ts';
export type { PanicShare, PolicyCounts } from './counts.ts';
export { Handover } from './handover.ts';
export type { Gain, OwnerOf } from './handover.ts';
export { LeaseWriter } from './lease-writer.ts';
export { ShardMembership } from './membership.ts';
export { ownershipPass } from './ownership-pass.ts';
export type { OwnershipPass } from './ownership-pass.ts';
export { unownedCount } from './unowned.ts';
export { decodeClaim, encodeClaim, hostPort, memberAnnotation, projectMemberPod } from './member.ts';
export type { Member, MemberClaim, MemberPod } from './member.ts';
export { declaredMember, proveLease, rejectionReasons } from './proof.ts';
export type { Fleet, OwnerLookup, ProofContext, RejectionReason, Verdict } from './proof.ts';
export { PodProof } from './pod-proof.ts';
export type { PodProofOptions, SelfPod } from './pod-proof.ts';
export type { ShardEvent, ShardHost, ShardMembershipOptions } from './membership.ts';
export { shardReporter } from './report.ts';
