import type { Clock, Random } from '../kernel/index.ts';
import { ReflectorSet, projectPod } from '../kube/index.ts';
import type { CustomObjectJson, KubeClient, Pod, PodJson } from '../kube/index.ts';
import { Scheduler } from '../probing/index.ts';
import type { StatusInput } from '../status/index.ts';
import type { StallGuard } from '../probing/index.ts';
import { AddressGuard, selects } from '../targets/index.ts';
import { GateWriter, deletePod, evictPod, patchGateCondition } from '../writeback/index.ts';
import type { WriteQueue } from '../writeback/index.ts';
import type { RemediationLimits } from '../writeback/index.ts';
import type { Question, SecondOpinionAnswer, SecondOpinionRequest } from '../secondopinion/index.ts';
import { reflectorEvent } from './events.ts';
import type { Observer, PolicyRef } from './events.ts';
import { policyEntry, statusOnly } from './policies.ts';
import type { PolicyEntry } from './policies.ts';
import { GateRelease } from './release.ts';
import { FleetRemediation } from './fleet-remediation.ts';
import type { FleetRemediationDeps } from './fleet-remediation.ts';
import { Remediator } from './remediation.ts';
import { answerSecondOpinion, remediationSecondOpinion } from './second-opinion.ts';
import { GateGuards } from './gate-guards.ts';
import { TargetSet } from './target-set.ts';
import type { FleetMembers } from './fleet-gates.ts';
import type { Probers } from './runner.ts';
import { StatusWriter } from './status-writer.ts';
import { NoVantageKeeper, blindHook, noVantageKeeper, stampVantage } from './no-vantage.ts';
import { severalVantages } from './several-vantages.ts';
import type { SeveralVantages } from './several-vantages.ts';
import type { SeveralVantagesOptions } from './several-vantages.ts';
import type { ReportBatch } from '../vantage/index.ts';
import { Resync, gateOwnership, heldPods } from './resync.ts';
import type { ResyncPass, ResyncResult } from './resync.ts';

