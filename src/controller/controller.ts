import type { Clock, Random } from '../kernel/index.ts';
import { ReflectorSet, projectPod } from '../kube/index.ts';
import type { KubeClient, Pod, RawObject } from '../kube/index.ts';
import { Scheduler } from '../probing/index.ts';
import type { StallGuard } from '../probing/index.ts';
import { AddressGuard } from '../targets/index.ts';
import { GateWriter, deletePod, evictPod, patchGateCondition } from '../writeback/index.ts';
import type { RemediationLimits } from '../writeback/index.ts';
import { reflectorEvent } from './events.ts';
import type { Observer } from './events.ts';
import { policyEntry } from './policies.ts';
import type { PolicyEntry } from './policies.ts';
import { Remediator } from './remediation.ts';
import { TargetSet } from './target-set.ts';
import type { Probers } from './runner.ts';
import { StatusWriter } from './status-writer.ts';

export interface ControllerOptions {
  readonly client: KubeClient;
  readonly clock: Clock;
  readonly random: Random;
  readonly observe: Observer;
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
  /** Does this replica write this policy's status (one writer per policy)? @default always */
  readonly writesStatus?: (policyUid: string) => boolean;
  /**
   * Turns this replica's own counts into cluster-wide ones (sharding: other
   * replicas publish theirs). `remediations` are counted since each replica
   * started; the stored status total is added by the controller. @default identity
   */
  readonly aggregate?: (policyKey: string, local: LocalCounts) => LocalCounts;
}

/** The per-policy numbers only the replica that probes a pod knows. */
export interface LocalCounts {
  readonly failing: number;
  readonly erroring: number;
  readonly remediations: number;
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
  readonly pods: ReflectorSet<Pod>;
  readonly #policyReflector: ReflectorSet<RawObject>;
  readonly scheduler: Scheduler;
  readonly gates: GateWriter;
  readonly remediator: Remediator;
  readonly targets: TargetSet;
  readonly #status: StatusWriter;
  #lastStatusAt = 0;
  readonly #floor = new Map<string, number>();

  constructor(options: ControllerOptions) {
    this.#o = options;
    const { client, clock, random, observe } = options;
    this.scheduler = new Scheduler({
      clock,
      random,
      concurrency: options.concurrency ?? 256,
      onPassStart: (share, lagMs) => observe({ type: 'pass-start', namespace: share.namespace, policy: share.policy, lagMs }),
    });
    this.gates = new GateWriter({
      clock,
      patch: (pod, condition) => patchGateCondition(client, pod, condition),
      onWrite: (pod, condition, result, error) => observe({ type: 'gate-write', pod, condition, result, ...(error === undefined ? {} : { error }) }),
      onRepair: (pod, condition, serverStatus) => observe({ type: 'gate-repair', pod, condition, serverStatus }),
      ...(options.confirmedSince === undefined ? {} : { mayWrite: (c, since) => c.status === 'True' || options.confirmedSince?.(since) !== false }),
      onHeld: () => options.onHeld?.('gate_false'),
    });
    const namespaces = options.namespaces ?? [];
    this.pods = new ReflectorSet<Pod>({
      client,
      clock,
      random,
      namespaces,
      path: podPath,
      project: projectPod,
      onEvent: (e) => {
        this.targets.onPod(e.type, e.object, e.old);
        if (e.type === 'DELETED') this.remediator.forget(e.object.uid);
      },
      onSignal: (s) => observe(reflectorEvent('pods', s)),
    });
    this.#policyReflector = new ReflectorSet<RawObject>({
      client,
      clock,
      random,
      namespaces,
      path: policyPath,
      project: (raw) => raw,
      onEvent: (e) => this.#onPolicy(e.type, e.object),
      onSignal: (s) => observe(reflectorEvent('probepolicies', s)),
    });
    this.targets = new TargetSet({
      clock,
      observe,
      scheduler: this.scheduler,
      gates: this.gates,
      guard: new AddressGuard(options.allowedCidrs),
      probers: options.probers,
      policies: this.policies,
      pods: this.pods.store,
      remediate: (req) => this.remediator.request(req),
      owns: options.owns ?? (() => true),
      processStart: clock.now(),
      stall: options.stallGuard,
    });
    this.remediator = new Remediator({
      clock,
      observe,
      pod: (key) => this.pods.store.get(key),
      policy: (key) => this.policies.get(key)?.policy,
      budgetPods: (key) => this.targets.budgetPods(key, (uid) => this.remediator.isRemediating(uid)),
      stillFailing: (req) => this.targets.stillFailing(req),
      ...(options.mayRemediate === undefined ? {} : { mayRemediate: options.mayRemediate }),
      ...(options.confirmedSince === undefined ? {} : { mayAct: options.confirmedSince }),
      onHeld: () => options.onHeld?.('remediation'),
      evict: (pod, grace) => evictPod(client, pod, { gracePeriodSeconds: grace }),
      delete: (pod, grace) => deletePod(client, pod, { gracePeriodSeconds: grace }),
      ...(options.limits === undefined ? {} : { limits: options.limits }),
    });
    this.#status = new StatusWriter({ client, clock, observe });
  }

  /** Caches synced: the controller has seen every policy and pod once. */
  get ready(): boolean {
    return this.pods.synced && this.#policyReflector.synced;
  }

  async run(signal: AbortSignal): Promise<void> {
    const { clock } = this.#o;
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
    this.targets.panicStep();
    this.remediator.step();
    const now = this.#o.clock.now();
    if (now - this.#lastStatusAt >= (this.#o.statusIntervalMs ?? 2000)) {
      this.#lastStatusAt = now;
      for (const entry of this.policies.values()) {
        if (this.#o.writesStatus?.(entry.uid) === false) continue;
        const input = this.targets.statusInput(entry, this.pods.synced, this.remediator);
        const local = { failing: input.failing, erroring: input.erroring, remediations: this.remediator.count(entry.key) };
        const agg = this.#o.aggregate?.(entry.key, local) ?? local;
        // Remediations since each replica started, on top of the stored total; never goes down
        // (a restarted replica's own count starts again from zero).
        const total = Math.max(this.#floor.get(entry.key) ?? 0, (entry.stored?.remediations ?? 0) + agg.remediations);
        this.#floor.set(entry.key, total);
        this.#status.write(entry, { ...input, failing: agg.failing, erroring: agg.erroring, remediations: total });
      }
    }
  }

  /** Per-policy counts of this replica's own targets (what sharding publishes). */
  localCounts(): Map<string, LocalCounts> {
    const out = new Map<string, LocalCounts>();
    for (const entry of this.policies.values()) {
      const i = this.targets.statusInput(entry, this.pods.synced, this.remediator);
      out.set(entry.key, { failing: i.failing, erroring: i.erroring, remediations: this.remediator.count(entry.key) });
    }
    return out;
  }

  /** Re-plans every pod, e.g. after shard membership changed: gained pods get targets, lost ones lose them. */
  resync(): void {
    for (const pod of this.pods.store.values()) this.targets.reconcilePod(pod, undefined);
  }

  #onPolicy(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: RawObject): void {
    const entry = policyEntry(obj, { execEnabled: this.#o.execEnabled === true, execNamespaces: this.#o.execNamespaces ?? [] }, this.#o.limits, this.#o.maxProbeTimeoutSeconds);
    const before = this.policies.get(entry.key);
    if (type === 'DELETED') {
      this.policies.delete(entry.key);
      this.#status.forget(entry.key);
      this.targets.policyRemoved(entry, before?.policy);
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
    this.targets.reconcileNamespace(entry.namespace);
  }
}
