import type { Clock, Random } from '../kernel/index.ts';
import { Reflector, isKubeError } from '../kube/index.ts';
import type { KubeClient, PodJson, ReflectorSignal } from '../kube/index.ts';
import { leaseName } from './lease.ts';
import type { ShardLease } from './lease.ts';
import { encodeClaim, projectMemberPod } from './member.ts';
import type { MemberClaim, MemberPod } from './member.ts';
import { proveLease } from './proof.ts';
import type { Fleet, OwnerLookup, RejectionReason, Verdict } from './proof.ts';

/** This replica's own pod, from the downward API (POD_NAME, POD_UID, NODE_NAME, POD_IP). */
export interface SelfPod extends MemberClaim {
  readonly podName: string;
}

export interface PodProofOptions {
  readonly client: KubeClient;
  readonly clock: Clock;
  readonly random: Random;
  /** The release namespace: the replicas' pods, ReplicaSets and Leases. */
  readonly namespace: string;
  readonly self: SelfPod;
  /** Narrows the pod watch (the chart's pod labels); membership never trusts labels, only owner references. @default all pods of the namespace */
  readonly labelSelector?: string;
  readonly leaseDurationMs: number;
  /** This replica's peer port: a member whose pod declares no `peer` container port is reached on it. */
  readonly peerPort: number;
  /** A ReplicaSet's controller is read again after this long. @default 300000 */
  readonly ownerTtlMs?: number;
  /** A failed ReplicaSet read is tried again after this long. @default 10000 */
  readonly ownerRetryMs?: number;
  /** The pod watch's lifecycle (a LIST refused for want of RBAC shows here). */
  readonly onSignal?: (signal: ReflectorSignal) => void;
}

interface OwnerEntry {
  lookup: OwnerLookup;
  /** When to read it again (the old answer stands meanwhile). */
  refreshAt: number;
  inFlight: boolean;
}

/**
 * The API server's side of membership (ADR 0036): a watch of the release
 * namespace's pods and reads of their ReplicaSets, from which `prove()`
 * decides whether a Lease's holder is a Running, Ready pod of this
 * replica's own Deployment. `onChange` fires when an answer may have
 * changed (a pod changed, a ReplicaSet was read).
 */
export class PodProof {
  readonly #o: PodProofOptions;
  readonly #reflector: Reflector<MemberPod, PodJson>;
  readonly #owners = new Map<string, OwnerEntry>();
  #onChange: () => void = () => undefined;

