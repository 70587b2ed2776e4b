import type { Clock } from '../kernel/index.ts';
import { flatKey, podKey as podKeyOf } from '../kube/index.ts';
import type { Pod } from '../kube/index.ts';
import type { PassResult, Scheduler, StallGuard } from '../probing/index.ts';
import { decideDivergence, divergenceMessage } from '../divergence/index.ts';
import type { Divergence } from '../divergence/index.ts';
import { confirmedResult } from '../results/index.ts';
import type { Transition } from '../results/index.ts';
import { planTargets, samePlannedProbe, selects } from '../targets/index.ts';
import type { AddressGuard, PlanIssue, TargetPlan } from '../targets/index.ts';
import type { BudgetCounts, BudgetPod, GateWriter, PodRef } from '../writeback/index.ts';
import type { StatusInput } from '../status/index.ts';
import { conditionReason, conditionWriter, gateConditionFor, gateStatus, repairCondition } from './conditions.ts';
import type { Observer } from './events.ts';
import { invalidMessage } from './policies.ts';
import type { PolicyEntry } from './policies.ts';
import type { RemediationRequest, Remediator } from './remediation.ts';
import { ReadinessGuard } from './readiness-guard.ts';
import type { FleetMembers } from './fleet-gates.ts';
import { PolicyTally, markFields } from './policy-tally.ts';
import type { PodMark } from './policy-tally.ts';
import type { PanicReport } from './panic.ts';
import { newTarget, replan, runPass } from './runner.ts';
import { noVantageReason } from './no-vantage.ts';
import { TargetScheduling, wakesAtOnce } from './scheduling.ts';
import type { PlanCause } from './first-pass.ts';
import type { Probers, Target } from './runner.ts';

export interface TargetSetDeps {
  readonly clock: Clock;
  readonly observe: Observer;
  readonly scheduler: Scheduler;
  readonly gates: GateWriter;
  readonly guard: AddressGuard;
  readonly probers: Probers;
  readonly policies: ReadonlyMap<string, PolicyEntry>;
  readonly pods: ReadonlyMap<string, Pod>;
  readonly remediate: (req: RemediationRequest) => void;
  readonly owns: (pod: Pod) => boolean;
  /**
   * When a newly planned target's first pass falls, given the time it could
   * run at the earliest (ADR 0019). @default spreadDueAt: at the target's own
   * phase in its period
   */
  readonly spread?: (key: string, periodMs: number, now: number) => number;
  /**
   * When this replica gained the pod from another member in a shard
   * handover; a target planned within a period of that catches up a slot the
   * hand-off may have lost (`handoverFirstPass`, ADR 0019). @default never
   */
  readonly gainedAt?: (pod: Pod) => number | undefined;
  /**
   * When this replica began: a container started since, planned from its
   * pod's event, is new and probed at once (ADR 0065). @default the set's creation
   */
  readonly since?: number;
  /** Voids failed attempts that overlapped a stall of this process (ADR 0016). @default none */
  readonly stall?: StallGuard | undefined;
  /** This replica's name, in divergence Events ("fails from replica X"). @default 'outprobe' */
  readonly replica?: string | undefined;
  /** Live members and pod owners, for the fleet-wide readiness cap (ADR 0032). @default this replica alone */
  readonly fleet?: FleetMembers | undefined;
  /** The pod has no vantage (ADR 0040, NoVantageKeeper): nothing is probed on it here. @default never */
  readonly blind?: (pod: Pod, selecting: readonly PolicyEntry[], owned: boolean) => boolean;
}

const podRef = (pod: Pod): PodRef => ({ uid: pod.uid, namespace: pod.namespace, name: pod.name });


/** Another writer (not outprobe) set this pod's condition of this type: outprobe leaves it alone. */
const foreignGate = (pod: Pod, type: string): boolean => conditionWriter(pod.conditions, type).by === 'foreign';

/** Order of claim on a condition type: the older policy (then the smaller key) keeps it. */
const olderFirst = (a: PolicyEntry, b: PolicyEntry): number =>
  (a.created ?? '') < (b.created ?? '') ? -1 : (a.created ?? '') > (b.created ?? '') ? 1 : a.key < b.key ? -1 : a.key > b.key ? 1 : 0;

/**
 * The kubelet's Ready (kubelet-probes.md §7.2): ContainersReady and every
 * readiness gate True. Computed here rather than read from `Ready`, which the
 * kubelet recomputes only on its next sync after a gate changes (#86485).
 */
