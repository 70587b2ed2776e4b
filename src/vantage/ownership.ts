import type { Pod } from '../kube/index.ts';
import { owner, ranked } from '../sharding/rendezvous.ts';
import { assign, secondOpinionOrder } from './eligible.ts';
import { vantagesOf } from './several.ts';
import type { Assignment, PodPlace, Spread, VantageMember } from './eligible.ts';

/** What ownership needs to know beyond the members: each pod's spread and each node's zone. */
export interface VantageSource {
  /** The strictest `spec.vantage.spread` of the valid policies selecting the pod (`node` when none does). */
  spreadOf(pod: Pod): Spread;
  /**
   * The node's `topology.kubernetes.io/zone` as read from its Node: a string,
   * `null` when the Node was read and has no zone, `undefined` when it is not
   * known (not read yet, or not readable: RBAC).
   */
  zoneOf(node: string): string | null | undefined;
}

/** A live member as membership proved it: its node from its pod, the zone its Lease declares (used only where the Node cannot be read). */
export interface ProvenPlace {
  readonly identity: string;
  /** '' when unknown (a declared member whose Lease names no pod). */
  readonly nodeName: string;
  readonly zone?: string | undefined;
}

interface Cached {
  /** The members' generation it was assigned under: its place and spread outlive it, its assignment does not. */
  readonly gen: number;
  readonly node: string | undefined;
  readonly spread: Spread;
  readonly place: PodPlace;
  readonly assignment: Assignment;
}

/**
 * Pod ownership with vantage rules (ADR 0040): rendezvous hashing of the pod
 * UID over the members eligible for the pod, cached per pod until the
 * members, their places or the pod's node change. Without a source it is
 * plain rendezvous over every member (what sharding did before).
 *
 * A change of members costs nothing per pod (ADR 0073): it starts a new
 * generation, and a pod is assigned again when next asked. Its place and
 * spread as last seen are kept meanwhile for `responsibleAmong` and the
 * second opinion's order (a pod the resync has not reached yet); `sweep`
 * drops the pods not assigned since the change (gone).
 */
export class VantageOwnership {
  readonly #source: VantageSource | undefined;
  #members: readonly VantageMember[] = [];
  /** Members' places, the current ones and those of the previous set (a handover looks back at who owned a pod). */
  #known = new Map<string, VantageMember>();
  #signature = '';
  #gen = 0;
  readonly #cache = new Map<string, Cached>();

  constructor(source: VantageSource | undefined) {
    this.#source = source;
  }

  get enabled(): boolean {
    return this.#source !== undefined;
  }

