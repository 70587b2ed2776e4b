import type { Clock, Random } from '../kernel/index.ts';
import { Reflector } from '../kube/index.ts';
import type { KubeClient, LeaseJson, Pod } from '../kube/index.ts';
import { aggregateCounts } from './counts.ts';
import type { PolicyCounts } from './counts.ts';
import { Handover } from './handover.ts';
import { isLive, leaseName, liveMembers, nextExpiry, projectLease, shardLabel } from './lease.ts';
import { unownedCount } from './unowned.ts';
import type { ShardLease } from './lease.ts';
import { LeaseWriter } from './lease-writer.ts';
import { encodeClaim, memberAnnotation } from './member.ts';
import type { Member, MemberClaim } from './member.ts';
import type { PodProof } from './pod-proof.ts';
import { declaredMember, rejectionReasons } from './proof.ts';
import type { RejectionReason, Verdict } from './proof.ts';
import { owner } from './rendezvous.ts';
import { ownershipPass } from './ownership-pass.ts';
import type { OwnershipPass } from './ownership-pass.ts';
import { VantageOwnership } from '../vantage/ownership.ts';
import { vantageText } from '../vantage/eligible.ts';
import type { ProvenPlace, VantageSource } from '../vantage/ownership.ts';

/** How long a release at shutdown may take before the Lease is left to expire. */
const releaseTimeoutMs = 5000;

/** What membership needs from the controller (kept narrow: sharding sits upstream of it). */
export interface ShardHost {
  /** Caches synced: a replica joins only once it can probe what it gains at once. */
  readonly ready: boolean;
  pods(): Iterable<Pod>;
  localCounts(): ReadonlyMap<string, PolicyCounts>;
  /**
   * Re-plan every pod after ownership changed, in slices (ADR 0072), calling
   * `pass.pod` on each pod right before it is planned and `pass.done` once
   * every pod was (ADR 0073). A host that does not run the pass loses no
   * safety (a pod's handover is settled when it is asked about) but reports
   * no membership event.
   */
  resync(pass: OwnershipPass): void;
  /** Does a valid policy select the pod (what the unowned gauge counts)? @default every pod */
  selected?(pod: Pod): boolean;
  /** More annotations to publish on every renew (the peer report). @default none */
  annotations?(): Readonly<Record<string, string>>;
}

/** Membership news for logs and metrics (the observability seam). */
export type ShardEvent =
  | { readonly type: 'membership'; readonly members: readonly string[]; readonly previous: readonly string[] | undefined; readonly owned: number; readonly unowned: number }
  | { readonly type: 'renew-failed'; readonly error: unknown }
  | { readonly type: 'released'; readonly error?: unknown }
  | { readonly type: 'standing-down' }
  | { readonly type: 'rejoining' }
  /** A live Lease that is not a member (ADR 0036), once per Lease and reason. */
  | { readonly type: 'lease-rejected'; readonly lease: { readonly name: string; readonly uid: string; readonly holder: string }; readonly reason: RejectionReason; readonly detail: string }
  /** The live Leases rejected now, by reason (every reason present, 0 included), when that changed. */
  | { readonly type: 'rejected-now'; readonly byReason: ReadonlyMap<RejectionReason, number> }
  /** This replica cannot prove its own membership (it writes no Lease and owns nothing), once per reason; `proven` when it can again. */
  | { readonly type: 'self-unproven'; readonly detail: string }
  | { readonly type: 'self-proven' };