function kubeletReady(pod: Pod): boolean {
  if (gateStatus(pod, 'Ready') === 'True') return true;
  return gateStatus(pod, 'ContainersReady') === 'True' && pod.readinessGates.every((g) => gateStatus(pod, g) === 'True');
}

/**
 * Every probe target of this replica, keyed like the results stage, with the
 * scheduler entries that run them and the hooks that turn their transitions
 * into gate writes and remediation requests.
 */
export class TargetSet {
  readonly #d: TargetSetDeps;
  readonly #targets = new Map<string, Target>();
  /** pod UID → its targets' keys (a small array: most pods have one to three targets). */
  readonly #byPod = new Map<string, string[]>();
  /** policy key → its targets' keys. */
  readonly #byPolicy = new Map<string, Set<string>>();
  /** policy key → its status counts over the pods it selects, kept as they change. */
  readonly #tallies = new Map<string, PolicyTally>();
  /** pod key → the keys of the valid policies that select it (whose tallies hold a mark for it). */
  readonly #podPolicies = new Map<string, readonly string[]>();
  /** pod key → its position in the informer's store (a Map: insertion order, kept on update). */
  readonly #seq = new Map<string, number>();
  #nextSeq = 0;
  readonly #planIssues = new Map<string, Map<string, PlanIssue>>();
  /** policy key → pod UID → why the policy does not write its gate there (an older policy claims the type). */
  readonly #conflicts = new Map<string, Map<string, string>>();
  readonly #readiness: ReadinessGuard;
  readonly #scheduling: TargetScheduling;