export interface ControllerOptions {
  readonly client: KubeClient;
  readonly clock: Clock;
  readonly random: Random;
  readonly observe: Observer;
  /**
   * Gate writes' own path (ADR 0022): a client with its own rate cap and the
   * adaptive, urgency-ordered queue. @default none: gate writes go through
   * `client` one by one as desired, retried there on 429/503
   */
  readonly gateWrites?: { readonly client: KubeClient; readonly queue: WriteQueue };
  readonly probers: Probers;
  /** Policies with exec probes are honoured only with this on. @default false */
  readonly execEnabled?: boolean;
  /** Namespaces where exec probes are honoured (`'*'`: all); elsewhere the policy is Invalid. @default [] */
  readonly execNamespaces?: '*' | readonly string[];
  /** The installer's remediation limits no policy can exceed (rate, halt ceiling, Delete). @default noRemediationLimits */
  readonly limits?: RemediationLimits;
  /**
   * The longest probe timeout honoured, in seconds; a probe's longer
   * `timeoutSeconds` is lowered to it and the policy gets a Warning Event.
   * @default 60
   */
  readonly maxProbeTimeoutSeconds?: number;
  /**
   * Voids failed probe attempts that overlapped a stall of this process
   * (an EventLoopMonitor, started by the caller; ADR 0016). @default none: every failure counts
   */
  readonly stallGuard?: StallGuard;
  /** Probes in flight at once, shared fairly between namespaces, then policies (see the scheduler's fair-share.ts). @default 256 */
  readonly concurrency?: number;
  /** When set, only pod IPs in these ranges are probed. */
  readonly allowedCidrs?: readonly string[];
  /**
   * Watch (and act in) these namespaces only, one list+watch each; pods and
   * policies of any other namespace are never stored, probed or written to.
   * @default all namespaces
   */
  readonly namespaces?: readonly string[];
  /** @default 2000 */
  readonly statusIntervalMs?: number;
  /** Does this replica own the pod (sharding)? @default always */
  readonly owns?: (pod: Pod) => boolean;
  /** When this replica gained the pod in a shard handover (first-pass catch-up, ADR 0019). @default never */
  readonly gainedAt?: (pod: Pod) => number | undefined;
  /** May this replica remediate the pod yet (shard handover)? @default always */
  readonly mayRemediate?: (pod: Pod) => boolean;
  /**
   * The peer write guard (issue 13, ADR 0017): may a failure observed at
   * `since` be acted on now? Asked before every False gate write and every
   * remediation; a refused one is held and asked again. @default always
   */
  readonly confirmedSince?: (since: number) => boolean;
  /** Called once per False write or remediation the guard holds back. */
  readonly onHeld?: (action: 'gate_false' | 'remediation') => void;
  /**
   * The second opinion (issue 13, ADR 0018): may this replica act on a
   * failure (the first False of a gate, a remediation) now? Asked after the
   * peer write guard, for policies with `spec.secondOpinion` true; a refused
   * action is held and asked again on every sweep. @default always
   */
  readonly secondOpinion?: { confirm(question: Question): boolean };
  /** This replica's name, in divergence Events. @default 'outprobe' */
  readonly identity?: string;
  /**
   * The live members and who owns a pod among them (sharding), for the
   * policy-wide readiness cap split between the replicas (ADR 0032).
   * @default this replica alone owns every pod
   */
  readonly fleet?: FleetMembers;
  /** Does this replica write this policy's status (one writer per policy)? @default always */
  readonly writesStatus?: (policyUid: string) => boolean;
  /**
   * Turns this replica's own counts into cluster-wide ones (sharding: other
   * replicas publish theirs). `remediations` are counted since each replica
   * started; the stored status total is added by the controller. @default identity
   */
  readonly aggregate?: (policyKey: string, local: LocalCounts) => LocalCounts;
  /**
   * Is any replica a live member of the fleet? While none is for longer than
   * `orphanAfterMs`, every gate outprobe wrote and left not True is released
   * (ADR 0035). @default always
   */
  readonly fleetLive?: () => boolean;
  /** @default 30000 (the CLI passes max(30 s, 2 × --lease-duration)) */
  readonly orphanAfterMs?: number;
  /** The fleet-wide remediation guard's ledger and fleet view (ADR 0033). @default none: this replica's own view */
  readonly fleetRemediation?: Omit<FleetRemediationDeps, 'clock' | 'tally' | 'pod'>;
  /**
   * Vantage (ADR 0040): which pods no replica may probe from outside their
   * node (kept open, counted, reported), and this replica's own vantage for
   * the gate messages ("node n1 (zone a)"). @default none
   */
  readonly vantage?: { noVantage(pod: Pod): boolean; here(): string | undefined };
  /** Several vantages per pod (`spec.vantage.count` > 1, ADR 0058): who they are and where reports go. @default none: count is 1 everywhere */
  readonly several?: SeveralVantagesOptions;
}

/** The per-policy numbers only the replica that probes a pod knows. */
export interface LocalCounts {
  readonly failing: number;
  readonly erroring: number;
  readonly remediations: number;
  /** Pods whose node and this replica disagree on readiness (ADR 0023). @default 0 */
  readonly diverged?: number;
  /** The panic threshold over this replica's share (ADR 0015); absent when it writes no gates for the policy. */
  readonly panic?: { readonly gated: number; readonly failing: number; readonly held: number; readonly maxUnready: number; readonly panic: boolean };
}

/** What this replica publishes for a policy: its status numbers and its panic share. */
export function localCountsOf(input: Pick<Partial<StatusInput>, 'readinessPanic' | 'diverged'> & Pick<StatusInput, 'failing' | 'erroring'>, remediations: number): LocalCounts {
  const diverged = input.diverged ?? 0;
  const base = { failing: input.failing, erroring: input.erroring, remediations, ...(diverged === 0 ? {} : { diverged }) };
  const p = input.readinessPanic ?? null;
  if (p === null) return base;
  return { ...base, panic: { gated: p.counts.gated, failing: p.counts.failing, held: p.counts.held, maxUnready: p.counts.maxUnready, panic: p.panic } };
}

