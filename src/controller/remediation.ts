import type { Clock } from '../kernel/index.ts';
import type { Pod } from '../kube/index.ts';
import type { ProbePolicy } from '../policy/index.ts';
import { RemediationRate, budgetCountsOf, budgetDecisionFromCounts, effectiveAction, effectiveBudget, noRemediationLimits } from '../writeback/index.ts';
import type { BudgetCounts, BudgetPod, DisruptionResult, DisruptionTarget, RemediationLimits } from '../writeback/index.ts';
import type { Observer, PolicyRef, RemediationResult } from './events.ts';
import type { FleetGuard } from './fleet-remediation.ts';

/** A liveness or startup Failure that asks for the pod to go. */
export interface RemediationRequest {
  readonly policy: string;
  readonly podKey: string;
  readonly podUid: string;
  /** The container instance that failed: one remediation per instance, ever. */
  readonly instance: string;
  readonly kind: 'liveness' | 'startup';
  readonly container: string;
  readonly output: string;
  /** The probe's terminationGracePeriodSeconds, if set. */
  readonly gracePeriodSeconds: number | null;
  /**
   * How long to wait before acting: one period plus the timeout of the
   * failing probe, so failures of a correlated outage (whose verdicts land up
   * to a period apart) are all seen before the halt rule is evaluated.
   */
  readonly settleMs: number;
}

export interface RemediatorDeps {
  readonly clock: Clock;
  readonly observe: Observer;
  readonly pod: (key: string) => Pod | undefined;
  readonly policy: (key: string) => ProbePolicy | undefined;
  /**
   * The policy's selected pods, each with whether outprobe sees it failing.
   * Read only without `budgetCounts`. @default none
   */
  readonly budgetPods?: (policyKey: string) => readonly BudgetPod[];
  /**
   * What the budget reads of the policy's pods, as counts kept as they
   * change (ADR 0031): a decision costs the same for 10 pods or 100,000.
   * `remediating` is this remediator's pods in progress, by UID and key.
   * @default counted from `budgetPods`
   */
  readonly budgetCounts?: (policyKey: string, candidate: { readonly uid: string; readonly podKey: string }, remediating: ReadonlyMap<string, string>) => BudgetCounts;
  /** Whether the request is still current (target still failing on that instance). */
  readonly stillFailing: (req: RemediationRequest) => boolean;
  /** May this replica act on the pod yet (shard handover rule)? @default always */
  readonly mayRemediate?: (pod: Pod) => boolean;
  /**
   * The write guard (issue 13, ADR 0017): may a failure observed at `since`
   * be acted on now? A refused request stays pending and is asked again on
   * the next step. @default always
   */
  readonly mayAct?: (since: number) => boolean;
  /** Called once per request the guard holds back. */
  readonly onHeld?: (req: RemediationRequest) => void;
  /**
   * The second opinion (ADR 0018): does another replica see the failure
   * observed at `since` too? Asked only for a remediation the budget allows,
   * in Enforce mode, right before it is sent; a refused one stays pending and
   * is asked again on the next step. @default always
   */
  readonly confirmed?: (req: RemediationRequest, since: number) => boolean;
  readonly evict: (pod: DisruptionTarget, grace: number) => Promise<DisruptionResult>;
  readonly delete: (pod: DisruptionTarget, grace: number) => Promise<DisruptionResult>;
  /** Wait before retrying a PDB refusal without Retry-After. @default 5000 */
  readonly pdbRetryMs?: number;
  /** The installer's limits no policy can exceed. @default noRemediationLimits */
  readonly limits?: RemediationLimits;
  /**
   * The fleet-wide guard (ADR 0033): waits while outprobe cannot tell a dead
   * pod from its own trouble, decides the budget over every replica's
   * failing pods and remediations, and reserves each remediation in the
   * policy's ledger before it is sent. @default none: this replica's own view
   */
  readonly fleet?: FleetGuard;
}

interface Pending {
  readonly req: RemediationRequest;
  readonly requestedAt: number;
  held: boolean;
  inFlight: boolean;
  notBefore: number;
  told: RemediationResult | undefined;
  conflicts: number;
}

