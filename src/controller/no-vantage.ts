import { releaseReasons } from '../failopen/index.ts';
import type { Clock } from '../kernel/index.ts';
import { podKey as podKeyOf } from '../kube/index.ts';
import type { Pod } from '../kube/index.ts';
import type { GateCondition, GateWriter, PodRef } from '../writeback/index.ts';
import { conditionWriter, rfc3339 } from './conditions.ts';
import type { Observer, PolicyRef } from './events.ts';
import type { PolicyEntry } from './policies.ts';

/** The reason of a gate kept True because no replica may probe the pod from outside its node (ADR 0040). */
export const noVantageReason = 'NoVantage';

export interface NoVantageDeps {
  readonly clock: Clock;
  readonly observe: Observer;
  readonly gates: Pick<GateWriter, 'desire'>;
  readonly pods: ReadonlyMap<string, Pod>;
  /** No live member may probe the pod under its policies' spread (sharding decides). */
  readonly noVantage: (pod: Pod) => boolean;
}

interface Blind {
  readonly uid: string;
  /** The selecting policies that do not allow `spread: any`. */
  readonly policies: readonly string[];
  /** This replica keeps it (reports it, keeps its gate open). */
  readonly kept: boolean;
}

const spreadOf = (e: PolicyEntry): string => e.policy?.spec.vantage?.spread ?? 'node';
const refOf = (e: PolicyEntry): PolicyRef => ({ namespace: e.namespace, name: e.name, uid: e.uid });
const isLive = (pod: Pod): boolean => pod.phase !== 'Succeeded' && pod.phase !== 'Failed' && pod.deletionTimestamp === undefined;
const refOfPod = (pod: Pod): PodRef => ({ namespace: pod.namespace, name: pod.name, uid: pod.uid });
const blindMessage = (e: PolicyEntry, pod: Pod): string =>
  `ProbePolicy ${e.name} (vantage.spread ${spreadOf(e)}): no replica runs outside this pod's node ${pod.nodeName ?? '(not scheduled)'}; it is not probed and its readiness condition is kept True`;

/** The fail-open condition of a pod without a vantage. */
export function noVantageCondition(type: string, node: string | undefined, now: number): GateCondition {
  const at = rfc3339(now);
  const where = node === undefined ? 'its node' : `its node ${node}`;
  return { type, status: 'True', reason: noVantageReason, message: `outprobe fails open: no replica may probe this pod from outside ${where} (spec.vantage.spread; run more replicas on other nodes), so it is not probed`, lastTransitionTime: at, lastProbeTime: at };
}

/**
 * Pods without a vantage (ADR 0040): no replica runs where the pod's
 * policies allow its verdicts to come from. Such a pod is never probed from
 * its own node; the replica that keeps it (sharding's keeper) writes its
 * gate True with reason NoVantage (fail open, never stranded False; over a
 * True verdict too, since nothing renews it) and
 * sends one Event per pod per transition. Every replica books them (each
 * sees every pod), so the policy's status writer counts them.
 */
export class NoVantageKeeper {
  readonly #d: NoVantageDeps;
  /** pod key → its state while it has no vantage. */
  readonly #blind = new Map<string, Blind>();
  /** policy key → the kept count last reported (the gauge). */
  readonly #shown = new Map<string, number>();

  constructor(deps: NoVantageDeps) {
    this.#d = deps;
  }

  /**
   * The pod was reconciled: true when it has no vantage (nothing may probe
   * it here). `owned`: this replica is responsible for it.
   */
  reconcile(pod: Pod, selecting: readonly PolicyEntry[], owned: boolean): boolean {
    const key = podKeyOf(pod);
    const before = this.#blind.get(key);
    const was = before?.uid === pod.uid ? before : undefined;
    const strict = selecting.filter((e) => e.policy !== undefined && spreadOf(e) !== 'any');
    const live = isLive(pod);
    if (!live || strict.length === 0 || !this.#d.noVantage(pod)) {
      if (was !== undefined) this.#restored(pod, key, was, strict, owned && live);
      return false;
    }
    this.#blind.set(key, { uid: pod.uid, policies: strict.map((e) => e.key), kept: owned });
    if (owned) {
      if (was?.kept !== true) for (const e of strict) this.#d.observe({ type: 'no-vantage', pod: refOfPod(pod), policy: refOf(e), blind: true, message: blindMessage(e, pod) });
      this.#failOpen(pod, strict);
    }
    this.#report([...new Set([...strict.map((e) => e.key), ...(before?.policies ?? [])])]);
    return true;
  }

