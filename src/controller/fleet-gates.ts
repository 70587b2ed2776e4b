import type { Clock } from '../kernel/index.ts';
import { podKey as podKeyOf } from '../kube/index.ts';
import type { Pod } from '../kube/index.ts';
import { conditionWriter } from './conditions.ts';
import type { PolicyEntry } from './policies.ts';

/**
 * Every replica watches every pod and keeps only its own targets (sharding
 * by pod UID, ADR 0004), so each can count, for each Enforce policy with a
 * readiness gate, the gated pods of the whole policy and the gates False on
 * pods that other replicas own, straight from the pods' status (ADR 0032).
 * This is that count, kept as pods change (one entry per gated pod and
 * policy), with the owner of each pod among the live members; owners are
 * computed again only when membership changes.
 */

/** Who owns a pod among the live members (rendezvous over the pod UID), and who they are. */
export interface FleetMembers {
  /** The live members (this replica included when it is one); `undefined` before it joined. */
  members(): readonly string[] | undefined;
  owner(members: readonly string[], uid: string): string | undefined;
}

interface GatedPod {
  readonly uid: string;
  /** The owner among the members; `''` when no live member owns it (no membership yet). */
  owner: string;
  /** Its gate is False for a probe failure (reason ProbeFailed) as the pod cache shows it. */
  readonly isFalse: boolean;
}

interface PolicyView {
  readonly type: string;
  readonly pods: Map<string, GatedPod>;
  readonly gatedBy: Map<string, number>;
  readonly falseBy: Map<string, number>;
  /** The pods whose gate is False (few: about the policy's cap). */
  readonly falseKeys: Set<string>;
  /** pod key → when this replica sent a False there that the cache did not show yet. */
  readonly sentFalse: Map<string, number>;
}

/** What the fleet shows of one policy, from this replica. */
export interface FleetView {
  readonly members: readonly string[];
  readonly gatedBy: ReadonlyMap<string, number>;
  /** False gates on pods this replica does not own. */
  readonly falseElsewhere: number;
  /** Its own pods whose gate is False in the cache, or to which it sent a False the cache does not show yet. */
  readonly ownFalse: ReadonlySet<string>;
}

/** A False gate written for a probe failure (what the cap counts; a container not running is held unready by the kubelet anyway). */
export const probeFailedReason = 'ProbeFailed';

/** A sent False the cache never showed stops counting after this (the write failed and is retried through the guard again, or was overwritten). */
const sentFalseTtlMs = 10_000;

const add = (m: Map<string, number>, k: string, by: number): void => {
  const n = (m.get(k) ?? 0) + by;
  if (n === 0) m.delete(k);
  else m.set(k, n);
};

export class FleetGates {
  readonly #self: string;
  readonly #fleet: FleetMembers | undefined;
  readonly #clock: Clock;
  readonly #views = new Map<string, PolicyView>();
  #members: readonly string[] = [];
  #membersKey: string | undefined;

  constructor(deps: { readonly self: string; readonly fleet?: FleetMembers | undefined; readonly clock: Clock }) {
    this.#self = deps.self;
    this.#fleet = deps.fleet;
    this.#clock = deps.clock;
  }

  /** The live members as last seen (this replica alone without sharding). */
  get members(): readonly string[] {
    this.#sync();
    return this.#members;
  }

  get self(): string {
    return this.#self;
  }

