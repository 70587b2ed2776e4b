import type { Clock } from '../kernel/index.ts';
import { podKey as podKeyOf } from '../kube/index.ts';
import type { Pod } from '../kube/index.ts';
import { allowanceOf, arrivals, holding, noHold, panicMessage, settling, stepHold } from '../panic/index.ts';
import type { Allowance, FailingPod, HoldState, PanicState } from '../panic/index.ts';
import { confirmedResult } from '../results/index.ts';
import { selects } from '../targets/index.ts';
import type { GateCondition, GateWriter, PodRef } from '../writeback/index.ts';
import { conditionReason, gateStatus, panicFailOpenCondition, panicFailOpenReason, repairCondition } from './conditions.ts';
import type { Observer, PolicyRef } from './events.ts';
import { FleetGates, probeFailedReason } from './fleet-gates.ts';
import type { FleetMembers, FleetView } from './fleet-gates.ts';
import { PanicGuard } from './panic.ts';
import type { PanicReport } from './panic.ts';
import type { PolicyEntry } from './policies.ts';
import type { Target } from './runner.ts';

/**
 * The readiness guards around a False gate (ADR 0015, 0032), moved out of
 * the target set: the panic threshold decided over this replica's failing
 * pods against its allowance of the policy's fleet-wide cap, the hold at the
 * start of a mass failure, and the check at send time that no False goes out
 * beyond the allowance (the GateWriter asks it right before every write).
 * Panic only ever keeps a gate True (fails open): it never writes a False
 * over a True that the probes did not ask for.
 */
export interface ReadinessGuardDeps {
  readonly clock: Clock;
  readonly observe: Observer;
  readonly gates: GateWriter;
  readonly policies: ReadonlyMap<string, PolicyEntry>;
  readonly pods: ReadonlyMap<string, Pod>;
  readonly owns: (pod: Pod) => boolean;
  /** This replica's identity (its member name when sharded). */
  readonly self: string;
  /** Live members and pod owners (sharding). @default this replica owns every pod */
  readonly fleet?: FleetMembers | undefined;
  /** A target of this replica by key. */
  readonly target: (key: string) => Target | undefined;
  /** The pod is the target's, lists the gate, is this replica's and no other writer set the condition. */
  readonly writesHere: (target: Target, pod: Pod, type: string) => boolean;
  /** This replica's readiness target writing gate `type` on the pod, if any. */
  readonly readinessTarget: (uid: string, type: string) => Target | undefined;
  /** The policy's gated count on this replica and its confirmed-failing readiness targets. */
  readonly tally: (policyKey: string) => { readonly gated: number; readonly readinessFailing: ReadonlySet<string> } | undefined;
}

const podRef = (pod: Pod): PodRef => ({ uid: pod.uid, namespace: pod.namespace, name: pod.name });


/** The Enforce policy writes gate `type` and selects the pod. */
function writesType(e: PolicyEntry, pod: Pod, type: string): boolean {
  const p = e.policy;
  return e.namespace === pod.namespace && p?.spec.mode === 'Enforce' && p.spec.readiness?.conditionType === type && selects(p, pod);
}

