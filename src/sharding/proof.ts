import { leaseName } from './lease.ts';
import type { ShardLease } from './lease.ts';
import { decodeClaim, hostPort } from './member.ts';
import type { Member, MemberClaim, MemberPod } from './member.ts';

/** Why a Lease is not a member (a bounded set: it is a metric label). */
export const rejectionReasons = [
  'lease-name',
  'no-claim',
  'renew-time-future',
  'lease-duration',
  'pod-not-found',
  'pod-uid',
  'pod-not-running',
  'pod-not-ready',
  'pod-terminating',
  'pod-ip',
  'pod-node',
  'service-account',
  'owner',
  'owner-unverifiable',
] as const;
export type RejectionReason = (typeof rejectionReasons)[number];

export type Verdict =
  | { readonly kind: 'member'; readonly member: Member }
  | { readonly kind: 'rejected'; readonly reason: RejectionReason; readonly detail: string }
  /** Not decided yet (the pod's ReplicaSet is being looked up): not a member, not reported. */
  | { readonly kind: 'pending'; readonly detail: string };

/** Who the fleet is: this replica's own Deployment (through its pod's ReplicaSet) and ServiceAccount. */
export interface Fleet {
  readonly deploymentUid: string;
  readonly serviceAccount: string;
}

/** A ReplicaSet's controller as the API server says: the Deployment's UID, `none` when it has no Deployment controller. */
export type OwnerLookup =
  | { readonly kind: 'deployment'; readonly uid: string }
  | { readonly kind: 'none' }
  | { readonly kind: 'pending' }
  | { readonly kind: 'failed'; readonly error: string };

export interface ProofContext {
  readonly now: number;
  /** This replica's own lease duration: a renewTime further ahead than it is refused, a duration above 4× it too. */
  readonly leaseDurationMs: number;
  readonly fleet: Fleet;
  /** The default peer port (this replica's own), for a pod that declares no `peer` port. */
  readonly peerPort: number;
  pod(name: string): MemberPod | undefined;
  replicaSetOwner(name: string, uid: string): OwnerLookup;
}

const reject = (reason: RejectionReason, detail: string): Verdict => ({ kind: 'rejected', reason, detail });

/**
 * Is this (live) Lease's holder a member (ADR 0036)? The Lease only names a
 * pod and declares its UID, node and IP; the pod object, as the API server
 * has it, decides: Running, Ready, not terminating, the declared UID, node
 * and IP, the fleet's ServiceAccount, and controlled by a ReplicaSet that is
 * controlled by this replica's own Deployment. Pure: every lookup is a cache.
 */
export function proveLease(lease: ShardLease, ctx: ProofContext): Verdict {
  const claim = decodeClaim(lease.member);
  const bad = leaseFault(lease, ctx) ?? (claim === undefined ? reject('no-claim', 'no readable outprobe.io/member annotation') : undefined);
  if (bad !== undefined || claim === undefined) return bad ?? reject('no-claim', '');
  const pod = ctx.pod(lease.holder);
  if (pod === undefined) return reject('pod-not-found', `no pod ${lease.holder} in the namespace`);
  const podBad = podFault(pod, claim, ctx);
  if (podBad !== undefined) return podBad;
  const ownerBad = ownerFault(pod, ctx);
  if (ownerBad !== undefined) return ownerBad;
  const podIP = pod.podIP ?? claim.podIP;
  return {
    kind: 'member',
    member: { identity: lease.holder, podName: pod.name, podUid: pod.uid, nodeName: pod.nodeName ?? claim.nodeName, podIP, peerAddress: hostPort(podIP, pod.peerPort ?? ctx.peerPort), ...(claim.zone === undefined ? {} : { zone: claim.zone }) },
  };
}

/** What the Lease itself gets wrong: its name, a renewTime ahead of now, an outsized duration. */
function leaseFault(lease: ShardLease, ctx: ProofContext): Verdict | undefined {
  if (lease.name !== leaseName(lease.holder)) return reject('lease-name', `Lease ${lease.name} is not ${leaseName(lease.holder)}, the Lease of its holder`);
  if (lease.renewedAt > ctx.now + ctx.leaseDurationMs) return reject('renew-time-future', `renewTime is ${Math.round((lease.renewedAt - ctx.now) / 1000)} s ahead`);
  if (lease.durationMs > 4 * ctx.leaseDurationMs) return reject('lease-duration', `leaseDurationSeconds ${lease.durationMs / 1000} is above 4 × ${ctx.leaseDurationMs / 1000}`);
  return undefined;
}

/** The pod's owner chain: pod → ReplicaSet → this replica's Deployment. */
function ownerFault(pod: MemberPod, ctx: ProofContext): Verdict | undefined {
  const c = pod.controller;
  if (c?.kind !== 'ReplicaSet') return reject('owner', `pod ${pod.name} is not controlled by a ReplicaSet`);
  const owner = ctx.replicaSetOwner(c.name, c.uid);
  if (owner.kind === 'pending') return { kind: 'pending', detail: `looking up ReplicaSet ${c.name}` };
  if (owner.kind === 'failed') return reject('owner-unverifiable', `ReplicaSet ${c.name} could not be read: ${owner.error}`);
  if (owner.kind === 'none' || owner.uid !== ctx.fleet.deploymentUid) return reject('owner', `pod ${pod.name}'s ReplicaSet ${c.name} is not controlled by this replica's Deployment`);
  return undefined;
}

/** What the pod says against the claim: its UID, state, IP, node and ServiceAccount. */
function podFault(pod: MemberPod, claim: MemberClaim, ctx: ProofContext): Verdict | undefined {
  if (pod.uid !== claim.podUid) return reject('pod-uid', `pod ${pod.name} has another UID than the Lease declares`);
  if (pod.terminating) return reject('pod-terminating', `pod ${pod.name} is terminating`);
  if (pod.phase !== 'Running') return reject('pod-not-running', `pod ${pod.name} is ${pod.phase || 'without a phase'}`);
  if (!pod.ready) return reject('pod-not-ready', `pod ${pod.name} is not Ready`);
  if (pod.podIP !== claim.podIP) return reject('pod-ip', `pod ${pod.name} has IP ${pod.podIP ?? '(none)'}, the Lease declares ${claim.podIP}`);
  if (pod.nodeName !== claim.nodeName) return reject('pod-node', `pod ${pod.name} runs on ${pod.nodeName ?? '(no node)'}, the Lease declares ${claim.nodeName}`);
  if ((pod.serviceAccount ?? 'default') !== ctx.fleet.serviceAccount) return reject('service-account', `pod ${pod.name} runs as ServiceAccount ${pod.serviceAccount ?? 'default'}, not ${ctx.fleet.serviceAccount}`);
  return undefined;
}

/**
 * Membership declared, not proven (`--membership-proof=none`, development
 * only): the Lease's own claim is taken as it is.
 */
export function declaredMember(lease: ShardLease, peerPort: number): Member | undefined {
  const claim = decodeClaim(lease.member);
  if (claim === undefined) return undefined;
  return { identity: lease.holder, podName: lease.holder, podUid: claim.podUid, nodeName: claim.nodeName, podIP: claim.podIP, peerAddress: hostPort(claim.podIP, claim.port ?? peerPort), ...(claim.zone === undefined ? {} : { zone: claim.zone }) };
}
