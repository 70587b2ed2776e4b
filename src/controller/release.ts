import { claimed, orphaned, releasable, releaseCondition, releaseReasons, releasedByChange, strandedGates } from '../failopen/index.ts';
import type { ReleaseCause, Writer } from '../failopen/index.ts';
import type { Clock } from '../kernel/index.ts';
import type { Pod } from '../kube/index.ts';
import type { ProbePolicy } from '../policy/index.ts';
import { selects } from '../targets/index.ts';
import type { GateWriter } from '../writeback/index.ts';
import { conditionWriter, rfc3339 } from './conditions.ts';
import type { PolicyEntry } from './policies.ts';

export interface GateReleaseDeps {
  readonly clock: Clock;
  readonly gates: GateWriter;
  readonly policies: ReadonlyMap<string, PolicyEntry>;
  readonly pods: ReadonlyMap<string, Pod>;
  /**
   * Both caches hold every pod and policy: before that a gate may look
   * unclaimed only because its policy is not listed yet, so nothing is
   * released (the controller sweeps once they are).
   */
  readonly synced: () => boolean;
  /** Does this replica own the pod (sharding)? Only the owner releases, as only the owner writes. */
  readonly owns: (pod: Pod) => boolean;
  /**
   * Is any replica a live member of the fleet (a live, proven shard Lease,
   * this replica's or a peer's)? @default always (no sharding: this replica is the fleet)
   */
  readonly fleetLive?: () => boolean;
  /** How long the fleet may have no live member before every gate outprobe wrote is released (orphans). @default 30000 */
  readonly orphanAfterMs?: number;
}

/**
 * The thin shell of the fail-open rules (src/failopen, ADR 0035): reads the
 * informers' pods and policies, and queues each release through the gate
 * writer (a True: never held by the peer guard or the second opinion). A
 * release replaces whatever the writer still desired for the gate, so a False
 * queued before the change never goes out after it.
 */
export class GateRelease {
  readonly #d: GateReleaseDeps;
  /** Since when this replica has seen no live member of the fleet; undefined while there is one. */
  #noFleetSince: number | undefined;

  constructor(deps: GateReleaseDeps) {
    this.#d = deps;
  }

  /**
   * A policy changed (`after`: the entry now, `undefined` when deleted): the
   * gates it stops writing on the pods of its namespace are released, unless
   * another valid Enforce policy writes the same type there; the pods are
   * then checked for gates nothing writes any more (`pod`).
   */
  policyChanged(before: PolicyEntry | undefined, after: PolicyEntry | undefined): void {
    const entry = after ?? before;
    if (entry === undefined || !this.#d.synced()) return;
    const policy = after === undefined ? 'deleted' : after.policy;
    const name = `${entry.namespace}/${entry.name}`;
    // Only the pods the policy selected or selects can gain or lose its gate (a spec change
    // costs the pods it selects, ADR 0019); what it selected while Invalid is not known: all.
    const old = before?.policy;
    const now = after?.policy;
    const concerned = (pod: Pod): boolean => old === undefined || selects(old, pod) || (now !== undefined && selects(now, pod));
    for (const pod of this.#d.pods.values()) {
      if (pod.namespace !== entry.namespace || !concerned(pod) || !this.#d.owns(pod)) continue;
      const change = releasedByChange(before?.policy, policy, pod);
      if (change !== null && !this.#claimed(pod, change.type)) {
        const writer = conditionWriter(pod.conditions, change.type).by;
        if (releasable(pod, change.type, writer, true)) this.#release(pod, change.type, change.cause, { policy: name, fresh: true });
      }
      this.pod(pod);
    }
  }

  /** The level rule on one pod this replica owns: a gate outprobe wrote False that no valid Enforce policy writes any more is released. */
  pod(pod: Pod): void {
    if (pod.readinessGates.length === 0 || !this.#d.synced() || !this.#d.owns(pod) || pod.phase === 'Succeeded' || pod.phase === 'Failed') return;
    const writerOf = (t: string): Writer => conditionWriter(pod.conditions, t).by;
    // Most gated pods are True: no walk over the policies for them (a pod event costs what is stranded).
    if (!pod.readinessGates.some((t) => releasable(pod, t, writerOf(t), false))) return;
    for (const type of strandedGates(pod, this.#policiesOf(pod.namespace), writerOf)) this.#release(pod, type, 'unclaimed');
  }

  /** The level rule over every pod (after the caches synced, after ownership changed). */
  sweep(): void {
    for (const pod of this.#d.pods.values()) this.pod(pod);
  }

  /**
   * Orphans (ADR 0035): while this replica sees no live member of the fleet
   * (none owns any pod), after the bound every gate outprobe wrote and left
   * not True is released, on every pod it sees. A live member probes again
   * and writes False where its own probes confirm a failure.
   */
  orphans(): void {
    const now = this.#d.clock.now();
    if (this.#d.fleetLive?.() !== false) {
      this.#noFleetSince = undefined;
      return;
    }
    this.#noFleetSince ??= now;
    const boundMs = this.#d.orphanAfterMs ?? 30_000;
    if (!orphaned(this.#noFleetSince, now, boundMs)) return;
    for (const pod of this.#d.pods.values()) {
      if (pod.phase === 'Succeeded' || pod.phase === 'Failed') continue;
      for (const type of pod.readinessGates) {
        if (releasable(pod, type, conditionWriter(pod.conditions, type).by, false)) this.#release(pod, type, 'orphaned', { boundSeconds: Math.round(boundMs / 1000) });
      }
    }
  }

  #policiesOf(namespace: string): (ProbePolicy | undefined)[] {
    const out: (ProbePolicy | undefined)[] = [];
    for (const e of this.#d.policies.values()) if (e.namespace === namespace && e.policy !== undefined) out.push(e.policy);
    return out;
  }

  #claimed(pod: Pod, type: string): boolean {
    return claimed(this.#policiesOf(pod.namespace), pod, type);
  }

  /**
   * Queues the release. `fresh`: a change this replica saw, in its own words.
   * Otherwise (the level rule, orphans) a release already desired for the gate
   * keeps its words, e.g. the cause of the change just before; desired again,
   * the gate writer writes it again if another writer overwrote it.
   */
  #release(pod: Pod, type: string, cause: ReleaseCause, detail: { readonly policy?: string; readonly boundSeconds?: number; readonly fresh?: boolean } = {}): void {
    const ref = { uid: pod.uid, namespace: pod.namespace, name: pod.name };
    const have = pod.conditions.find((c) => c.type === type)?.status;
    const desired = this.#d.gates.desired(pod.uid, type);
    if (detail.fresh !== true && desired?.status === 'True' && releaseReasons.includes(desired.reason)) {
      this.#d.gates.desire(ref, desired, have);
      return;
    }
    this.#d.gates.desire(ref, releaseCondition(type, cause, rfc3339(this.#d.clock.now()), detail), have);
  }
}