  constructor(deps: TargetSetDeps) {
    this.#d = deps;
    this.#scheduling = new TargetScheduling(deps);
    this.#readiness = new ReadinessGuard({
      clock: deps.clock,
      observe: deps.observe,
      gates: deps.gates,
      policies: deps.policies,
      pods: deps.pods,
      owns: deps.owns,
      self: deps.replica ?? 'outprobe',
      fleet: deps.fleet,
      target: (key) => this.#targets.get(key),
      writesHere: (target, pod, type) => this.#writesHere(target, pod, type),
      readinessTarget: (uid, type) => this.readinessTarget(uid, type),
      tally: (key) => this.#tallies.get(key),
    });
  }

  get size(): number {
    return this.#targets.size;
  }

  all(): IterableIterator<Target> {
    return this.#targets.values();
  }

  /** A target by key (`policy/podUid/container/kind`). */
  get(key: string): Target | undefined {
    return this.#targets.get(key);
  }

  /** The readiness target of this replica that writes condition `type` on the pod, if any. */
  readinessTarget(uid: string, type: string): Target | undefined {
    for (const key of this.#byPod.get(uid) ?? []) {
      const t = this.#targets.get(key);
      if (t !== undefined && t.plan.kind === 'readiness' && t.plan.conditionType === type) return t;
    }
    return undefined;
  }

  onPod(type: 'ADDED' | 'MODIFIED' | 'DELETED', pod: Pod, old: Pod | undefined): void {
    if (type === 'DELETED') {
      this.#dropPod(pod.uid);
      this.#unmark(podKeyOf(pod));
      this.#readiness.dropPod(podKeyOf(pod));
      this.#seq.delete(podKeyOf(pod));
      return;
    }
    if (old !== undefined && old.uid !== pod.uid) this.#dropPod(old.uid);
    this.#d.gates.observe(pod.uid, pod.resourceVersion);
    this.reconcilePod(pod, old, 'pod');
  }

  /**
   * A policy was created or its spec changed (not a status-only update):
   * re-plans the pods it selects now or selected before, and no other.
   */
  policyChanged(entry: PolicyEntry): void {
    const affected = new Set<string>(this.#tallies.get(entry.key)?.podKeys());
    const policy = entry.policy;
    if (policy !== undefined) for (const [key, pod] of this.#d.pods) if (selects(policy, pod)) affected.add(key);
    this.#replan(affected);
  }

  #replan(podKeys: ReadonlySet<string>): void {
    for (const key of podKeys) {
      const pod = this.#d.pods.get(key);
      if (pod !== undefined) this.reconcilePod(pod, undefined, 'policy');
    }
  }

  /** Plans the pod's targets again; `cause` is what asked (a new target's first pass depends on it, first-pass.ts). */
  reconcilePod(pod: Pod, old: Pod | undefined, cause: PlanCause = 'resync'): void {
    const owned = this.#d.owns(pod);
    // A pod this replica lost: no write of its own may still be retried or repaired.
    if (!owned) this.#d.gates.forget(pod.uid);
    const selecting = [...this.#d.policies.values()].filter((e) => e.policy !== undefined && selects(e.policy, pod));
    const blind = this.#d.blind?.(pod, selecting, owned) === true;
    const { wanted, issues, losers } = owned && !blind && pod.phase !== 'Succeeded' && pod.phase !== 'Failed' ? this.#plan(pod, selecting) : emptyPlan();
    this.#setIssues(pod, issues);
    this.#setConflicts(pod, losers);
    // A copy: #remove takes keys out of the pod's list.
    for (const key of [...(this.#byPod.get(pod.uid) ?? [])]) if (!wanted.has(key)) this.#remove(key);
    for (const plan of wanted.values()) this.#upsert(plan, pod, old, cause);
    this.#mark(pod, selecting);
    this.#readiness.notePod(pod, selecting);
  }

  /** The targets every policy that selects the pod asks for, its plan issues, and the policies that lost a gate-type claim on it. */
  #plan(pod: Pod, selecting: readonly PolicyEntry[]): { wanted: Map<string, TargetPlan>; issues: Map<string, PlanIssue>; losers: Map<string, string> } {
    const { wanted, issues } = emptyPlan();
    const losers = gateClaims(selecting, pod);
    for (const entry of selecting) {
      if (entry.policy === undefined) continue;
      const planned = planTargets(entry.policy, pod);
      // A policy that lost the claim on its gate type here plans no readiness target on this pod.
      for (const t of planned.targets) if (!(t.kind === 'readiness' && losers.has(entry.key))) wanted.set(t.key, t);
      for (const i of planned.issues) issues.set(i.policy, i);
    }
    return { wanted, issues, losers };
  }

  /** The policy is gone: its targets go, and a younger policy that lost a gate-type claim to it takes it over (the release of its gates: GateRelease). */
  policyRemoved(entry: PolicyEntry): void {
    for (const key of [...(this.#byPolicy.get(entry.key) ?? [])]) this.#remove(key);
    this.#conflicts.delete(entry.key);
    this.#readiness.forget(entry.key);
    // A younger policy that lost its claim on this gate type takes it over now.
    this.#replan(new Set(this.#tallies.get(entry.key)?.podKeys()));
    this.#tallies.delete(entry.key);
    this.#scheduling.forget(entry.key);
  }

  /** Is a remediation request still about a target that fails on the same instance? */
  stillFailing(req: RemediationRequest): boolean {
    const t = this.#targets.get(`${req.policy}/${req.podUid}/${req.container}/${req.kind}`);
    const inst = t?.state.instance;
    return t?.state.committed === 'failure' && inst !== null && inst !== undefined && `${inst.containerId}#${inst.restartCount}` === req.instance;
  }

  /** The pods the policy selects, for its remediation budget (terminating ones count as unavailable). */
  budgetPods(policyKey: string, remediating: (uid: string) => boolean): BudgetPod[] {
    if (this.#d.policies.get(policyKey)?.policy === undefined) return [];
    return this.#tallies.get(policyKey)?.budgetPods(remediating) ?? [];
  }

  /** `budgetPods` as counts, kept as pods change (ADR 0031). */
  budgetCounts(policyKey: string, candidate: { readonly uid: string; readonly podKey: string }, remediating: ReadonlyMap<string, string>): BudgetCounts {
    if (this.#d.policies.get(policyKey)?.policy === undefined) return { pods: 0, failing: 0, unavailable: 0 };
    return this.#tallies.get(policyKey)?.budgetCounts(candidate, remediating) ?? { pods: 0, failing: 0, unavailable: 0 };
  }

  /** The policy's tally (its diverged count, ADR 0023; the fleet budget's counts, ADR 0033). */
  tally(policyKey: string): PolicyTally | undefined {
    return this.#tallies.get(policyKey);
  }

  /** The policy's status input, from counts kept as pods and targets change: O(1) in pods. */
  statusInput(entry: PolicyEntry, synced: boolean, remediator: Remediator): Omit<StatusInput, 'now'> {
    const policy = entry.policy;
    const remediations = (entry.stored?.remediations ?? 0) + remediator.count(entry.key);
    const base = { generation: entry.generation, synced, remediations, invalid: invalidMessage(entry), limited: entry.limited ?? [] };
    if (policy === undefined) return { ...base, pods: 0, ready: 0, failing: 0, ungated: 0, erroring: 0, diverged: 0, planIssues: [], halted: false };
    const tally = this.#tallies.get(entry.key) ?? new PolicyTally();
    const gate = policy.spec.readiness?.conditionType;
    return {
      ...base,
      // The pods where this policy lost its gate type to an older policy, and the gated pods whose condition another writer set.
      conflicts: [...(this.#conflicts.get(entry.key)?.values() ?? [])],
      foreign: gate === undefined || policy.spec.mode !== 'Enforce' ? 0 : tally.foreign,
      pods: tally.pods,
      ready: tally.ready,
      failing: tally.failing,
      ungated: gate === undefined ? 0 : tally.ungated,
      erroring: tally.erroring.size,
      diverged: tally.diverged,
      planIssues: tally.planIssues(),
      containerProbeIssues: tally.probeIssues,
      halted: remediator.halted(entry.key),
      readinessPanic: this.#readiness.report(entry.key),
    };
  }

  #tally(policyKey: string): PolicyTally {
    let tally = this.#tallies.get(policyKey);
    if (tally === undefined) this.#tallies.set(policyKey, (tally = new PolicyTally()));
    return tally;
  }

  /** The pod's marks in the tallies of the policies that select it now; out of the others'. */
  #mark(pod: Pod, selecting: readonly PolicyEntry[]): void {
    const podKey = podKeyOf(pod);
    let seq = this.#seq.get(podKey);
    if (seq === undefined) this.#seq.set(podKey, (seq = this.#nextSeq++));
    const keys = selecting.map((entry) => entry.key);
    for (const entry of selecting) this.#setMark(this.#tally(entry.key), entry, pod, this.#markOf(entry, pod, seq));
    for (const key of this.#podPolicies.get(podKey) ?? []) if (!keys.includes(key)) this.#tallies.get(key)?.delete(podKey);
    if (keys.length === 0) this.#podPolicies.delete(podKey);
    else this.#podPolicies.set(podKey, keys);
  }

  #unmark(podKey: string): void {
    for (const key of this.#podPolicies.get(podKey) ?? []) this.#tallies.get(key)?.delete(podKey);
    this.#podPolicies.delete(podKey);
  }

  #markOf(entry: PolicyEntry, pod: Pod, seq: number): PodMark {
    const gate = entry.policy?.spec.readiness?.conditionType;
    const counted = pod.deletionTimestamp === undefined;
    return {
      uid: pod.uid,
      seq,
      counted,
      ready: gateStatus(pod, gate ?? 'Ready') === 'True',
      available: counted && kubeletReady(pod),
      ungated: gate !== undefined && !pod.readinessGates.includes(gate),
      foreign: gate !== undefined && entry.policy?.spec.mode === 'Enforce' && pod.readinessGates.includes(gate) && foreignGate(pod, gate),
      failing: this.#failing(entry.key, pod.uid),
      gated: this.#gated(entry, pod, counted),
      issue: this.#planIssues.get(pod.uid)?.get(entry.key)?.message,
      probeIssue: containerProbeIssue(this.#planIssues.get(pod.uid)?.get(entry.key)),
      diverged: this.#divergence(entry.key, pod).diverged,
    };
  }

  /** The policy's readiness target on the pod (on this replica), if any. */
  #readinessOf(policyKey: string, uid: string): Target | undefined {
    for (const key of this.#byPod.get(uid) ?? []) {
      const t = this.#targets.get(key);
      if (t !== undefined && t.plan.policy === policyKey && t.plan.kind === 'readiness') return t;
    }
    return undefined;
  }

  /** Whether the node's ContainersReady and this policy's confirmed readiness disagree, stably (ADR 0023). */
  #divergence(policyKey: string, pod: Pod): Divergence & { readonly target?: Target } {
    const target = this.#readinessOf(policyKey, pod.uid);
    if (target === undefined) return { diverged: false };
    const c = pod.conditions.find((x) => x.type === 'ContainersReady');
    const since = c?.lastTransitionTime === undefined ? undefined : Date.parse(c.lastTransitionTime);
    const node = c === undefined ? undefined : { status: c.status, since: Number.isFinite(since) ? since : undefined, reason: c.reason };
    const d = decideDivergence({ outside: confirmedResult(target.state), node, periodMs: target.plan.probe.periodSeconds * 1000, now: this.#d.clock.now() });
    return { ...d, target };
  }

  /**
   * A pod's mark changes: an Event when it turns diverged (once per
   * transition into divergence), a log line when it stops being so.
   */
  #setMark(tally: PolicyTally, entry: PolicyEntry, pod: Pod, mark: PodMark): void {
    const before = tally.get(podKeyOf(pod));
    tally.set(podKeyOf(pod), mark);
    const was = before !== undefined && before.uid === mark.uid && before.counted && before.diverged === true;
    const is = mark.counted && mark.diverged === true;
    if (was === is) return;
    const policy = { namespace: entry.namespace, name: entry.name, uid: entry.uid };
    const d = is ? this.#divergence(entry.key, pod) : { diverged: false as const };
    const message = d.diverged && d.target !== undefined
      ? divergenceMessage({
          node: d.node,
          nodeReason: pod.conditions.find((x) => x.type === 'ContainersReady')?.reason,
          policy: entry.name,
          container: d.target.plan.container,
          replica: this.#d.replica ?? 'outprobe',
          output: d.target.lastFailure,
        })
      : `ProbePolicy ${entry.name}: the pod is no longer diverged (the node and outprobe agree, or this replica no longer probes it)`;
    this.#d.observe({ type: 'divergence', pod: podRef(pod), policy, diverged: is, message });
  }

  /** Whether the pod counts as gated for the panic threshold (the tally's `gated`): its targets exist only while this replica owns it. */
  #gated(entry: PolicyEntry, pod: Pod, counted: boolean): boolean {
    const type = entry.policy?.spec.mode === 'Enforce' ? entry.policy.spec.readiness?.conditionType : undefined;
    if (type === undefined || !counted || !pod.readinessGates.includes(type) || foreignGate(pod, type)) return false;
    for (const key of this.#byPod.get(pod.uid) ?? []) {
      const t = this.#targets.get(key);
      if (t !== undefined && t.plan.policy === entry.key && t.plan.kind === 'readiness' && t.plan.conditionType === type) return true;
    }
    return false;
  }

  /** A target's state changed (or it went away): its policy's counts follow. */
  #touch(plan: TargetPlan): void {
    const tally = this.#tallies.get(plan.policy);
    if (tally === undefined) return;
    noteTarget(tally, plan.key, this.#targets.get(plan.key));
    const mark = tally.get(plan.podKey);
    const entry = this.#d.policies.get(plan.policy);
    const pod = this.#d.pods.get(plan.podKey);
    if (mark === undefined || mark.uid !== plan.podUid || entry === undefined || pod === undefined || pod.uid !== plan.podUid) return;
    const failing = this.#failing(plan.policy, plan.podUid);
    const gated = this.#gated(entry, pod, mark.counted);
    const diverged = plan.kind === 'readiness' ? this.#divergence(plan.policy, pod).diverged : (mark.diverged ?? false);
    if (failing !== mark.failing || gated !== mark.gated || diverged !== mark.diverged) this.#setMark(tally, entry, pod, { ...markFields(mark), failing, gated, diverged });
  }

  #failing(policyKey: string, uid: string): boolean {
    for (const key of this.#byPod.get(uid) ?? []) {
      const t = this.#targets.get(key);
      if (t !== undefined && t.plan.policy === policyKey && t.plan.kind !== 'readiness' && t.state.committed === 'failure') return true;
    }
    return false;
  }

  #setConflicts(pod: Pod, losers: ReadonlyMap<string, string>): void {
    for (const [policy, byPod] of this.#conflicts) {
      if (!losers.has(policy) && byPod.delete(pod.uid) && byPod.size === 0) this.#conflicts.delete(policy);
    }
    for (const [policy, message] of losers) {
      let byPod = this.#conflicts.get(policy);
      if (byPod === undefined) this.#conflicts.set(policy, (byPod = new Map<string, string>()));
      const entry = this.#d.policies.get(policy);
      if (byPod.get(pod.uid) !== message && entry !== undefined) {
        this.#d.observe({ type: 'gate-conflict', policy: { namespace: entry.namespace, name: entry.name, uid: entry.uid }, message });
      }
      byPod.set(pod.uid, message);
    }
  }

  #setIssues(pod: Pod, issues: Map<string, PlanIssue>): void {
    const before = this.#planIssues.get(pod.uid);
    for (const [policy, issue] of issues) {
      if (before?.get(policy)?.message === issue.message) continue;
      const entry = this.#d.policies.get(policy);
      const ref = entry === undefined ? undefined : { namespace: entry.namespace, name: entry.name, uid: entry.uid };
      this.#d.observe({ type: 'plan-issue', issue, pod: podRef(pod), ...(ref === undefined ? {} : { policy: ref }) });
    }
    if (issues.size === 0) this.#planIssues.delete(pod.uid);
    else this.#planIssues.set(pod.uid, issues);
  }

  #upsert(planned: TargetPlan, pod: Pod, old: Pod | undefined, cause: PlanCause): void {
    const existing = this.#targets.get(planned.key);
    // A new target's key is kept as long as the target (maps, scheduler): one flat string.
    const plan = existing === undefined ? { ...planned, key: flatKey(planned.key) } : planned;
    if (existing === undefined) {
      const seedTrue = plan.conditionType !== undefined && gateStatus(pod, plan.conditionType) === 'True';
      const target = newTarget(plan, seedTrue, this.#d.clock.now());
      this.#targets.set(plan.key, target);
      const keys = this.#byPod.get(plan.podUid);
      if (keys === undefined) this.#byPod.set(plan.podUid, [plan.key]);
      else if (!keys.includes(plan.key)) keys.push(plan.key);
      let ofPolicy = this.#byPolicy.get(plan.policy);
      if (ofPolicy === undefined) this.#byPolicy.set(plan.policy, (ofPolicy = new Set()));
      ofPolicy.add(plan.key);
      this.#schedule(target, pod, cause);
      return;
    }
    if (!samePlannedProbe(existing.plan, plan)) {
      replan(existing, plan);
      this.#touch(plan);
      this.#schedule(existing, pod, cause);
    } else if (wakesAtOnce(old, pod, plan.container)) {
      this.#schedule(existing, pod, cause, this.#d.clock.now());
    }
  }

  #schedule(target: Target, pod: Pod, cause: PlanCause, at?: number): void {
    this.#scheduling.schedule(target, pod, cause, (signal) => this.#pass(target, signal), at);
  }

  async #pass(target: Target, signal: AbortSignal): Promise<PassResult> {
    const result = await runPass(
      target,
      {
        clock: this.#d.clock,
        probers: this.#d.probers,
        guard: this.#d.guard,
        stall: this.#d.stall,
        hooks: {
          onTransition: (t, pod, tr) => this.#onTransition(t, pod, tr),
          onProbe: (t, pod, outcome, durationMs) => {
            if (outcome.kind === 'failure') t.lastFailure = outcome.output;
            this.#d.observe({ type: 'probe', target: t.plan, pod, outcome, durationMs, observe: this.#observeMode(t) });
          },
          onStop: (t) => this.#remove(t.plan.key),
          onVoid: (t, pod, note) => {
            this.#d.observe({ type: 'probe-voided', target: t.plan, pod, note });
          },
        },
      },
      {
        pod: (key) => this.#d.pods.get(key),
        startupOf: (t) => {
          if (t.plan.kind === 'startup') return null;
          const s = this.#targets.get(`${t.plan.policy}/${t.plan.podUid}/${t.plan.container}/startup`);
          return s === undefined ? null : s.state;
        },
      },
      signal,
    );
    if (this.#targets.get(target.plan.key) === target) this.#touch(target.plan);
    if (!signal.aborted && target.plan.kind === 'readiness') this.#repairGate(target);
    return result;
  }

  /**
   * After a readiness pass: when this target's own probes confirm its value
   * and the pod (as the informer shows it) carries another status, desire the
   * confirmed condition again. This is how a gate that another writer changed
   * after this replica's last transition is put right: a previous owner's late
   * write during handover, or a status this replica took over (seeded) that
   * changed before its first write. The GateWriter tells a lagging informer
   * from a real change.
   */
  #repairGate(target: Target): void {
    const type = target.plan.conditionType;
    const verdict = confirmedResult(target.state);
    if (type === undefined || verdict === null || this.#targets.get(target.plan.key) !== target || this.#observeMode(target)) return;
    const pod = this.#d.pods.get(target.plan.podKey);
    if (pod === undefined || !this.#writesHere(target, pod, type)) return;
    const want = verdict === 'success' ? 'True' : 'False';
    if (want === 'False' && this.#readiness.failsOpen(target.plan.policy, pod.uid)) return;
    const have = gateStatus(pod, type);
    // A gate kept open for want of a vantage (ADR 0040) is no verdict: the first one replaces it.
    const keptOpen = conditionReason(pod, type) === noVantageReason;
    // A missing condition already holds the pod not ready.
    if ((have === want && !keptOpen) || (want === 'False' && have === undefined)) return;
    const known = { desired: this.#d.gates.desired(pod.uid, type), lastFailure: target.lastFailure };
    const condition = repairCondition(type, target.plan.container, want, this.#d.clock.now(), known);
    this.#d.gates.desire(podRef(pod), condition, keptOpen ? undefined : have);
  }

  #observeMode(t: Target): boolean {
    return this.#d.policies.get(t.plan.policy)?.policy?.spec.mode === 'Observe';
  }

  #onTransition(target: Target, pod: Pod, transition: Transition): void {
    // Counts first: a remediation request asks the budget at once.
    this.#touch(target.plan);
    const observe = this.#observeMode(target);
    this.#d.observe({ type: 'transition', target: target.plan, pod, transition, observe });
    if (target.plan.kind === 'readiness') {
      this.#readinessTransition(target, pod, transition, observe);
      return;
    }
    if (target.plan.kind === 'startup' && transition.to === 'success') this.#startedNow(target);
    if (transition.to !== 'failure' || transition.cause !== 'probe' || transition.instance === null) return;
    this.#d.remediate({
      policy: target.plan.policy,
      podKey: podKeyOf(pod),
      podUid: pod.uid,
      instance: `${transition.instance.containerId}#${transition.instance.restartCount}`,
      kind: target.plan.kind,
      container: target.plan.container,
      output: transition.output,
      gracePeriodSeconds: target.plan.probe.terminationGracePeriodSeconds,
      settleMs: (target.plan.probe.periodSeconds + target.plan.probe.timeoutSeconds) * 1000,
    });
  }

  /**
   * The container became started by this startup target's Success: its
   * readiness target, armed while it waited (`probeNowArmed`), probes at once
   * instead of on its period, as the kubelet's status sync triggers the
   * readiness worker (§3.6). Liveness keeps its period, as in the kubelet.
   */
  #startedNow(startup: Target): void {
    const key = `${startup.plan.policy}/${startup.plan.podUid}/${startup.plan.container}/readiness`;
    if (this.#targets.get(key)?.state.probeNowArmed === true) this.#d.scheduler.trigger(key);
  }

  #readinessTransition(target: Target, pod: Pod, transition: Transition, observe: boolean): void {
    const type = target.plan.conditionType;
    const condition = type === undefined ? null : gateConditionFor(type, target.plan.container, transition);
    if (condition === null || type === undefined) return;
    // The initial False is written only for a restarted container, over a
    // condition the pod has. A missing one already holds the pod not ready (a
    // new pod costs one write, when it turns True); and the first instance a
    // target sees (this replica restarted, or gained the pod) keeps whatever
    // the pod shows until the target's own probes reach a threshold (rule 5),
    // even if the informer showed nothing when the target was created and
    // another writer's condition has arrived since.
    if (transition.cause === 'initial' && (transition.from === null || gateStatus(pod, type) === undefined)) return;
    const why = observe ? 'observe' : !pod.readinessGates.includes(type) ? 'ungated' : foreignGate(pod, type) ? 'foreign' : null;
    if (why !== null) {
      this.#d.observe({ type: 'gate-skipped', target: target.plan, pod, condition, why });
      return;
    }
    const probeFailure = transition.to === 'failure' && transition.cause === 'probe';
    const wasFailing = target.failure !== null;
    target.failure = probeFailure ? { since: transition.at, condition } : null;
    // A probe failure goes through the panic threshold, which writes it or keeps the pod True.
    if (!probeFailure) this.#d.gates.desire(podRef(pod), condition, gateStatus(pod, type));
    // The threshold counts confirmed failures only: a transition that neither leaves nor joins
    // them (a new pod turning ready) changes nothing it decides, and deciding costs a walk over
    // the policy's gated pods (issue 18); panicStep decides again every step all the same.
    if (joinsOrLeavesFailing(target, wasFailing)) this.applyPanic(target.plan.policy);
  }

  /** Every policy's panic threshold decided again (pods came, went or changed owner). */
  panicStep(): void {
    this.#readiness.step();
  }

  /** The pod is the target's, lists the gate, is this replica's and no other writer set its condition. */
  #writesHere(target: Target, pod: Pod, type: string): boolean {
    return pod.uid === target.plan.podUid && pod.readinessGates.includes(type) && this.#d.owns(pod) && !foreignGate(pod, type);
  }

  /** The readiness guards (panic threshold, fleet-wide cap, send-time check: ADR 0015, 0032). */
  get readiness(): ReadinessGuard {
    return this.#readiness;
  }

  /** This replica's panic state of a policy, for status and sharding. */
  panicReport(policyKey: string): PanicReport | null {
    return this.#readiness.report(policyKey);
  }

  /** The policy's panic threshold decided again and what changed written (`ReadinessGuard.apply`). */
  applyPanic(policyKey: string): void {
    this.#readiness.apply(policyKey);
  }

  #remove(key: string): void {
    const t = this.#targets.get(key);
    if (t === undefined) return;
    this.#targets.delete(key);
    const keys = this.#byPod.get(t.plan.podUid);
    const at = keys?.indexOf(key) ?? -1;
    if (keys !== undefined && at >= 0) {
      keys.splice(at, 1);
      if (keys.length === 0) this.#byPod.delete(t.plan.podUid);
    }
    this.#unindex(t.plan);
    this.#d.scheduler.remove(key);
    this.#touch(t.plan);
  }

  #unindex(plan: TargetPlan): void {
    const ofPolicy = this.#byPolicy.get(plan.policy);
    ofPolicy?.delete(plan.key);
    if (ofPolicy?.size === 0) this.#byPolicy.delete(plan.policy);
  }

  #dropPod(uid: string): void {
    for (const key of this.#byPod.get(uid) ?? []) {
      const t = this.#targets.get(key);
      this.#targets.delete(key);
      this.#d.scheduler.remove(key);
      if (t !== undefined) {
        this.#unindex(t.plan);
        this.#tallies.get(t.plan.policy)?.erroring.delete(key);
        this.#tallies.get(t.plan.policy)?.readinessFailing.delete(key);
      }
    }
    this.#byPod.delete(uid);
    this.#planIssues.delete(uid);
    for (const [policy, byPod] of this.#conflicts) if (byPod.delete(uid) && byPod.size === 0) this.#conflicts.delete(policy);
    this.#d.gates.forget(uid);
  }
}