type PanicView = NonNullable<StatusInput['readinessPanic']> | null;

/**
 * The policy's panic state for its status, summed over the replicas' shares
 * (each applies the threshold to the pods it owns): in panic where any
 * replica fails open. Without shares, this replica's own.
 */
export function clusterPanic(entry: PolicyEntry, ownPanic: StatusInput['readinessPanic'], agg: LocalCounts): PanicView {
  const own = ownPanic ?? null;
  const p = agg.panic;
  if (p === undefined) return own;
  const percent = own?.counts.maxUnreadyPercent ?? entry.policy?.spec.readiness?.maxUnreadyPercent;
  if (percent === undefined) return own;
  return { panic: p.panic, counts: { gated: p.gated, failing: p.failing, held: p.held, maxUnready: p.maxUnready, maxUnreadyPercent: percent } };
}

/** The Remediator's second-opinion hook, when there is a second opinion. */
function secondOpinionHook<T>(so: ControllerOptions['secondOpinion'], hook: (so: NonNullable<ControllerOptions['secondOpinion']>) => T): T | Record<string, never> {
  return so === undefined ? {} : hook(so);
}

const policyPath = (ns: string | undefined): string =>
  ns === undefined ? '/apis/outprobe.io/v1alpha1/probepolicies' : `/apis/outprobe.io/v1alpha1/namespaces/${ns}/probepolicies`;
const podPath = (ns: string | undefined): string => (ns === undefined ? '/api/v1/pods' : `/api/v1/namespaces/${ns}/pods`);

/**
 * The controller: reflects ProbePolicies and pods, keeps one probe target per
 * (policy, pod, container, kind), runs them on the scheduler, and acts on
 * transitions (gate writes, remediation, status). A thin shell over the pure
 * stages; `step()` does the periodic work and tests may call it directly.
 */
export class Controller {
  readonly #o: ControllerOptions;
  readonly policies = new Map<string, PolicyEntry>();
  readonly pods: ReflectorSet<Pod, PodJson>;
  readonly #policyReflector: ReflectorSet<CustomObjectJson, CustomObjectJson>;
  readonly scheduler: Scheduler;
  readonly gates: GateWriter;
  readonly remediator: Remediator;
  readonly targets: TargetSet;
  /** The fail-open rules: gates outprobe stops writing are released (ADR 0035). */
  readonly release: GateRelease;
  /** The level rule has run over every pod once since the caches synced. */
  #swept = false;
  readonly #status: StatusWriter;
  #lastStatusAt = 0;
  readonly #floor = new Map<string, number>();
  /** policy key → the diverged count last reported. */
  readonly #divergedShown = new Map<string, number>();
  readonly #addressGuard: AddressGuard;
  readonly #noVantage: NoVantageKeeper | undefined;
  /** The guards every gate write passes before it is sent, and why a held one waits. */
  readonly guards: GateGuards;
  readonly #several: SeveralVantages | undefined;
  readonly #resync: Resync;
  /** The signal `run` was given (a resync stops with the controller). */
  #stop: AbortSignal | undefined;

