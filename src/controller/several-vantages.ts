import type { Clock } from '../kernel/index.ts';
import type { Pod } from '../kube/index.ts';
import { spreadDueAt } from '../probing/index.ts';
import type { PassResult, Scheduler, StallGuard } from '../probing/index.ts';
import { policyDefaults } from '../policy/index.ts';
import type { VantageDecision } from '../policy/index.ts';
import { confirmedResult } from '../results/index.ts';
import { planTargets, samePlannedProbe, selects } from '../targets/index.ts';
import type { AddressGuard } from '../targets/index.ts';
import { VerdictBoard, combine } from '../vantage/index.ts';
import type { HeldVerdict, ReportBatch, ReportSender, Verdict } from '../vantage/index.ts';
import type { GateCondition, GateWriter, PodRef } from '../writeback/index.ts';
import { conditionWriter, gateStatus, rfc3339 } from './conditions.ts';
import type { PolicyEntry } from './policies.ts';
import { newTarget, runPass } from './runner.ts';
import type { Probers, Target } from './runner.ts';

/** What the controller gives several vantages (ADR 0058). */
export interface SeveralVantagesOptions {
  /** The pod's vantages, owner first, at most `count` (sharding: eligible members in rendezvous order). */
  readonly vantages: (pod: Pod, count: number) => readonly string[];
  /** "node n2 (zone b)" for a member, in gate messages. */
  readonly placeOf: (identity: string) => string;
  /** Where this replica's verdicts go to their pods' owners. */
  readonly sender: ReportSender;
  /** A verdict older than this is no verdict: that vantage abstains. @default 45000 */
  readonly staleMs?: number;
  /** Every current verdict is sent again this often (it stays fresh at the owner). @default 15000 */
  readonly refreshMs?: number;
  /** Which pods follow their vantages again (members or pods changed) at most this often. @default 1000 */
  readonly reconcileMs?: number;
}

export interface SeveralVantagesDeps {
  readonly clock: Clock;
  readonly identity: string;
  readonly scheduler: Scheduler;
  readonly probers: Probers;
  readonly guard: AddressGuard;
  readonly stall?: StallGuard | undefined;
  readonly policies: ReadonlyMap<string, PolicyEntry>;
  readonly pods: ReadonlyMap<string, Pod>;
  readonly gates: GateWriter;
  /** This replica writes the pod's gates (its owner). */
  readonly owns: (pod: Pod) => boolean;
  /** The owner's own readiness target writing `type` on the pod. */
  readonly ownTarget: (uid: string, type: string) => Target | undefined;
}

/** A readiness target this replica runs as one of a pod's other vantages. */
interface Follower {
  readonly target: Target;
  owner: string;
  /** The verdict last queued for the owner. */
  sent: Verdict | 'unknown' | null;
  /** Its last confirmed verdict (the kubelet's committed value once a probe run confirmed one); undefined after a container change. */
  verdict: Verdict;
}

/** The controller's several vantages, when it has options for them. */
export function severalVantages(options: SeveralVantagesOptions | undefined, deps: Omit<SeveralVantagesDeps, 'owns' | 'identity'> & { readonly owns: ((pod: Pod) => boolean) | undefined; readonly identity: string | undefined }): SeveralVantages | undefined {
  return options === undefined ? undefined : new SeveralVantages(options, { ...deps, owns: deps.owns ?? (() => true), identity: deps.identity ?? 'outprobe' });
}

/** The reasons a combination may replace: verdicts of probes, not facts of the pod (a container not running). */
const probeReasons: ReadonlySet<string> = new Set(['ProbeSucceeded', 'ProbeFailed']);