/** The kubelet's kill grace precedence (§3.4): probe's, else the pod's, floored at 2 s. */
export function gracePeriod(req: RemediationRequest, pod: Pod): number {
  return Math.max(2, req.gracePeriodSeconds ?? pod.terminationGracePeriodSeconds);
}

/**
 * Turns liveness/startup failures into evictions or deletes, one at a time
 * per pod and at most once per container instance, under the policy budget
 * (maxUnavailable, halt on correlated failure). Observe mode only reports
 * what would have happened. 404/409 mean someone else acted: the request
 * ends (a 409 is re-checked against fresh state at most twice); a PDB refusal
 * (429) waits and retries while the pod still fails.
 */
export class Remediator {
  readonly #d: RemediatorDeps;
  readonly #pending = new Map<string, Pending>();
  /** Instances already remediated (or given up on): never acted on twice. */
  readonly #done = new Set<string>();
  /** Pods remediated and not yet gone, for the budget: UID → pod key. */
  readonly #remediating = new Map<string, string>();
  readonly #halted = new Map<string, boolean>();
  /** Policies a ledger reservation found halted since the last step. */
  readonly #reserveHalted = new Set<string>();
  readonly #counts = new Map<string, number>();
  readonly #limits: RemediationLimits;
  /** Shared by every policy: the installer's remediations per minute. */
  readonly #rate: RemediationRate;

  constructor(deps: RemediatorDeps) {
    this.#d = deps;
    this.#limits = deps.limits ?? noRemediationLimits;
    this.#rate = new RemediationRate({ clock: deps.clock, perMinute: this.#limits.perMinute });
  }