/** Order of claim on a condition type (as the target set's): the older policy, then the smaller key. */
function olderFirst(a: PolicyEntry, b: PolicyEntry): number {
  const ca = a.created ?? '';
  const cb = b.created ?? '';
  return ca < cb ? -1 : ca > cb ? 1 : a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

export class ReadinessGuard {
  readonly #d: ReadinessGuardDeps;
  readonly #panic: PanicGuard;
  readonly fleet: FleetGates;
  /** policy key → its hold, and the arrivals and probe period it was last decided with. */
  readonly #holds = new Map<string, { readonly state: HoldState; readonly arrived: number; readonly periodMs: number }>();

  constructor(deps: ReadinessGuardDeps) {
    this.#d = deps;
    this.#panic = new PanicGuard(deps.observe);
    this.fleet = new FleetGates({ self: deps.self, fleet: deps.fleet, clock: deps.clock });
  }

  /** The pod as the cache shows it now, for the policies that select it. */
  notePod(pod: Pod, selecting: readonly PolicyEntry[]): void {
    this.fleet.note(pod, selecting);
  }

  dropPod(key: string): void {
    this.fleet.drop(key);
  }

  /** The policy is gone: its panic (if any) ends, its counts go. */
  forget(policyKey: string): void {
    this.#panic.forget(policyKey);
    this.fleet.forget(policyKey);
    this.#holds.delete(policyKey);
  }

  /** Every policy decided again (pods came, went or changed owner; peers' gates changed). */
  step(): void {
    for (const key of this.#d.policies.keys()) this.apply(key);
  }

  /** The panic threshold keeps this failing pod True (nothing to repair to False). */
  failsOpen(policyKey: string, uid: string): boolean {
    return this.#panic.state(policyKey)?.failOpen.includes(uid) ?? false;
  }

  /** This replica's panic state of a policy, for status and sharding. */
  report(policyKey: string): PanicReport | null {
    return this.#panic.report(policyKey);
  }

  /** This replica's allowance of the policy's cap now. */
  allowance(policyKey: string): Allowance & { readonly view: FleetView } | undefined {
    const readiness = this.#readiness(policyKey);
    if (readiness === null) return undefined;
    const view = this.fleet.view(policyKey);
    const a = allowanceOf({ maxUnreadyPercent: readiness.maxUnreadyPercent, self: this.fleet.self, members: view.members, gatedBy: view.gatedBy, falseElsewhere: view.falseElsewhere });
    return { ...a, view };
  }

  #readiness(policyKey: string): { readonly maxUnreadyPercent: number; readonly conditionType: string } | null {
    const entry = this.#d.policies.get(policyKey);
    return entry?.policy?.spec.mode === 'Enforce' ? entry.policy.spec.readiness : null;
  }

  /**
   * Decides the policy's panic threshold again over the gated pods whose gate
   * this replica writes, against its allowance of the policy's cap (ADR
   * 0032), and writes what changed: a failing pod held False gets its failure
   * condition, one kept True gets PanicFailOpen.
   */
  apply(policyKey: string): void {
    const entry = this.#d.policies.get(policyKey);
    const readiness = this.#readiness(policyKey);
    if (entry === undefined || readiness === null) {
      this.forget(policyKey);
      return;
    }
    const ref: PolicyRef = { namespace: entry.namespace, name: entry.name, uid: entry.uid };
    const tally = this.#d.tally(policyKey);
    const a = this.allowance(policyKey);
    if (a === undefined) return;
    // The candidates are the policy's confirmed-failing readiness targets, kept as they change: a
    // step costs what fails, not a walk over every pod (issues 17, 18).
    const failing = tally === undefined || tally.readinessFailing.size === 0 ? [] : this.#failingGated(tally.readinessFailing, readiness.conditionType);
    const now = this.#d.clock.now();
    const pods: FailingPod[] = failing.map(({ target, pod }) => ({ uid: pod.uid, since: this.#failingSince(target, pod, now) }));
    // Its own gates already False that are not among its failures (inherited in a handover, its probes
    // not at a threshold yet; a False it sent the cache does not show yet) take their places first.
    const candidates = new Map(failing.map(({ pod }) => [podKeyOf(pod), pod.uid]));
    let other = 0;
    const alreadyFalse = new Set<string>();
    for (const key of a.view.ownFalse) {
      const uid = candidates.get(key);
      if (uid === undefined) other++;
      else alreadyFalse.add(uid);
    }
    const limit = Math.max(0, a.allowance - other);
    const exitLimit = Math.max(0, a.exitAllowance - other);
    this.#stepHold(policyKey, ref, { failing, pods, limit, now });
    const state = this.#panic.evaluate(policyKey, ref, { maxUnreadyPercent: readiness.maxUnreadyPercent, gated: tally?.gated ?? 0, failing: pods, limit, exitLimit, share: a.share, alreadyFalse });
    for (const { target, pod } of failing) this.#writePanic(target, pod, state);
  }

  /** The hold at the start of a mass failure: on while failures arrive faster than this replica may hold them. */
  #stepHold(policyKey: string, ref: PolicyRef, o: { readonly failing: readonly { readonly target: Target }[]; readonly pods: readonly FailingPod[]; readonly limit: number; readonly now: number }): void {
    const { failing, pods, limit, now } = o;
    const before = this.#holds.get(policyKey)?.state ?? noHold;
    if (pods.length === 0 && before.until === undefined && !before.served) {
      this.#holds.delete(policyKey);
      return;
    }
    let windowMs = 0;
    let periodMs = 0;
    for (const { target } of failing) {
      periodMs = Math.max(periodMs, target.plan.probe.periodSeconds * 1000);
      windowMs = Math.max(windowMs, target.plan.probe.periodSeconds * target.plan.probe.failureThreshold * 1000);
    }
    const since = pods.map((p) => p.since);
    const next = stepHold(before, { now, windowMs, since, allowance: limit });
    const arrived = arrivals({ now, windowMs, since });
    if (next === noHold && arrived < 2) this.#holds.delete(policyKey);
    else this.#holds.set(policyKey, { state: next, arrived, periodMs });
    const started = next.until !== undefined && before.until === undefined;
    const ended = before.until !== undefined && next.until === undefined;
    if (started || ended) this.#d.observe({ type: 'readiness-hold', policy: ref, holding: started, arrived, allowance: limit, windowMs });
  }

  /** A hold is on for the policy now. */
  holding(policyKey: string): boolean {
    return holding(this.#holds.get(policyKey)?.state ?? noHold, this.#d.clock.now());
  }

  /**
   * Asked right before a gate condition is sent: a False for a probe failure
   * goes out only while this replica's False gates of the policy, this one
   * included, stay within its allowance, and not during a hold (a False over
   * a False the cache already shows changes no count and goes). Everything
   * else (True, a container not running) is not this guard's.
   */
  maySend(condition: GateCondition, ref: PodRef): boolean {
    return this.whyHeld(condition, ref) === null;
  }

  /** Why `maySend` refuses the condition now (for `kubectl outprobe explain`), `null` when it may go. */
  whyHeld(condition: GateCondition, ref: PodRef): string | null {
    if (condition.status !== 'False' || condition.reason !== probeFailedReason) return null;
    const found = this.#policyOf(ref, condition.type);
    if (found === undefined) return null;
    const { policyKey, pod } = found;
    if (!this.#d.owns(pod)) return 'this replica no longer owns the pod';
    const key = podKeyOf(pod);
    if (this.fleet.isFalse(policyKey, key)) return null;
    if (this.holding(policyKey)) return `readiness hold: failures of ${policyKey} arrive faster than this replica may hold them False (start of a mass failure, ADR 0032)`;
    if (this.#settling(policyKey, pod.uid, condition.type)) return `readiness hold: another failure of ${policyKey} arrived within the window; waiting one period to see whether a burst forms (ADR 0032)`;
    const a = this.allowance(policyKey);
    if (a === undefined) return null;
    let own = 0;
    for (const k of a.view.ownFalse) if (k !== key) own++;
    return own + 1 <= a.allowance ? null : `readiness cap: this replica already holds ${own} of ${policyKey}'s pods False, its allowance under maxUnreadyPercent is ${a.allowance} (ADR 0032)`;
  }

  /** Another failure of the policy arrived within the window and this one is younger than a period: it waits to see whether a burst forms. */
  #settling(policyKey: string, uid: string, type: string): boolean {
    const h = this.#holds.get(policyKey);
    const since = this.#d.readinessTarget(uid, type)?.failure?.since;
    return h !== undefined && since !== undefined && settling({ now: this.#d.clock.now(), since, periodMs: h.periodMs, arrived: h.arrived });
  }

  /** The condition is being sent now (every guard agreed): a False counts as this replica's until the cache shows it. */
  sending(condition: GateCondition, ref: PodRef): void {
    const found = this.#policyOf(ref, condition.type);
    if (found !== undefined) this.fleet.sent(found.policyKey, podKeyOf(found.pod), condition.status);
  }

  /** The Enforce policy whose gate of this type the pod carries (the older one when two claim it), and the pod as cached. */
  #policyOf(ref: PodRef, type: string): { readonly policyKey: string; readonly pod: Pod } | undefined {
    const pod = this.#d.pods.get(`${ref.namespace}/${ref.name}`);
    if (pod === undefined || pod.uid !== ref.uid) return undefined;
    let best: PolicyEntry | undefined;
    for (const e of this.#d.policies.values()) if (writesType(e, pod, type) && (best === undefined || olderFirst(e, best) < 0)) best = e;
    return best === undefined ? undefined : { policyKey: best.key, pod };
  }

  /**
   * Of the given readiness targets (a policy's confirmed-failing ones), those
   * on pods that list its gate, whose gate this replica writes, and whose
   * probes confirm Failure.
   */
  #failingGated(keys: ReadonlySet<string>, type: string): { readonly target: Target; readonly pod: Pod }[] {
    const out: { target: Target; pod: Pod }[] = [];
    for (const key of keys) {
      const target = this.#d.target(key);
      if (target === undefined || target.plan.kind !== 'readiness' || confirmedResult(target.state) !== 'failure') continue;
      const pod = this.#d.pods.get(target.plan.podKey);
      if (pod === undefined || pod.deletionTimestamp !== undefined || !this.#d.writesHere(target, pod, type)) continue;
      out.push({ target, pod });
    }
    return out;
  }

  /**
   * When the target turned failing: its failure transition, or for an inherited False the
   * condition's time, first seen now. A pod whose gate the cache shows False since earlier (a
   * False inherited in a handover) counts from then: it is held before newer failures, so the
   * decision keeps the Falses already out rather than trading them for new ones.
   */
  #failingSince(target: Target, pod: Pod, now: number): number {
    const type = target.plan.conditionType ?? '';
    const c = pod.conditions.find((x) => x.type === type);
    const shownAt = c?.status === 'False' && c.lastTransitionTime !== undefined ? Date.parse(c.lastTransitionTime) : Number.NaN;
    const shown = Number.isFinite(shownAt) ? shownAt : undefined;
    if (target.failure === null) target.failure = { since: shown ?? now, condition: null };
    return shown === undefined ? target.failure.since : Math.min(shown, target.failure.since);
  }

  #writePanic(target: Target, pod: Pod, state: PanicState): void {
    const type = target.plan.conditionType;
    if (type === undefined) return;
    const have = gateStatus(pod, type);
    const desired = this.#d.gates.desired(pod.uid, type);
    const now = this.#d.clock.now();
    if (state.held.has(pod.uid)) {
      const condition = target.failure?.condition ?? null;
      if (condition !== null) this.#d.gates.desire(podRef(pod), condition, have);
      else if (desired?.reason === panicFailOpenReason || conditionReason(pod, type) === panicFailOpenReason) {
        // An inherited False this replica (or an earlier one) failed open: back to False now.
        this.#d.gates.desire(podRef(pod), repairCondition(type, target.plan.container, 'False', now, { desired: undefined, lastFailure: target.lastFailure }), have);
      }
      return;
    }
    if (desired?.reason === panicFailOpenReason) return;
    const entry = this.#d.policies.get(target.plan.policy);
    const text = { policy: `${entry?.namespace ?? ''}/${entry?.name ?? ''}`, counts: panicMessage({ gated: state.gated, failing: state.failing, held: state.held.size, maxUnready: state.maxUnready, maxUnreadyPercent: state.maxUnreadyPercent }), output: target.lastFailure };
    this.#d.gates.desire(podRef(pod), panicFailOpenCondition(type, now, text), have);
  }
}