  /** The live members (sorted identities) and their proven places; true when anything vantage depends on changed. */
  setMembers(ids: readonly string[], places: readonly ProvenPlace[]): boolean {
    const byId = new Map(places.map((p) => [p.identity, p]));
    const members = ids.map((identity): VantageMember => {
      const p = byId.get(identity);
      const node = p === undefined || p.nodeName === '' ? undefined : p.nodeName;
      return { identity, node, zone: this.#zone(node, p?.zone) };
    });
    const signature = members.map((m) => `${m.identity}@${m.node ?? ''}/${m.zone ?? ''}`).join('\n');
    if (signature === this.#signature) return false;
    this.#signature = signature;
    this.#known = new Map([...this.#members, ...members].map((m) => [m.identity, m]));
    this.#members = members;
    this.#gen++;
    return true;
  }

  /** Zones (or spreads) may have changed: every pod is assigned again. */
  invalidate(): void {
    this.#gen++;
    this.#signature = '';
  }

  /** Forgets the pods not assigned since the members last changed: once every pod known was, those are gone. */
  sweep(): void {
    for (const [uid, c] of this.#cache) if (c.gen !== this.#gen) this.#cache.delete(uid);
  }

  get members(): readonly VantageMember[] {
    return this.#members;
  }

  /** Who probes the pod, or NoVantage and who keeps it. */
  assignment(pod: Pod): Assignment {
    const ids = this.#members.map((m) => m.identity);
    if (this.#source === undefined) {
      const o = owner(ids, pod.uid);
      return o === undefined ? { kind: 'none', keeper: undefined } : { kind: 'owner', identity: o };
    }
    const spread = this.#source.spreadOf(pod);
    const hit = this.#cache.get(pod.uid);
    if (hit !== undefined && hit.gen === this.#gen && hit.node === pod.nodeName && hit.spread === spread && this.#sameZone(hit)) return hit.assignment;
    const place = this.#place(pod.nodeName, spread);
    const assignment = assign(this.#members, pod.uid, place, spread);
    this.#cache.set(pod.uid, { gen: this.#gen, node: pod.nodeName, spread, place, assignment });
    return assignment;
  }

  /** The member responsible for the pod: its owner, or for a pod without a vantage its keeper. */
  responsible(pod: Pod): string | undefined {
    const a = this.assignment(pod);
    return a.kind === 'owner' ? a.identity : a.keeper;
  }

  /**
   * Who was responsible for the pod among `members` (identities), with the
   * places last known: the handover's view of a past membership.
   */
  responsibleAmong(members: readonly string[], uid: string): string | undefined {
    return this.#responsibleAmong(this.#known, members, uid);
  }

  /**
   * `responsibleAmong` with the members' places known now, kept for a
   * handover applied pod by pod later (ADR 0073): a newer change must not
   * make an older one look back with places it has since forgotten. The
   * pod's own place is read when asked (`assignment` it first).
   */
  view(): (members: readonly string[], uid: string) => string | undefined {
    const known = this.#known;
    return (members, uid) => this.#responsibleAmong(known, members, uid);
  }

  #responsibleAmong(known: ReadonlyMap<string, VantageMember>, members: readonly string[], uid: string): string | undefined {
    const hit = this.#cache.get(uid);
    if (this.#source === undefined || hit === undefined) return owner(members, uid);
    const list = members.map((id) => known.get(id) ?? { identity: id, node: undefined, zone: undefined });
    const a = assign(list, uid, hit.place, hit.spread);
    return a.kind === 'owner' ? a.identity : a.keeper;
  }

  /**
   * The pod's vantages, owner first (ADR 0058): up to `count` eligible
   * members. Without a source, plain rendezvous order over every member.
   */
  vantages(pod: Pod, count: number): string[] {
    if (this.#source === undefined) return ranked(this.#members.map((m) => m.identity), pod.uid).slice(0, count);
    if (this.assignment(pod).kind === 'none') return [];
    const hit = this.#cache.get(pod.uid);
    return hit === undefined ? [] : vantagesOf(this.#members, pod.uid, hit.place, hit.spread, count);
  }

  /** The peers to ask for a second opinion on the pod, best first: eligible ones only (never the pod's own node). */
  secondOpinionOrder(podUid: string, candidates: readonly string[]): string[] {
    const hit = this.#cache.get(podUid);
    if (this.#source === undefined || hit === undefined) return ranked(candidates, podUid);
    return secondOpinionOrder(this.#members, podUid, hit.place, hit.spread, candidates);
  }

  /**
   * A zone-spread pod's node still has the zone it was placed with (ADR
   * 0071). Asking is what makes the zone cache read a pod's node again after
   * its TTL (a relabelled node): nothing else asks for the nodes only pods
   * run on, so without it a pod's zone was read once and kept for good.
   */
  #sameZone(hit: Cached): boolean {
    if (hit.spread !== 'zone' || hit.node === undefined) return true;
    return (this.#source?.zoneOf(hit.node) ?? undefined) === hit.place.zone;
  }

  #place(node: string | undefined, spread: Spread): PodPlace {
    if (node === undefined || spread !== 'zone') return { node, zone: undefined };
    return { node, zone: this.#source?.zoneOf(node) ?? undefined };
  }

  /** A member's zone: its Node's label when the Node was read; the Lease's declaration only where it could not be. */
  #zone(node: string | undefined, declared: string | undefined): string | undefined {
    if (node === undefined) return undefined;
    const read = this.#source?.zoneOf(node);
    return read === undefined ? declared : (read ?? undefined);
  }
}