  request(req: RemediationRequest): void {
    const id = `${req.podUid}/${req.instance}`;
    if (this.#done.has(id) || this.#pending.has(req.podUid)) return;
    this.#pending.set(req.podUid, { req, requestedAt: this.#d.clock.now(), held: false, inFlight: false, notBefore: this.#d.clock.now() + req.settleMs, told: undefined, conflicts: 0 });
  }

  /** A pod went away: it no longer counts as being remediated. */
  forget(podUid: string): void {
    this.#pending.delete(podUid);
    this.#remediating.delete(podUid);
  }

  /**
   * A pod's remediation as this replica holds it (what `kubectl outprobe
   * explain` shows): pending since when, the last outcome it reported
   * (waiting, halted, budget, rate), in flight, or already sent.
   */
  inspect(podUid: string): { readonly probe?: 'liveness' | 'startup'; readonly container?: string; readonly requestedAt?: number; readonly state: string; readonly lastOutcome?: RemediationResult } | undefined {
    const p = this.#pending.get(podUid);
    if (p !== undefined) {
      const state = p.inFlight ? 'in-flight' : p.held ? 'held by the peer guard or the second opinion' : this.#d.clock.now() < p.notBefore ? 'settling' : 'pending';
      return { probe: p.req.kind, container: p.req.container, requestedAt: p.requestedAt, state, ...(p.told === undefined ? {} : { lastOutcome: p.told }) };
    }
    return this.#remediating.has(podUid) ? { state: 'sent; waiting for the pod to go' } : undefined;
  }

  isRemediating(podUid: string): boolean {
    return this.#remediating.has(podUid) || this.#pending.get(podUid)?.inFlight === true;
  }

  halted(policyKey: string): boolean {
    return this.#halted.get(policyKey) === true;
  }

  /** Remediations done per policy since start (status adds them to its stored total). */
  count(policyKey: string): number {
    return this.#counts.get(policyKey) ?? 0;
  }

  /** Re-evaluates every pending request; sends what the budget allows. */
  step(): void {
    const now = this.#d.clock.now();
    const haltedNow = new Set<string>();
    for (const [uid, p] of this.#pending) {
      if (p.inFlight || p.notBefore > now) continue;
      const pod = this.#d.pod(p.req.podKey);
      const policy = this.#d.policy(p.req.policy);
      if (pod?.uid !== uid || pod.deletionTimestamp !== undefined || policy === undefined || !this.#d.stillFailing(p.req)) {
        this.#pending.delete(uid);
        continue;
      }
      if (this.#d.mayRemediate?.(pod) === false || this.#heldBack(p, pod, policy)) continue;
      this.#consider(p, pod, policy, haltedNow);
    }
    for (const key of this.#reserveHalted) haltedNow.add(key);
    this.#reserveHalted.clear();
    this.#updateHalts(haltedNow);
  }

  /**
   * The peer write guard holds it (issue 13), or the fleet guard says to
   * wait (ADR 0033: outprobe cannot tell a dead pod from its own trouble
   * now); it stays pending and is asked again on the next step.
   */
  #heldBack(p: Pending, pod: Pod, policy: ProbePolicy): boolean {
    if (this.#d.mayAct?.(p.requestedAt) === false) {
      if (!p.held) this.#d.onHeld?.(p.req);
      p.held = true;
      return true;
    }
    const wait = this.#d.fleet?.wait(p.req, p.requestedAt);
    if (wait === undefined) return false;
    this.#tell(p, { ref: policyRef(policy), pod, action: effectiveAction(policy.spec.liveness?.action ?? 'Evict', this.#limits) }, 'waiting', wait.message);
    return true;
  }

  #consider(p: Pending, pod: Pod, policy: ProbePolicy, haltedNow: Set<string>): void {
    const ref = policyRef(policy);
    const action = effectiveAction(policy.spec.liveness?.action ?? 'Evict', this.#limits);
    const budget = effectiveBudget(policy.spec.remediation, this.#limits);
    const fleet = this.#d.fleet;
    const policyUid = policy.metadata.uid ?? '';
    const decision = fleet === undefined ? budgetDecisionFromCounts(this.#budgetCounts(p.req, pod.uid), budget) : fleet.decide(p.req, pod, policyUid, budget, this.#remediating);
    if (!decision.allow) {
      if (decision.reason === 'halted') haltedNow.add(p.req.policy);
      const clamped = budget === policy.spec.remediation ? '' : ` (the policy asks ${policy.spec.remediation.haltAbovePercentFailing}%; the installer's ceiling applies)`;
      this.#tell(p, { ref, pod, action }, decision.reason === 'halted' ? 'halted' : 'skipped_budget', decision.message + clamped);
      return;
    }
    if (policy.spec.mode === 'Observe') {
      this.#tell(p, { ref, pod, action }, 'observe', `would ${action === 'Evict' ? 'evict' : 'delete'} pod ${pod.name}: ${p.req.kind} probe of container ${p.req.container} failed: ${p.req.output}`);
      this.#finish(p);
      return;
    }
    if (this.#d.confirmed?.(p.req, p.requestedAt) === false) return;
    if (!this.#rate.take()) {
      this.#tell(p, { ref, pod, action }, 'rate_limited', `the installer's limit of ${this.#rate.perMinute} remediations per minute is reached (--max-remediations-per-minute): remediation of pod ${pod.name} deferred`);
      return;
    }
    p.inFlight = true;
    const target: DisruptionTarget = { uid: pod.uid, namespace: pod.namespace, name: pod.name, resourceVersion: pod.resourceVersion };
    const failed = (error: unknown): void => {
      p.inFlight = false;
      this.#remediating.delete(pod.uid);
      p.notBefore = this.#d.clock.now() + (this.#d.pdbRetryMs ?? 5000);
      this.#d.observe({ type: 'remediation', policy: ref, pod: target, action, result: 'failed', message: String(error) });
    };
    const send = (): void => {
      const grace = gracePeriod(p.req, pod);
      const call = action === 'Evict' ? this.#d.evict(target, grace) : this.#d.delete(target, grace);
      void call.then(
        (result) => {
          if (result !== 'done') fleet?.release(p.req, pod, policyUid);
          this.#settle(p, ref, pod, action, result);
        },
        (error: unknown) => {
          fleet?.release(p.req, pod, policyUid);
          failed(error);
        },
      );
    };
    if (fleet === undefined) {
      this.#remediating.set(pod.uid, p.req.podKey);
      send();
      return;
    }
    // The ledger first (ADR 0033): every replica's remediations in flight count before this one is sent.
    const remediating = new Map(this.#remediating);
    this.#remediating.set(pod.uid, p.req.podKey);
    fleet.reserve(p.req, pod, policyUid, budget, remediating).then(
      (reserved) => {
        if (reserved.allow && this.#d.stillFailing(p.req)) {
          send();
          return;
        }
        if (reserved.allow) {
          // It passed again while the ledger was read and written: nothing to do, the entry goes.
          p.inFlight = false;
          this.#remediating.delete(pod.uid);
          this.#pending.delete(pod.uid);
          fleet.release(p.req, pod, policyUid);
          return;
        }
        p.inFlight = false;
        this.#remediating.delete(pod.uid);
        if (reserved.reason === 'halted') this.#reserveHalted.add(p.req.policy);
        this.#tell(p, { ref, pod, action }, reserved.reason === 'halted' ? 'halted' : 'skipped_budget', reserved.message);
      },
      (error: unknown) => {
        failed(new Error(`remediation ledger: ${String(error)}`));
      },
    );
  }

  #budgetCounts(req: RemediationRequest, uid: string): BudgetCounts {
    if (this.#d.budgetCounts !== undefined) return this.#d.budgetCounts(req.policy, { uid, podKey: req.podKey }, this.#remediating);
    return budgetCountsOf(uid, this.#d.budgetPods?.(req.policy) ?? []);
  }

  #settle(p: Pending, ref: PolicyRef, pod: Pod, action: 'Evict' | 'Delete', result: DisruptionResult): void {
    p.inFlight = false;
    const podRef = { uid: pod.uid, namespace: pod.namespace, name: pod.name };
    const why = `${p.req.kind} probe of container ${p.req.container} failed: ${p.req.output}`;
    if (result === 'done') {
      this.#counts.set(p.req.policy, this.count(p.req.policy) + 1);
      this.#finish(p);
      this.#d.observe({ type: 'remediation', policy: ref, pod: podRef, action, result: action === 'Evict' ? 'evicted' : 'deleted', message: `${action === 'Evict' ? 'Evicted' : 'Deleted'} pod ${pod.name}: ${why}` });
      return;
    }
    this.#remediating.delete(pod.uid);
    if (result === 'pdb_blocked') {
      p.notBefore = this.#d.clock.now() + (this.#d.pdbRetryMs ?? 5000);
      this.#tell(p, { ref, pod, action }, 'pdb_blocked', `eviction of pod ${pod.name} refused by a PodDisruptionBudget; retrying while it still fails`);
      return;
    }
    if (result === 'conflict' && ++p.conflicts <= 2) return; // re-checked against fresh state on the next step
    this.#finish(p);
    this.#d.observe({ type: 'remediation', policy: ref, pod: podRef, action, result: result === 'conflict' ? 'conflict' : 'not_found', message: `pod ${pod.name} changed or went away before outprobe acted (someone else acted): nothing done` });
  }

  #finish(p: Pending): void {
    this.#pending.delete(p.req.podUid);
    this.#done.add(`${p.req.podUid}/${p.req.instance}`);
  }

  /** Reports each hold-back reason once per request, not on every step. */
  #tell(p: Pending, what: { readonly ref: PolicyRef; readonly pod: Pod; readonly action: 'Evict' | 'Delete' }, result: RemediationResult, message: string): void {
    if (p.told === result) return;
    p.told = result;
    const { ref, pod, action } = what;
    this.#d.observe({ type: 'remediation', policy: ref, pod: { uid: pod.uid, namespace: pod.namespace, name: pod.name }, action, result, message });
  }

  #updateHalts(haltedNow: Set<string>): void {
    for (const key of new Set([...this.#halted.keys(), ...haltedNow])) {
      const now = haltedNow.has(key);
      if (this.#halted.get(key) === now) continue;
      this.#halted.set(key, now);
      const policy = this.#d.policy(key);
      if (policy !== undefined) {
        this.#d.observe({ type: 'halt', policy: policyRef(policy), halted: now, message: now ? 'Too many pods fail at once: remediation halted' : 'Remediation resumed' });
      }
    }
  }
}

export function policyRef(policy: ProbePolicy): PolicyRef {
  return { namespace: policy.metadata.namespace ?? '', name: policy.metadata.name, uid: policy.metadata.uid ?? '' };
}