export interface ShardMembershipOptions {
  readonly client: KubeClient;
  readonly clock: Clock;
  readonly random: Random;
  /** Namespace of the shard Leases (the controller's own). */
  readonly namespace: string;
  readonly identity: string;
  /** @default 15000 */
  readonly leaseDurationMs?: number;
  /** @default 5000 */
  readonly renewIntervalMs?: number;
  readonly observe?: (event: ShardEvent) => void;
  /**
   * Proves every Lease against the pods (ADR 0036). Absent: membership is
   * declared (`--membership-proof=none`, development only): every live Lease
   * is a member and its own claim is taken as it is.
   */
  readonly proof?: PodProof | undefined;
  /** Without `proof`: what this replica declares about its pod (its peer address), when it knows. */
  readonly claim?: MemberClaim | undefined;
  /** Without `proof`: the peer port of the declared members. @default 9444 */
  readonly peerPort?: number;
  /**
   * Vantage rules (ADR 0040): each pod's spread and each node's zone. A pod is
   * owned by rendezvous over the members eligible for it only. @default none:
   * plain rendezvous over every member
   */
  readonly vantage?: VantageSource | undefined;
}

/**
 * This replica's place in the shard ring: holds and renews its own Lease
 * (publishing its per-policy counts on it), watches every shard Lease,
 * recomputes the live members when a Lease changes or expires, and answers
 * the controller's sharding hooks from that. Ownership is empty until the
 * replica's own Lease is written, so a replica never probes as a member the
 * others cannot see.
 */
export class ShardMembership {
  readonly #o: ShardMembershipOptions;
  readonly #durationMs: number;
  readonly #reflector: Reflector<ShardLease, LeaseJson>;
  readonly #writer: LeaseWriter;
  readonly #handover: Handover;
  #host: ShardHost | undefined;
  #members: readonly string[] | undefined;
  readonly #vantage: VantageOwnership;
  /** Impaired (ADR 0017): no Lease, no pods, until rejoin(). */
  #standingDown = false;
  /** Lease writes (renew, release) one at a time, so a renew in flight cannot re-create a Lease just released. */
  #serial: Promise<unknown> = Promise.resolve();
  #wake: AbortController = new AbortController();
  /** Woken when the proof's caches changed (a pod, a ReplicaSet), without renewing early. */
  #proofWake: AbortController = new AbortController();
  /** Verdicts per Lease object, for one generation of the proof's caches. */
  #verdicts = new WeakMap<ShardLease, { readonly gen: number; readonly verdict: Verdict }>();
  #gen = 0;
  #changedAt: number | undefined;
  /** Membership changes applied so far (a pass reports only while it is the latest one's). */
  #changes = 0;
  /** The members the last membership event reported (a superseded change reports nothing of its own). */
  #reportedMembers: readonly string[] | undefined;
  /** `<lease name>\n<reason>` already reported. */
  readonly #reported = new Set<string>();
  #rejectedNow = '';
  /** The last self-proof detail reported; '' when proven. */
  #selfReported: string | undefined;