  constructor(options: PodProofOptions) {
    this.#o = options;
    this.#reflector = new Reflector<MemberPod, PodJson>({
      client: options.client,
      clock: options.clock,
      random: options.random,
      path: `/api/v1/namespaces/${options.namespace}/pods`,
      ...(options.labelSelector === undefined || options.labelSelector === '' ? {} : { labelSelector: options.labelSelector }),
      project: projectMemberPod,
      onEvent: () => this.#onChange(),
      onSynced: () => this.#onChange(),
      ...(options.onSignal === undefined ? {} : { onSignal: options.onSignal }),
    });
  }

  /** Called when a verdict may have changed. */
  set onChange(f: () => void) {
    this.#onChange = f;
  }

  get synced(): boolean {
    return this.#reflector.synced;
  }

  run(signal: AbortSignal): Promise<void> {
    return this.#reflector.run(signal);
  }

  /**
   * This replica's Deployment and ServiceAccount, once its own pod and
   * ReplicaSet are known; `pending` while they are being read; `failed` when
   * its own pod cannot be a member (not found, another UID, not run by a
   * Deployment).
   */
  fleet(): Fleet | { readonly kind: 'pending'; readonly detail: string } | { readonly kind: 'failed'; readonly reason: RejectionReason; readonly detail: string } {
    if (!this.#reflector.synced) return { kind: 'pending', detail: 'the pod watch has not synced yet' };
    const { podName, podUid } = this.#o.self;
    const own = this.#pod(podName);
    if (own === undefined) return { kind: 'failed', reason: 'pod-not-found', detail: `this replica's own pod ${podName} is not in namespace ${this.#o.namespace}${this.#o.labelSelector === undefined ? '' : ` with labels ${this.#o.labelSelector}`}` };
    if (own.uid !== podUid) return { kind: 'failed', reason: 'pod-uid', detail: `pod ${podName} has another UID than POD_UID` };
    if (own.controller?.kind !== 'ReplicaSet') return { kind: 'failed', reason: 'owner', detail: `this replica's own pod ${podName} is not controlled by a ReplicaSet (run it from a Deployment)` };
    const owner = this.#owner(own.controller.name, own.controller.uid);
    if (owner.kind === 'pending') return { kind: 'pending', detail: `looking up this replica's ReplicaSet ${own.controller.name}` };
    if (owner.kind === 'failed') return { kind: 'failed', reason: 'owner-unverifiable', detail: `this replica's ReplicaSet ${own.controller.name} could not be read: ${owner.error}` };
    if (owner.kind === 'none') return { kind: 'failed', reason: 'owner', detail: `this replica's ReplicaSet ${own.controller.name} is not controlled by a Deployment` };
    return { deploymentUid: owner.uid, serviceAccount: own.serviceAccount ?? 'default' };
  }

  /** The verdict on a live Lease: pending while this replica's own fleet is not known. */
  prove(lease: ShardLease, now: number): Verdict {
    const fleet = this.fleet();
    if ('kind' in fleet) return { kind: 'pending', detail: fleet.detail };
    return proveLease(lease, {
      now,
      leaseDurationMs: this.#o.leaseDurationMs,
      fleet,
      peerPort: this.#o.peerPort,
      pod: (name) => this.#pod(name),
      replicaSetOwner: (name, uid) => this.#owner(name, uid),
    });
  }

  /** This replica's own verdict, as its peers will decide it (its Lease as it would write it now). */
  proveSelf(now: number, holder: string): Verdict {
    const fleet = this.fleet();
    if ('kind' in fleet && fleet.kind === 'failed') return { kind: 'rejected', reason: fleet.reason, detail: fleet.detail };
    const self: ShardLease = { name: leaseName(holder), holder, renewedAt: now, durationMs: this.#o.leaseDurationMs, counts: undefined, member: encodeClaim(this.#o.self) };
    return this.prove(self, now);
  }

  /** What this replica declares on its Lease. */
  claim(): string {
    return encodeClaim(this.#o.self);
  }

  #pod(name: string): MemberPod | undefined {
    return this.#reflector.store.get(`${this.#o.namespace}/${name}`);
  }

  #owner(name: string, uid: string): OwnerLookup {
    const key = `${name}/${uid}`;
    const now = this.#o.clock.now();
    let e = this.#owners.get(key);
    if (e === undefined) {
      e = { lookup: { kind: 'pending' }, refreshAt: now, inFlight: false };
      this.#owners.set(key, e);
      if (this.#owners.size > 256) this.#owners.delete(this.#owners.keys().next().value ?? key);
    }
    if (!e.inFlight && now >= e.refreshAt) this.#read(name, uid, e);
    return e.lookup;
  }

  #read(name: string, uid: string, e: OwnerEntry): void {
    e.inFlight = true;
    const done = (lookup: OwnerLookup, againMs: number): void => {
      e.inFlight = false;
      // A read that failed after an answer keeps the answer (an API blip does not unmake members).
      if (lookup.kind !== 'failed' || e.lookup.kind === 'pending' || e.lookup.kind === 'failed') e.lookup = lookup;
      e.refreshAt = this.#o.clock.now() + againMs;
      this.#onChange();
    };
    this.#o.client.request({ method: 'GET', path: `/apis/apps/v1/namespaces/${this.#o.namespace}/replicasets/${encodeURIComponent(name)}`, signal: AbortSignal.timeout(10_000) }).then(
      (raw) => done(deploymentOf(raw, uid), this.#o.ownerTtlMs ?? 300_000),
      (err: unknown) => {
        if (isKubeError(err, 'NotFound')) done({ kind: 'none' }, this.#o.ownerTtlMs ?? 300_000);
        else done({ kind: 'failed', error: err instanceof Error ? err.message.slice(0, 200) : String(err).slice(0, 200) }, this.#o.ownerRetryMs ?? 10_000);
      },
    );
  }
}

const rec = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

/** The Deployment controlling this ReplicaSet (its UID must be the one the pod names: a namesake is not its owner). */
function deploymentOf(raw: unknown, uid: string): OwnerLookup {
  const meta = rec(rec(raw)['metadata']);
  if (meta['uid'] !== uid) return { kind: 'none' };
  const refs = Array.isArray(meta['ownerReferences']) ? meta['ownerReferences'].map(rec).filter((r) => r['controller'] === true) : [];
  const d = refs.length === 1 ? refs[0] : undefined;
  if (d === undefined || d['kind'] !== 'Deployment' || d['apiVersion'] !== 'apps/v1' || typeof d['uid'] !== 'string' || d['uid'] === '') return { kind: 'none' };
  return { kind: 'deployment', uid: d['uid'] };
}