  /** The pod has a vantage again (or is gone from the policies): an Event from the replica that now probes it. */
  #restored(pod: Pod, key: string, was: Blind, strict: readonly PolicyEntry[], tell: boolean): void {
    this.#blind.delete(key);
    if (tell) for (const e of strict) this.#d.observe({ type: 'no-vantage', pod: refOfPod(pod), policy: refOf(e), blind: false, message: `ProbePolicy ${e.name}: a replica outside the pod's node probes it again` });
    this.#report(was.policies);
  }

  /** `keeper.count(policyKey)`, 0 without vantage. */
  static count(keeper: NoVantageKeeper | undefined, policyKey: string): number {
    return keeper === undefined ? 0 : keeper.count(policyKey);
  }

  /** The policy's pods without a vantage (every replica's view; the status writer's count). */
  count(policyKey: string): number {
    return this.#tally(policyKey, false);
  }

  #tally(policyKey: string, keptOnly: boolean): number {
    let n = 0;
    for (const [key, b] of this.#blind) {
      if (this.#d.pods.get(key)?.uid !== b.uid) {
        this.#blind.delete(key); // the pod is gone
        continue;
      }
      if (b.policies.includes(policyKey) && (!keptOnly || b.kept)) n++;
    }
    return n;
  }

  #report(policies: readonly string[]): void {
    for (const key of policies) {
      const n = this.#tally(key, true);
      if ((this.#shown.get(key) ?? 0) === n) continue;
      this.#shown.set(key, n);
      const [namespace = '', name = ''] = key.split('/');
      this.#d.observe({ type: 'no-vantage-count', policy: { namespace, name, uid: '' }, count: n });
    }
  }

  /** Keeps each Enforce readiness gate of the pod True with reason NoVantage (over a condition outprobe wrote, or its own type not written yet). */
  #failOpen(pod: Pod, policies: readonly PolicyEntry[]): void {
    for (const e of policies) {
      const type = e.policy?.spec.mode === 'Enforce' ? e.policy.spec.readiness?.conditionType : undefined;
      if (type === undefined || !pod.readinessGates.includes(type)) continue;
      if (conditionWriter(pod.conditions, type).by === 'foreign') continue;
      const c = pod.conditions.find((x) => x.type === type);
      if (c?.status === 'True' && c.reason === noVantageReason) continue;
      // Also over a True verdict: the pod is no longer probed, and its condition says so (the
      // status is passed only when it differs, so that the writer does not take True for done).
      this.#d.gates.desire(refOfPod(pod), noVantageCondition(type, pod.nodeName, this.#d.clock.now()), c?.status === 'True' ? undefined : c?.status);
    }
  }
}

/** Reasons whose message is not a verdict from a vantage (nothing probed it). */
const unprobed: ReadonlySet<string> = new Set([noVantageReason, ...releaseReasons]);

/**
 * The condition as written: its message names the vantage the verdict came
 * from (`here`: this replica's node and zone, ADR 0040), so `kubectl
 * describe pod` answers "who said this, from where". Kept within 1024
 * characters; conditions nothing probed are left as they are.
 */
export function stampVantage(condition: GateCondition, here: string | undefined): GateCondition {
  if (here === undefined || unprobed.has(condition.reason)) return condition;
  const suffix = ` [probed from ${here}]`;
  return { ...condition, message: `${condition.message.slice(0, Math.max(0, 1024 - suffix.length))}${suffix}` };
}

/** The controller's keeper, when sharding gives it a vantage (none without sharding: it probes every pod). */
export function noVantageKeeper(vantage: { noVantage(pod: Pod): boolean } | undefined, deps: Omit<NoVantageDeps, 'noVantage'>): NoVantageKeeper | undefined {
  return vantage === undefined ? undefined : new NoVantageKeeper({ ...deps, noVantage: (pod) => vantage.noVantage(pod) });
}

/** The target set's `blind` hook, when there is a keeper. */
export function blindHook(keeper: NoVantageKeeper | undefined): { blind?: (pod: Pod, selecting: readonly PolicyEntry[], owned: boolean) => boolean } {
  return keeper === undefined ? {} : { blind: (pod, selecting, owned) => keeper.reconcile(pod, selecting, owned) };
}