  /** The pod as the cache shows it now, for the policies that select it (`selecting`); every other policy forgets it. */
  note(pod: Pod, selecting: readonly PolicyEntry[]): void {
    this.#sync();
    const key = podKeyOf(pod);
    const keep = new Set<string>();
    for (const entry of selecting) {
      const type = entry.policy?.spec.mode === 'Enforce' ? entry.policy.spec.readiness?.conditionType : undefined;
      if (type === undefined) continue;
      const view = this.#view(entry.key, type);
      keep.add(entry.key);
      this.#set(view, key, gatedPod(pod, type, this.#ownerOf(pod.uid)));
    }
    for (const [policyKey, view] of this.#views) if (!keep.has(policyKey)) this.#set(view, key, undefined);
  }

  /** The pod is gone. */
  drop(key: string): void {
    for (const view of this.#views.values()) {
      this.#set(view, key, undefined);
      view.sentFalse.delete(key);
    }
  }

  /** The policy is gone or no longer writes gates. */
  forget(policyKey: string): void {
    this.#views.delete(policyKey);
  }

  /** This replica sent `status` for the policy's gate on the pod (a False counts as its own until the cache shows it). */
  sent(policyKey: string, key: string, status: 'True' | 'False'): void {
    const view = this.#views.get(policyKey);
    if (view === undefined) return;
    if (status === 'False' && view.pods.get(key)?.isFalse !== true) view.sentFalse.set(key, this.#clock.now());
    else view.sentFalse.delete(key);
  }

  /** The policy as the fleet shows it now. */
  view(policyKey: string): FleetView {
    this.#sync();
    const view = this.#views.get(policyKey);
    if (view === undefined) return { members: this.#members, gatedBy: new Map(), falseElsewhere: 0, ownFalse: new Set() };
    let elsewhere = 0;
    for (const [owner, n] of view.falseBy) if (owner !== this.#self) elsewhere += n;
    const ownFalse = new Set<string>();
    const now = this.#clock.now();
    for (const [key, at] of view.sentFalse) {
      const p = view.pods.get(key);
      if (p === undefined || p.isFalse || now - at > sentFalseTtlMs) view.sentFalse.delete(key);
      else if (p.owner === this.#self) ownFalse.add(key);
    }
    for (const key of view.falseKeys) if (view.pods.get(key)?.owner === this.#self) ownFalse.add(key);
    return { members: this.#members, gatedBy: view.gatedBy, falseElsewhere: elsewhere, ownFalse };
  }

  /** Whether the cache shows the policy's gate False (a probe failure) on this pod. */
  isFalse(policyKey: string, key: string): boolean {
    return this.#views.get(policyKey)?.pods.get(key)?.isFalse === true;
  }

  #view(policyKey: string, type: string): PolicyView {
    let view = this.#views.get(policyKey);
    if (view !== undefined && view.type !== type) {
      this.#views.delete(policyKey); // the policy now writes another gate: counted afresh
      view = undefined;
    }
    if (view === undefined) this.#views.set(policyKey, (view = { type, pods: new Map(), gatedBy: new Map(), falseBy: new Map(), falseKeys: new Set(), sentFalse: new Map() }));
    return view;
  }

  #set(view: PolicyView, key: string, next: GatedPod | undefined): void {
    const before = view.pods.get(key);
    if (before !== undefined) {
      add(view.gatedBy, before.owner, -1);
      if (before.isFalse) add(view.falseBy, before.owner, -1);
      view.falseKeys.delete(key);
    }
    if (next === undefined) {
      view.pods.delete(key);
      return;
    }
    view.pods.set(key, next);
    add(view.gatedBy, next.owner, 1);
    if (next.isFalse) {
      add(view.falseBy, next.owner, 1);
      view.falseKeys.add(key);
      view.sentFalse.delete(key);
    }
  }

  #ownerOf(uid: string): string {
    if (this.#fleet === undefined) return this.#self;
    return this.#members.length === 0 ? '' : (this.#fleet.owner(this.#members, uid) ?? '');
  }

  /** Membership changed: every pod's owner again (O(gated pods), on a membership change only). */
  #sync(): void {
    if (this.#fleet === undefined) {
      this.#members = [this.#self];
      return;
    }
    const members = this.#fleet.members() ?? [];
    const key = members.join('\n');
    if (key === this.#membersKey) return;
    this.#membersKey = key;
    this.#members = [...members];
    for (const view of this.#views.values()) {
      view.gatedBy.clear();
      view.falseBy.clear();
      for (const p of view.pods.values()) {
        p.owner = this.#ownerOf(p.uid);
        add(view.gatedBy, p.owner, 1);
        if (p.isFalse) add(view.falseBy, p.owner, 1);
      }
    }
  }
}

/** The pod as a gated pod of a policy writing `type`, or `undefined` when it is not one (not gated, terminating, done, another writer's condition). */
function gatedPod(pod: Pod, type: string, owner: string): GatedPod | undefined {
  if (pod.deletionTimestamp !== undefined || pod.phase === 'Succeeded' || pod.phase === 'Failed' || !pod.readinessGates.includes(type)) return undefined;
  if (conditionWriter(pod.conditions, type).by === 'foreign') return undefined;
  const c = pod.conditions.find((x) => x.type === type);
  return { uid: pod.uid, owner, isFalse: c?.status === 'False' && c.reason === probeFailedReason };
}