/** A `fromContainer` issue (the container's probe is missing or refused), as opposed to a missing container. */
function containerProbeIssue(issue: PlanIssue | undefined): boolean {
  return issue !== undefined && issue.code !== 'container_missing';
}

/** Whether the panic threshold's candidates change with this transition (it was, or is now, a confirmed failure). */
function joinsOrLeavesFailing(target: Target, wasFailing: boolean): boolean {
  return wasFailing || confirmedResult(target.state) === 'failure';
}

/** The target's place in its policy's sets of erroring and confirmed-failing targets (`undefined`: it is gone). */
function noteTarget(tally: PolicyTally, key: string, t: Target | undefined): void {
  if (t !== undefined && (t.state.lastError?.consecutive ?? 0) > 0) tally.erroring.add(key);
  else tally.erroring.delete(key);
  if (t !== undefined && t.plan.kind === 'readiness' && confirmedResult(t.state) === 'failure') tally.readinessFailing.add(key);
  else tally.readinessFailing.delete(key);
}

/**
 * Two Enforce policies whose readiness writes one condition type on one pod
 * would overwrite each other: the older one keeps the type, each younger one
 * is reported (policy key → message) and writes nothing there.
 */
function emptyPlan(): { wanted: Map<string, TargetPlan>; issues: Map<string, PlanIssue>; losers: Map<string, string> } {
  return { wanted: new Map(), issues: new Map(), losers: new Map() };
}

function gateClaims(selecting: readonly PolicyEntry[], pod: Pod): Map<string, string> {
  const byType = new Map<string, PolicyEntry[]>();
  for (const e of selecting) {
    const type = e.policy?.spec.mode === 'Enforce' ? e.policy.spec.readiness?.conditionType : undefined;
    if (type === undefined) continue;
    const list = byType.get(type);
    if (list === undefined) byType.set(type, [e]);
    else list.push(e);
  }
  const losers = new Map<string, string>();
  for (const [type, claimants] of byType) {
    if (claimants.length < 2) continue;
    const [winner, ...rest] = [...claimants].sort(olderFirst);
    for (const e of rest) {
      losers.set(e.key, `readiness.conditionType ${JSON.stringify(type)} on pod ${pod.name} is already written by the older ProbePolicy ${JSON.stringify(winner?.name ?? '')}: this policy does not write it there`);
    }
  }
  return losers;
}