const countOf = (e: PolicyEntry): number => e.policy?.spec.vantage?.count ?? policyDefaults.vantageCount;
const decisionOf = (e: PolicyEntry): VantageDecision => e.policy?.spec.vantage?.decision ?? policyDefaults.vantageDecision;
const refOf = (pod: Pod): PodRef => ({ uid: pod.uid, namespace: pod.namespace, name: pod.name });
/**
 * A target's verdict: the result its probes last confirmed (reached the
 * threshold), kept through a run below the threshold, as the kubelet keeps
 * its committed value. Not the initial value of a target no probe has
 * confirmed yet (that is no verdict: it abstains).
 */
function verdictOf(t: Target, memo: WeakMap<Target, 'success' | 'failure'>): Verdict {
  const c = confirmedResult(t.state);
  if (c === null) return memo.get(t);
  memo.set(t, c);
  return c;
}

/** The combination of one pod's vantages under one policy. */
interface Combined {
  readonly verdict: Verdict;
  readonly own: Verdict;
  readonly others: readonly HeldVerdict[];
  readonly decision: VantageDecision;
}

/**
 * Several vantages per pod (ADR 0058). For a policy with
 * `spec.vantage.count` > 1, each of a pod's other vantages (the next
 * eligible replicas after its owner) runs the pod's readiness probe with the
 * kubelet's state machine of its own, and reports its committed verdict to
 * the owner (on each change, and again every `refreshMs`). The owner keeps
 * them on a board and writes the gate from the combined verdict: every
 * readiness condition its target set desires passes through `gates()`,
 * which puts the combination in its place, and a report that changes the
 * combination desires it at once. Count 1 changes nothing.
 */
export class SeveralVantages {
  readonly #o: SeveralVantagesOptions;
  readonly #d: SeveralVantagesDeps;
  readonly #board: VerdictBoard;
  readonly #followers = new Map<string, Follower>();
  /** The owner's own targets' last confirmed verdicts (see verdictOf). */
  readonly #confirmed = new WeakMap<Target, 'success' | 'failure'>();
  #reconciledAt = -Infinity;
  #refreshedAt = -Infinity;

  constructor(options: SeveralVantagesOptions, deps: SeveralVantagesDeps) {
    this.#o = options;
    this.#d = deps;
    this.#board = new VerdictBoard({ staleMs: options.staleMs ?? 45_000 });
  }

  /** Readiness targets this replica runs for other owners. */
  get following(): number {
    return this.#followers.size;
  }