  constructor(options: ShardMembershipOptions) {
    this.#o = options;
    this.#durationMs = options.leaseDurationMs ?? 15_000;
    this.#handover = new Handover(options.identity, this.#durationMs);
    this.#vantage = new VantageOwnership(options.vantage);
    this.#writer = new LeaseWriter({ client: options.client, clock: options.clock, namespace: options.namespace, identity: options.identity, durationMs: this.#durationMs });
    this.#reflector = new Reflector<ShardLease, LeaseJson>({
      client: options.client,
      clock: options.clock,
      random: options.random,
      path: `/apis/coordination.k8s.io/v1/namespaces/${options.namespace}/leases`,
      labelSelector: `${shardLabel}=true`,
      project: projectLease,
      onEvent: () => this.#recompute(),
    });
    if (options.proof !== undefined) {
      options.proof.onChange = () => {
        this.#gen++;
        this.#recompute();
        this.#proofWake.abort();
      };
    }
  }

  /** When the live members last changed (a handover began); undefined before this replica joined (ADR 0033). */
  get changedAt(): number | undefined {
    return this.#changedAt;
  }

  /** Live members as last computed; undefined before this replica joined. */
  get members(): readonly string[] | undefined {
    return this.#members;
  }

  /** This replica probes the pod, or (no member may probe it: NoVantage) keeps it (ADR 0040). */
  owns(pod: Pod): boolean {
    return this.#members !== undefined && this.#vantage.responsible(pod) === this.#o.identity;
  }

  /**
   * Who among `members` is responsible for the pod with this UID, as vantage
   * assigns it (the pod's place last seen; plain rendezvous for a pod not seen
   * yet): the fleet-wide readiness cap's view of other replicas' pods (ADR 0032).
   */
  responsibleAmong(members: readonly string[], uid: string): string | undefined {
    return this.#vantage.responsibleAmong(members, uid);
  }

  /** No live member may probe the pod under its vantage spread (ADR 0040); false before this replica joined. */
  noVantage(pod: Pod): boolean {
    return this.#members !== undefined && this.#members.length > 0 && this.#vantage.assignment(pod).kind === 'none';
  }

  /** The pod's vantages, owner first, up to `count` (ADR 0058); none before this replica joined. */
  vantages(pod: Pod, count: number): string[] {
    return this.#members === undefined ? [] : this.#vantage.vantages(pod, count);
  }

  /** Where a live member stands, for gate messages: "node n2 (zone b)" (its identity when its place is unknown). */
  placeOf(identity: string): string {
    const m = this.#vantage.members.find((x) => x.identity === identity);
    return m?.node === undefined ? `replica ${identity}` : `replica ${identity} on ${vantageText(m.node, m.zone)}`;
  }

  /** Peers (identities) to ask for a second opinion on the pod, best first: the eligible ones only (ADR 0040). */
  secondOpinionOrder(podUid: string, candidates: readonly string[]): string[] {
    return this.#vantage.secondOpinionOrder(podUid, candidates);
  }

  /** A zone was learned or changed (ADR 0040): every pod is assigned again. */
  vantageChanged(): void {
    this.#vantage.invalidate();
    this.#recompute();
  }

  /** When this replica gained the pod from another member (see Handover); undefined if it did not, or no longer owns it. */
  gainedAt(pod: Pod): number | undefined {
    if (!this.owns(pod)) return undefined;
    this.#settle(pod);
    return this.#handover.gain(pod.uid)?.at;
  }

  /** Remediation of a gained pod waits for the previous owner (see Handover). */
  mayRemediate(pod: Pod): boolean {
    if (!this.owns(pod)) return false;
    this.#settle(pod);
    return this.#handover.mayRemediate(pod.uid, liveMembers(this.#leases(), this.#o.clock.now()), this.#o.clock.now());
  }

  /** Applies to the pod the membership changes its handover has not had yet (ADR 0073), with its place under the members now. */
  #settle(pod: Pod): void {
    if (!this.#handover.pending(pod.uid)) return;
    this.#vantage.assignment(pod);
    this.#handover.settle(pod.uid);
  }

  /** The other live members' Leases (the impairment stage's peers). Still known while standing down. */
  peerLeases(): ShardLease[] {
    const now = this.#o.clock.now();
    const own = leaseName(this.#o.identity);
    return [...this.#reflector.store.values()].filter((l) => l.name !== own && l.holder !== this.#o.identity && this.#accepted(l, now));
  }

  /**
   * The other live members, proven (ADR 0036): where to reach them comes
   * from their pods, never from their Leases. Without a proof, the members
   * whose Leases declare a pod. Still known while standing down.
   */
  peers(): Member[] {
    const now = this.#o.clock.now();
    return this.peerLeases().flatMap((l) => this.#memberOf(l, now) ?? []);
  }

  /**
   * Every live member's record, this replica's own included (when proven):
   * what vantage (issue 28) builds on. Without a proof, the members whose
   * Leases declare a pod.
   */
  memberRecords(): Member[] {
    const now = this.#o.clock.now();
    return this.#leases().flatMap((l) => this.#memberOf(l, now) ?? []);
  }

  /** The live member (itself included) whose pod has this name and UID, if any: who may speak for the fleet. */
  memberByPod(podName: string, podUid: string): Member | undefined {
    const now = this.#o.clock.now();
    for (const l of this.#leases()) {
      const m = this.#memberOf(l, now);
      if (m !== undefined && m.podName === podName && m.podUid === podUid) return m;
    }
    return undefined;
  }

  get standingDown(): boolean {
    return this.#standingDown;
  }

  /**
   * Gives up this replica's Lease and every pod at once (it declared itself
   * impaired): the Lease is deleted so the others take its pods on their next
   * watch event, not a lease duration later, and it renews nothing until
   * `rejoin()`.
   */
  async standDown(): Promise<void> {
    if (this.#standingDown) return;
    this.#standingDown = true;
    this.#o.observe?.({ type: 'standing-down' });
    this.#recompute();
    await this.#release();
  }

  /** Ends a stand-down: the next renew writes the Lease again and membership follows. */
  rejoin(): void {
    if (!this.#standingDown) return;
    this.#standingDown = false;
    this.#o.observe?.({ type: 'rejoining' });
    this.#wake.abort();
  }

  /** One live member writes each policy's status: the rendezvous owner of the policy UID. */
  writesStatus(policyUid: string): boolean {
    return this.#members !== undefined && owner(this.#members, policyUid) === this.#o.identity;
  }

  /** This replica's counts plus those the other live members published on their Leases. */
  aggregate(policyKey: string, local: PolicyCounts): PolicyCounts {
    return aggregateCounts({ self: this.#o.identity, leases: this.#leases(), now: this.#o.clock.now(), policyKey, local });
  }

  /**
   * Joins once `host` is ready, renews every interval, recomputes membership
   * on expiry; on abort releases (deletes) the Lease at once.
   */
  async run(signal: AbortSignal, host: ShardHost): Promise<void> {
    const { clock } = this.#o;
    this.#host = host;
    const watching = this.#reflector.run(signal);
    const proving = this.#o.proof?.run(signal);
    while (!signal.aborted && !this.#synced(host)) await clock.sleepUntil(clock.now() + 100, signal).catch(() => undefined);
    const renewMs = this.#o.renewIntervalMs ?? 5000;
    let renewAt = clock.now();
    while (!signal.aborted) {
      if (this.#wake.signal.aborted) {
        this.#wake = new AbortController();
        renewAt = clock.now();
      }
      if (this.#proofWake.signal.aborted) this.#proofWake = new AbortController();
      // A replica that cannot prove itself writes no Lease (its peers would reject it) and lets the one it has expire.
      const idle = this.#standingDown || !this.#selfProven();
      if (clock.now() >= renewAt && !idle) {
        const ok = await this.#renew(signal);
        renewAt = clock.now() + (ok ? renewMs : Math.min(renewMs, 1000));
      }
      this.#recompute();
      // Idle there is no renew to wait for (renewAt is past): wake on expiry, rejoin(), a proof change or a renew interval.
      const wakeAt = Math.min(idle ? clock.now() + renewMs : renewAt, nextExpiry(this.#leases(), clock.now()) + 1);
      await clock.sleepUntil(wakeAt, AbortSignal.any([signal, this.#wake.signal, ...(idle ? [this.#proofWake.signal] : [])])).catch(() => undefined);
    }
    await this.#release(releaseTimeoutMs);
    await watching;
    await proving;
  }

  /** The controller's caches, the Lease watch and the pod watch of the proof have synced. */
  #synced(host: ShardHost): boolean {
    return host.ready && this.#reflector.synced && (this.#o.proof?.synced ?? true);
  }

  /** May this replica write its Lease? Always without a proof; with one, when its own pod passes it (reported on change). */
  #selfProven(): boolean {
    const proof = this.#o.proof;
    if (proof === undefined) return true;
    const v = proof.proveSelf(this.#o.clock.now(), this.#o.identity);
    if (v.kind === 'pending') return false; // its ReplicaSet is being read: not yet a verdict to report
    const detail = v.kind === 'member' ? '' : `${v.reason}: ${v.detail}`;
    if (detail !== this.#selfReported) {
      this.#selfReported = detail;
      this.#o.observe?.(detail === '' ? { type: 'self-proven' } : { type: 'self-unproven', detail });
    }
    return v.kind === 'member';
  }

  #claimAnnotation(): Record<string, string> {
    const claim = this.#o.proof?.claim() ?? (this.#o.claim === undefined ? undefined : encodeClaim(this.#o.claim));
    return claim === undefined ? {} : { [memberAnnotation]: claim };
  }

  #verdict(l: ShardLease, now: number): Verdict {
    const proof = this.#o.proof;
    if (proof === undefined) {
      const m = declaredMember(l, this.#o.peerPort ?? 9444);
      return m === undefined ? { kind: 'member', member: { identity: l.holder, podName: l.holder, podUid: '', nodeName: '', podIP: '', peerAddress: '' } } : { kind: 'member', member: m };
    }
    const cached = this.#verdicts.get(l);
    if (cached !== undefined && cached.gen === this.#gen) return cached.verdict;
    const verdict = proof.prove(l, now);
    this.#verdicts.set(l, { gen: this.#gen, verdict });
    return verdict;
  }

  /** Live and a member. */
  #accepted(l: ShardLease, now: number): boolean {
    return isLive(l, now) && this.#verdict(l, now).kind === 'member';
  }

  #memberOf(l: ShardLease, now: number): Member | undefined {
    const v = this.#verdict(l, now);
    return v.kind === 'member' && v.member.peerAddress !== '' ? v.member : undefined;
  }

  async #renew(signal: AbortSignal): Promise<boolean> {
    try {
      await this.#serialized(async () => {
        if (!this.#standingDown) await this.#writer.renew(this.#host?.localCounts() ?? new Map(), signal, { ...this.#host?.annotations?.(), ...this.#claimAnnotation() });
      });
      return true;
    } catch (err: unknown) {
      if (!signal.aborted) this.#o.observe?.({ type: 'renew-failed', error: err });
      return false;
    }
  }

  /**
   * Deletes the Lease after any write in flight. At shutdown (`timeoutMs`)
   * the whole release is bounded: a renew still unfinished by half of it
   * was aborted with the run's signal (so it cannot create the Lease again)
   * and is not waited for any longer; the DELETE gets the rest. A Lease not
   * released in time expires after its duration.
   */
  async #release(timeoutMs?: number): Promise<void> {
    try {
      if (timeoutMs === undefined) {
        await this.#serialized(() => this.#writer.release());
      } else {
        const { clock } = this.#o;
        const giveUp = new AbortController();
        await Promise.race([this.#serial, clock.sleepUntil(clock.now() + timeoutMs / 2, giveUp.signal).catch(() => undefined)]);
        giveUp.abort();
        const release = this.#writer.release(AbortSignal.timeout(timeoutMs / 2));
        this.#serial = release.catch(() => undefined);
        await release;
      }
      this.#o.observe?.({ type: 'released' });
    } catch (err: unknown) {
      this.#o.observe?.({ type: 'released', error: err });
    }
  }

  #serialized(op: () => Promise<void>): Promise<void> {
    const next = this.#serial.then(op, op);
    this.#serial = next.catch(() => undefined);
    return next;
  }

  /** The proven live Leases, with this replica's own as last written (the watch may lag behind it). */
  #leases(): ShardLease[] {
    const now = this.#o.clock.now();
    return this.#all().filter((l) => this.#accepted(l, now));
  }

  #all(): ShardLease[] {
    const own = this.#writer.current;
    const name = leaseName(this.#o.identity);
    const others = [...this.#reflector.store.values()].filter((l) => l.name !== name);
    return own === undefined ? others : [...others, own];
  }

  /** Reports each live Lease rejected for a reason not reported before, and the count by reason when it changed. */
  #reportRejections(now: number): void {
    if (this.#o.proof === undefined) return;
    const byReason = new Map<RejectionReason, number>(rejectionReasons.map((r) => [r, 0]));
    const names = new Set<string>();
    for (const l of this.#reflector.store.values()) {
      names.add(l.name);
      if (!isLive(l, now)) continue;
      const v = this.#verdict(l, now);
      if (v.kind !== 'rejected') continue;
      byReason.set(v.reason, (byReason.get(v.reason) ?? 0) + 1);
      const key = `${l.name}\n${v.reason}`;
      if (this.#reported.has(key)) continue;
      this.#reported.add(key);
      this.#o.observe?.({ type: 'lease-rejected', lease: { name: l.name, uid: l.uid ?? '', holder: l.holder }, reason: v.reason, detail: v.detail });
    }
    // Forget Leases that are gone, so the set stays bounded by the namespace's Leases.
    for (const key of this.#reported) if (!names.has(key.slice(0, key.indexOf('\n')))) this.#reported.delete(key);
    const text = [...byReason].map(([r, n]) => `${r}=${n}`).join(',');
    if (text !== this.#rejectedNow) {
      this.#rejectedNow = text;
      this.#o.observe?.({ type: 'rejected-now', byReason });
    }
  }

  /** Selected pods no live member owns (see unownedCount; should be 0). */
  unownedPods(): number {
    const now = this.#o.clock.now();
    return unownedCount({
      members: this.#members,
      livePeers: this.peerLeases().filter((l) => isLive(l, now)).length,
      pods: this.#host?.pods() ?? [],
      selected: this.#host?.selected?.bind(this.#host),
    });
  }

  /** The live members' proven places (their nodes from their pods, ADR 0040). */
  #places(now: number): ProvenPlace[] {
    return this.#leases().flatMap((l) => {
      const v = this.#verdict(l, now);
      return v.kind === 'member' ? [{ identity: l.holder, nodeName: v.member.nodeName, zone: v.member.zone }] : [];
    });
  }

  /**
   * A handover may be in progress (ADR 0033) when the members changed, or the
   * places of several changed (vantage moves pods between them). A replica
   * alone takes pods from nobody: not at its start, nor when it learns its place.
   */
  #noteChange(before: readonly string[] | undefined, members: readonly string[], now: number): void {
    const sameMembers = before !== undefined && before.join('\n') === members.join('\n');
    if (members.length > 1 || (before !== undefined && !sameMembers)) this.#changedAt = now;
  }

  #recompute(): void {
    const own = this.#writer.current;
    if (this.#host === undefined) return;
    const now = this.#o.clock.now();
    this.#reportRejections(now);
    if (own === undefined && !this.#standingDown) return;
    // Standing down, or its own Lease expired or no longer proven: it owns nothing.
    const members = !this.#standingDown && own !== undefined && this.#accepted(own, now) ? liveMembers(this.#leases(), now) : [];
    const before = this.#members;
    const placesChanged = this.#vantage.setMembers(members, this.#places(now));
    if (before !== undefined && before.join('\n') === members.join('\n') && !placesChanged) return;
    // Ownership switches here for every pod at once: `owns` assigns a pod when asked (the vantage cache was
    // emptied). The rest runs pod by pod in the resync's slices (ADR 0073): the handover is recorded now and
    // applied to each pod when the pass reaches it or when the pod is asked about, whichever comes first.
    this.#members = members;
    this.#noteChange(before, members, now);
    this.#handover.begin(before, members, now, this.#vantage.view());
    const change = ++this.#changes;
    this.#host.resync(ownershipPass({
      settle: (p) => this.#settle(p),
      owns: (p) => this.owns(p),
      current: () => change === this.#changes,
      done: (owned) => {
        this.#handover.finish();
        this.#vantage.sweep();
        const previous = this.#reportedMembers;
        this.#reportedMembers = members;
        this.#o.observe?.({ type: 'membership', members, previous, owned, unowned: this.unownedPods() });
      },
    }));
  }
}