  constructor(options: ControllerOptions) {
    this.#o = options;
    const { client, clock, random, observe } = options;
    const owns = options.owns ?? ((): boolean => true);
    this.#addressGuard = new AddressGuard(options.allowedCidrs);
    this.scheduler = new Scheduler({
      clock,
      random,
      concurrency: options.concurrency ?? 256,
      onPassStart: (share, lagMs) => observe({ type: 'pass-start', namespace: share.namespace, policy: share.policy, lagMs }),
    });
    this.guards = new GateGuards({
      clock,
      targets: () => this.targets,
      readiness: () => this.targets.readiness,
      policies: this.policies,
      confirmedSince: options.confirmedSince,
      secondOpinion: options.secondOpinion,
      backed: (c, uid) => this.#several?.backed(c, uid) === true,
      owns: gateOwnership(options.owns, () => this.pods.store),
      onPeerHeld: () => options.onHeld?.('gate_false'),
    });
    this.gates = new GateWriter({
      clock,
      patch: (pod, desired) => {
        const condition = stampVantage(desired, options.vantage?.here());
        return options.gateWrites === undefined ? patchGateCondition(client, pod, condition) : patchGateCondition(options.gateWrites.client, pod, condition, 'throw');
      },
      ...(options.gateWrites === undefined ? {} : { queue: options.gateWrites.queue }),
      onWrite: (pod, condition, result, error, timing) => {
        const policy = this.#gatePolicy(pod.namespace, condition.type);
        observe({ type: 'gate-write', pod, condition, result, timing, ...(policy === undefined ? {} : { policy }), ...(error === undefined ? {} : { error }) });
      },
      onRepair: (pod, condition, serverStatus) => observe({ type: 'gate-repair', pod, condition, serverStatus }),
      // The readiness cap, the peer guard and the second opinion (gate-guards.ts).
      mayWrite: this.guards.mayWrite,
      onHeld: this.guards.onHeld,
    });
    const namespaces = options.namespaces ?? [];
    this.pods = new ReflectorSet<Pod, PodJson>({
      client,
      clock,
      random,
      namespaces,
      path: podPath,
      project: projectPod,
      onEvent: (e) => {
        this.targets.onPod(e.type, e.object, e.old);
        if (e.type === 'DELETED') {
          this.remediator.forget(e.object.uid);
          this.guards.forget(e.object.uid);
        }
        else this.release.pod(e.object);
      },
      onSignal: (s) => observe(reflectorEvent('pods', s)),
    });
    this.#policyReflector = new ReflectorSet<CustomObjectJson, CustomObjectJson>({
      client,
      clock,
      random,
      namespaces,
      path: policyPath,
      project: (raw) => raw,
      onEvent: (e) => this.#onPolicy(e.type, e.object),
      onSignal: (s) => observe(reflectorEvent('probepolicies', s)),
    });
    this.#noVantage = noVantageKeeper(options.vantage, { clock, observe, gates: this.gates, pods: this.pods.store });
    this.#several = severalVantages(options.several, {
      clock, identity: options.identity, scheduler: this.scheduler, probers: options.probers, guard: this.#addressGuard, stall: options.stallGuard,
      policies: this.policies, pods: this.pods.store, gates: this.gates, owns: options.owns, ownTarget: (uid, type) => this.targets.readinessTarget(uid, type),
    });
    this.targets = new TargetSet({
      clock,
      observe,
      scheduler: this.scheduler,
      gates: this.#several === undefined ? this.gates : this.#several.gates(),
      guard: this.#addressGuard,
      probers: options.probers,
      policies: this.policies,
      pods: this.pods.store,
      remediate: (req) => this.remediator.request(req),
      owns,
      ...(options.gainedAt === undefined ? {} : { gainedAt: options.gainedAt }),
      stall: options.stallGuard,
      replica: options.identity,
      fleet: options.fleet,
      ...blindHook(this.#noVantage),
    });
    this.release = new GateRelease({
      clock,
      gates: this.gates,
      policies: this.policies,
      pods: this.pods.store,
      synced: () => this.ready,
      owns,
      ...(options.fleetLive === undefined ? {} : { fleetLive: options.fleetLive }),
      ...(options.orphanAfterMs === undefined ? {} : { orphanAfterMs: options.orphanAfterMs }),
    });
    this.#resync = new Resync({
      clock,
      pods: this.pods.store,
      held: () => heldPods(this.targets),
      owns,
      // The level rule pod by pod in the same slices (a sweep over every pod at the end held the loop 155 ms at 30,000 pods).
      reconcile: (pod) => {
        this.targets.reconcilePod(pod, undefined);
        if (this.#swept) this.release.pod(pod);
      },
    });
    this.remediator = new Remediator({
      clock,
      observe,
      pod: (key) => this.pods.store.get(key),
      policy: (key) => this.policies.get(key)?.policy,
      budgetCounts: (key, candidate, remediating) => this.targets.budgetCounts(key, candidate, remediating),
      stillFailing: (req) => this.targets.stillFailing(req),
      ...(options.mayRemediate === undefined ? {} : { mayRemediate: options.mayRemediate }),
      ...(options.confirmedSince === undefined ? {} : { mayAct: options.confirmedSince }),
      ...secondOpinionHook(options.secondOpinion, (so) => ({ confirmed: (req, since) => remediationSecondOpinion(so, { targets: this.targets, policies: this.policies, pod: (key) => this.pods.store.get(key) }, req, since) })),
      onHeld: () => options.onHeld?.('remediation'),
      evict: (pod, grace) => evictPod(client, pod, { gracePeriodSeconds: grace }),
      delete: (pod, grace) => deletePod(client, pod, { gracePeriodSeconds: grace }),
      ...(options.limits === undefined ? {} : { limits: options.limits }),
      ...(options.fleetRemediation === undefined ? {} : { fleet: new FleetRemediation({ ...options.fleetRemediation, clock, tally: (key) => this.targets.tally(key), pod: (key) => this.pods.store.get(key) }) }),
    });
    this.#status = new StatusWriter({ client, clock, observe });
  }

  /** Caches synced: the controller has seen every policy and pod once. */
  get ready(): boolean {
    return this.pods.synced && this.#policyReflector.synced;
  }

  /** The policy of the pod's namespace that writes gate `type` (a gate change Event is folded into it when it cannot be sent). */
  #gatePolicy(namespace: string, type: string): PolicyRef | undefined {
    for (const e of this.policies.values()) {
      if (e.namespace === namespace && e.policy?.spec.readiness?.conditionType === type) return { namespace: e.namespace, name: e.name, uid: e.uid };
    }
    return undefined;
  }

  async run(signal: AbortSignal): Promise<void> {
    const { clock } = this.#o;
    this.#stop = signal;
    const loops = [this.#policyReflector.run(signal), this.pods.run(signal), this.scheduler.start(signal)];
    while (!signal.aborted) {
      this.step();
      await clock.sleepUntil(clock.now() + 500, signal).catch(() => undefined);
    }
    await Promise.all(loops);
    await this.gates.settled();
  }

  /** Periodic work: retry failed gate writes, re-decide panic thresholds, advance remediation, write changed statuses. */
  step(): void {
    this.gates.sweep();
    if (!this.ready) return;
    if (!this.#swept) {
      // Gates stranded by a change this replica did not see (it was down) are released once both caches hold everything.
      this.#swept = true;
      this.release.sweep();
    }
    this.release.orphans();
    this.targets.panicStep();
    this.remediator.step();
    this.#several?.step();
    const now = this.#o.clock.now();
    if (now - this.#lastStatusAt >= (this.#o.statusIntervalMs ?? 2000)) {
      this.#lastStatusAt = now;
      for (const entry of this.policies.values()) {
        if (this.#o.writesStatus?.(entry.uid) === false) continue;
        const input = this.targets.statusInput(entry, this.pods.synced, this.remediator);
        const local = localCountsOf(input, this.remediator.count(entry.key));
        const agg = this.#o.aggregate?.(entry.key, local) ?? local;
        // Remediations since each replica started, on top of the stored total; never goes down
        // (a restarted replica's own count starts again from zero).
        const total = Math.max(this.#floor.get(entry.key) ?? 0, (entry.stored?.remediations ?? 0) + agg.remediations);
        this.#floor.set(entry.key, total);
        this.#status.write(entry, { ...input, noVantage: NoVantageKeeper.count(this.#noVantage, entry.key), failing: agg.failing, erroring: agg.erroring, diverged: agg.diverged ?? 0, remediations: total, readinessPanic: clusterPanic(entry, input.readinessPanic, agg) });
      }
    }
    this.#reportDivergence();
  }

  /** This replica's diverged count per policy, reported when it changes (the gauge): O(policies). */
  #reportDivergence(): void {
    for (const entry of this.policies.values()) {
      const n = this.targets.tally(entry.key)?.diverged ?? 0;
      if (this.#divergedShown.get(entry.key) === n) continue;
      this.#divergedShown.set(entry.key, n);
      this.#o.observe({ type: 'divergence-count', policy: { namespace: entry.namespace, name: entry.name, uid: entry.uid }, diverged: n });
    }
    for (const key of this.#divergedShown.keys()) if (!this.policies.has(key)) this.#divergedShown.delete(key);
  }

  /** Per-policy counts of this replica's own targets (what sharding publishes). */
  localCounts(): Map<string, LocalCounts> {
    const out = new Map<string, LocalCounts>();
    for (const entry of this.policies.values()) {
      const i = this.targets.statusInput(entry, this.pods.synced, this.remediator);
      out.set(entry.key, localCountsOf(i, this.remediator.count(entry.key)));
    }
    return out;
  }

  /**
   * A peer asks this replica to probe a target once (ADR 0018): answered from
   * this replica's own caches and executors.
   */
  secondOpinion(req: SecondOpinionRequest, signal: AbortSignal): Promise<SecondOpinionAnswer> {
    const { probers, stallGuard } = this.#o;
    return answerSecondOpinion(req, { policies: this.policies, pods: () => this.pods.store.values(), probers, guard: this.#addressGuard, stall: stallGuard }, signal);
  }

  /** Verdicts of other vantages on this replica's pods (the peer endpoint, ADR 0058); ignored without several vantages. */
  vantageReports(batch: ReportBatch): void {
    this.#several?.accept(batch);
  }

  /** Does a valid policy select the pod (the unowned gauge counts only these)? */
  selected(pod: Pod): boolean {
    for (const e of this.policies.values()) if (e.policy !== undefined && selects(e.policy, pod)) return true;
    return false;
  }

  /**
   * Re-plans every pod, e.g. after shard membership changed: gained pods get
   * targets, lost ones lose them (losses first), in slices the event loop can
   * interrupt (ADR 0072), with the membership change's own work per pod in
   * the same slices (`pass`, ADR 0073). A newer call supersedes one still running.
   */
  resync(pass?: ResyncPass): Promise<ResyncResult> {
    return this.#resync.run(this.#stop, pass);
  }

  #onPolicy(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: CustomObjectJson): void {
    const entry = policyEntry(obj, { execEnabled: this.#o.execEnabled === true, execNamespaces: this.#o.execNamespaces ?? [] }, this.#o.limits, this.#o.maxProbeTimeoutSeconds);
    const before = this.policies.get(entry.key);
    if (type === 'DELETED') {
      this.policies.delete(entry.key);
      this.#status.forget(entry.key);
      this.targets.policyRemoved(entry);
      this.release.policyChanged(before, undefined);
      this.#o.observe({ type: 'policy-removed', policy: { namespace: entry.namespace, name: entry.name, uid: entry.uid } });
      return;
    }
    // Keep the stored remediation count we started from across updates.
    this.policies.set(entry.key, before === undefined ? entry : { ...entry, stored: before.stored ?? entry.stored });
    const ref = { namespace: entry.namespace, name: entry.name, uid: entry.uid };
    if (before?.generation !== entry.generation || before.policy === undefined !== (entry.policy === undefined)) {
      this.#o.observe(entry.policy === undefined ? { type: 'policy-invalid', policy: ref, issues: entry.issues } : { type: 'policy-valid', policy: ref });
      const limited = entry.limited ?? [];
      if (limited.length > 0) this.#o.observe({ type: 'policy-limited', policy: ref, notes: limited });
      const capped = entry.cappedTimeouts ?? [];
      if (capped.length > 0) this.#o.observe({ type: 'policy-timeout-capped', policy: ref, capped });
    }
    if (statusOnly(before, entry)) return;
    this.targets.policyChanged(entry);
    this.release.policyChanged(before, entry);
  }
}