  /** Periodic work (the controller's step): follow the vantages, refresh and send the reports. */
  step(): void {
    const now = this.#d.clock.now();
    if (now - this.#reconciledAt >= (this.#o.reconcileMs ?? 1000)) {
      this.#reconciledAt = now;
      this.#reconcile();
    }
    if (now - this.#refreshedAt >= (this.#o.refreshMs ?? 15_000)) {
      this.#refreshedAt = now;
      for (const f of this.#followers.values()) f.sent = null;
    }
    for (const f of this.#followers.values()) this.#report(f);
    void this.#o.sender.flush();
  }

  /** The readiness targets this replica runs for other owners: one per (policy, pod) whose vantages list it after the first. */
  #reconcile(): void {
    const wanted = this.#wanted();
    for (const key of [...this.#followers.keys()]) if (!wanted.has(key)) this.#drop(key);
    for (const [key, w] of wanted) {
      const f = this.#followers.get(key);
      if (f !== undefined && samePlannedProbe(f.target.plan, w.plan)) {
        if (f.owner !== w.owner) {
          f.owner = w.owner;
          f.sent = null;
        }
        continue;
      }
      if (f !== undefined) this.#drop(key);
      this.#follow(w.plan, w.owner, w.pod);
    }
  }

  #wanted(): Map<string, { plan: Target['plan']; owner: string; pod: Pod }> {
    const wanted = new Map<string, { plan: Target['plan']; owner: string; pod: Pod }>();
    const several = [...this.#d.policies.values()].filter((e) => e.policy?.spec.readiness != null && countOf(e) > 1);
    if (several.length === 0) return wanted;
    for (const pod of this.#d.pods.values()) {
      if (pod.deletionTimestamp !== undefined || pod.phase === 'Succeeded' || pod.phase === 'Failed') continue;
      for (const e of several) {
        if (e.policy === undefined || e.namespace !== pod.namespace || !selects(e.policy, pod)) continue;
        const vantages = this.#o.vantages(pod, countOf(e));
        if (vantages.indexOf(this.#d.identity) < 1) continue;
        const plan = planTargets(e.policy, pod).targets.find((t) => t.kind === 'readiness');
        if (plan !== undefined) wanted.set(plan.key, { plan, owner: vantages[0] ?? '', pod });
      }
    }
    return wanted;
  }

  #follow(plan: Target['plan'], owner: string, pod: Pod): void {
    const { clock, scheduler } = this.#d;
    const now = clock.now();
    const f: Follower = { target: newTarget(plan, false, now), owner, sent: null, verdict: undefined };
    this.#followers.set(plan.key, f);
    const periodMs = plan.probe.periodSeconds * 1000;
    const startedAt = pod.containerStatuses.find((c) => c.name === plan.container)?.startedAt;
    const delayEnd = startedAt === undefined ? now : startedAt + plan.probe.initialDelaySeconds * 1000;
    const due = delayEnd > now ? delayEnd : spreadDueAt(`vantage:${plan.key}`, periodMs, now);
    scheduler.upsert({ key: `vantage:${plan.key}`, periodMs, firstDueAt: due, phaseAt: due, run: (signal) => this.#pass(f, signal) });
  }

  #drop(key: string): void {
    this.#followers.delete(key);
    this.#d.scheduler.remove(`vantage:${key}`);
  }

  async #pass(f: Follower, signal: AbortSignal): Promise<PassResult> {
    const { clock, probers, guard, stall } = this.#d;
    const out = await runPass(
      f.target,
      {
        clock,
        probers,
        guard,
        stall,
        hooks: {
          // A new instance or a container not running is no verdict of a probe: it abstains until one is confirmed.
          onTransition: (_t, _pod, tr) => {
            if (tr.cause !== 'probe') f.verdict = undefined;
          },
          onProbe: (t, _pod, outcome) => {
            if (outcome.kind === 'failure') t.lastFailure = outcome.output;
          },
          onStop: (t) => this.#drop(t.plan.key),
        },
      },
      { pod: (key) => this.#d.pods.get(key), startupOf: () => null },
      signal,
    );
    if (this.#followers.get(f.target.plan.key) === f) this.#report(f);
    return out;
  }

  /** Queues the follower's verdict for its owner when it is not the one last queued. */
  #report(f: Follower): void {
    f.verdict = confirmedResult(f.target.state) ?? f.verdict;
    const verdict = f.verdict ?? 'unknown';
    if (f.sent === verdict) return;
    f.sent = verdict;
    const { plan } = f.target;
    this.#o.sender.queue(f.owner, { policy: plan.policy, podUid: plan.podUid, result: verdict, message: verdict === 'failure' ? f.target.lastFailure : '' });
  }

  /** Verdicts from a pod's other vantages (the peer endpoint). Each that changes a combination this replica writes is acted on at once. */
  accept(batch: ReportBatch): void {
    const now = this.#d.clock.now();
    const byUid = new Map<string, Pod>();
    for (const r of batch.reports) {
      if (!this.#board.accept(batch.from, r, now)) continue;
      if (byUid.size === 0) for (const p of this.#d.pods.values()) byUid.set(p.uid, p);
      const pod = byUid.get(r.podUid);
      const entry = this.#d.policies.get(r.policy);
      if (pod !== undefined && entry !== undefined) this.#reconcileGate(entry, pod);
    }
  }

  /** The owner writes the combination when it differs from the gate (its own target must have a verdict). */
  #reconcileGate(entry: PolicyEntry, pod: Pod): void {
    const type = this.#writableType(entry, pod);
    const own = type === undefined ? undefined : this.#d.ownTarget(pod.uid, type);
    if (type === undefined || own === undefined || verdictOf(own, this.#confirmed) === undefined) return;
    const have = gateStatus(pod, type);
    const c = this.#combined(entry, pod, own);
    const status = c.verdict === 'failure' ? 'False' : 'True';
    if (c.verdict === undefined || have === status) return;
    this.#desire(refOf(pod), conditionOf(type, c, this.#o.placeOf, this.#d.clock.now()), have);
  }

  /** The policy's gate type on the pod when this replica writes it and its condition holds a probe verdict (not kept open: panic, NoVantage; not a fact of the pod). */
  #writableType(entry: PolicyEntry, pod: Pod): string | undefined {
    const type = entry.policy?.spec.mode === 'Enforce' ? entry.policy.spec.readiness?.conditionType : undefined;
    if (type === undefined || !pod.readinessGates.includes(type) || !this.#d.owns(pod)) return undefined;
    if (conditionWriter(pod.conditions, type).by === 'foreign') return undefined;
    const reason = pod.conditions.find((c) => c.type === type)?.reason;
    return reason === undefined || probeReasons.has(reason) ? type : undefined;
  }

  #combined(entry: PolicyEntry, pod: Pod, own: Target): Combined {
    const vantages = this.#o.vantages(pod, countOf(entry));
    // Only the pod's vantages now count (a replica that no longer is one is not heard).
    const others = this.#board.verdicts(entry.key, pod.uid, vantages.filter((id) => id !== this.#d.identity), this.#d.clock.now());
    const ownVerdict = verdictOf(own, this.#confirmed);
    const decision = decisionOf(entry);
    return { verdict: combine(decision, [ownVerdict, ...others.map((o) => o.verdict)]), own: ownVerdict, others, decision };
  }

  /**
   * The gate writer as the target set sees it: a readiness verdict of a
   * policy with several vantages becomes their combination (ADR 0058). Other
   * conditions (panic, a container not running, not yet probed) pass.
   */
  gates(): GateWriter {
    const writer = this.#d.gates;
    return new Proxy(writer, {
      get: (t, p) => {
        if (p === 'desire') return (pod: PodRef, condition: GateCondition, have: string | undefined) => this.#desireCombined(pod, condition, have);
        const v: unknown = Reflect.get(t, p, t);
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(t) : v;
      },
    });
  }

  #desireCombined(ref: PodRef, condition: GateCondition, have: string | undefined): void {
    const target = this.#d.ownTarget(ref.uid, condition.type);
    this.#restartOwn(target, condition.reason);
    const own = probeReasons.has(condition.reason) ? target : undefined;
    const entry = own === undefined ? undefined : this.#d.policies.get(own.plan.policy);
    const pod = own === undefined ? undefined : this.#d.pods.get(own.plan.podKey);
    if (own === undefined || entry === undefined || pod === undefined || countOf(entry) < 2) {
      this.#d.gates.desire(ref, condition, have);
      return;
    }
    const c = this.#combined(entry, pod, own);
    const status = c.verdict === 'failure' ? 'False' : c.verdict === 'success' ? 'True' : condition.status;
    if (status === condition.status && c.others.every((o) => o.verdict === undefined)) {
      this.#d.gates.desire(ref, condition, have);
      return;
    }
    this.#desire(ref, status === condition.status ? annotate(condition, c, this.#o.placeOf) : conditionOf(condition.type, c, this.#o.placeOf, this.#d.clock.now()), have);
  }

  /** A fact of the pod (a container not running, a new one not probed yet): its own verdict starts again. */
  #restartOwn(target: Target | undefined, reason: string): void {
    if (target !== undefined && (reason === 'ContainerNotRunning' || reason === 'NotYetProbed')) this.#confirmed.delete(target);
  }

  /**
   * Desires the condition, but no rewrite per pass: the same status and
   * message as desired already is that condition again (its times kept); the
   * same status with a new message keeps its transition time.
   */
  #desire(ref: PodRef, condition: GateCondition, have: string | undefined): void {
    // The pod shows this status with other words (what the vantages said changed): written all the same.
    const shown = this.#shownMessage(ref, condition.type);
    const status = have === condition.status && shown !== undefined && !shown.startsWith(condition.message) ? undefined : have;
    const current = this.#d.gates.desired(ref.uid, condition.type);
    if (current?.status === condition.status) {
      this.#d.gates.desire(ref, current.message === condition.message ? current : { ...condition, lastTransitionTime: current.lastTransitionTime }, status);
      return;
    }
    this.#d.gates.desire(ref, condition, status);
  }

  #shownMessage(ref: PodRef, type: string): string | undefined {
    const pod = this.#d.pods.get(`${ref.namespace}/${ref.name}`);
    return pod?.uid === ref.uid ? (pod.conditions.find((c) => c.type === type)?.message ?? '') : undefined;
  }

  /**
   * A False the combination decided with another vantage's fresh verdict in
   * it needs no second opinion (ADR 0058: that is what the second opinion
   * asks for, and more): under quorum and all that verdict is a failure too;
   * under any it may be a success, and asking would ask that very vantage
   * (the next eligible replica) and veto the rule the user chose (ADR 0070).
   * A False of a lone vantage (the others abstain) still asks.
   */
  backed(condition: GateCondition, podUid: string): boolean {
    if (condition.status !== 'False') return false;
    const own = this.#d.ownTarget(podUid, condition.type);
    const entry = own === undefined ? undefined : this.#d.policies.get(own.plan.policy);
    const pod = own === undefined ? undefined : this.#d.pods.get(own.plan.podKey);
    if (own === undefined || entry === undefined || pod === undefined || countOf(entry) < 2) return false;
    const c = this.#combined(entry, pod, own);
    return c.verdict === 'failure' && c.others.some((o) => o.verdict !== undefined);
  }
}

/** "2 of 2 vantages": how many of those with a verdict fail. */
function tally(c: Combined): string {
  const known = [c.own, ...c.others.map((o) => o.verdict)].filter((v) => v !== undefined);
  return `${known.filter((v) => v === 'failure').length} of ${known.length} vantages failing (vantage.decision ${c.decision})`;
}

function othersText(c: Combined, placeOf: (id: string) => string): string {
  return c.others
    .filter((o) => o.verdict !== undefined)
    .map((o) => `${o.verdict === 'failure' ? 'failed' : 'succeeded'} from ${placeOf(o.from)}${o.verdict === 'failure' && o.message !== '' ? `: ${o.message}` : ''}`)
    .join('; ');
}

/** The own verdict's condition, with what the other vantages said. */
function annotate(condition: GateCondition, c: Combined, placeOf: (id: string) => string): GateCondition {
  const more = othersText(c, placeOf);
  return more === '' ? condition : { ...condition, message: `${condition.message} (${tally(c)}; ${more})`.slice(0, 900) };
}

/** A condition for a combination that differs from this replica's own verdict. */
function conditionOf(type: string, c: Combined, placeOf: (id: string) => string, now: number): GateCondition {
  const at = rfc3339(now);
  const more = othersText(c, placeOf);
  if (c.verdict === 'failure') {
    return { type, status: 'False', reason: 'ProbeFailed', message: `Readiness probe failed from other vantages: ${tally(c)}; ${more}; succeeded here`.slice(0, 900), lastTransitionTime: at, lastProbeTime: at };
  }
  // Not the output of this replica's own failure: it changes from probe to probe, and the condition would be written again each time.
  return { type, status: 'True', reason: 'ProbeSucceeded', message: `Readiness probe failed here, but ${tally(c)}: ${more}`.slice(0, 900), lastTransitionTime: at, lastProbeTime: at };
}
