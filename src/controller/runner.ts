import type { Clock } from '../kernel/index.ts';
import type { Pod } from '../kube/index.ts';
import type { Outcome, PassResult, StallGuard, StallNote } from '../probing/index.ts';
import { errored, guardedAttempt, probeWithRetries } from '../probing/index.ts';
import { thresholdsOf } from '../policy/index.ts';
import { containerStarted, createTarget, decide, instanceOf, record, reconfigure, restartGracePeriodMs } from '../results/index.ts';
import type { ContainerView, TargetState, TargetView, Transition } from '../results/index.ts';
import type { AddressGuard, ProbeRequest, TargetPlan } from '../targets/index.ts';
import { buildRequest } from '../targets/index.ts';
import type { GateCondition } from '../writeback/index.ts';

/** The executors the runner dispatches to. */
export interface Probers {
  readonly httpGet: (req: Extract<ProbeRequest, { type: 'httpGet' }>['request'], signal: AbortSignal) => Promise<Outcome>;
  readonly tcpSocket: (req: Extract<ProbeRequest, { type: 'tcpSocket' }>['request'], signal: AbortSignal) => Promise<Outcome>;
  readonly grpc: (req: Extract<ProbeRequest, { type: 'grpc' }>['request'], signal: AbortSignal) => Promise<Outcome>;
  /** Present only when exec probes are enabled. */
  readonly exec?: (pod: Pod, container: string, command: readonly string[], timeoutMs: number, signal: AbortSignal) => Promise<Outcome>;
}

export interface Target {
  plan: TargetPlan;
  state: TargetState;
  /** The output of its last failed probe (for a repaired False condition's message). */
  lastFailure: string;
  /**
   * Readiness only: since when its own probes hold it at Failure (ms), and the
   * condition its failure transition asked for, if it had one (an inherited
   * False has none). Read by the panic threshold; `null` when not failing.
   */
  failure: { readonly since: number; readonly condition: GateCondition | null } | null;
}

export interface PassHooks {
  readonly onTransition: (target: Target, pod: Pod, transition: Transition) => void;
  readonly onProbe: (target: Target, pod: Pod, outcome: Outcome, durationMs: number) => void;
  readonly onStop: (target: Target) => void;
  /** A failed attempt the stall guard voided (each one, retried ones included). */
  readonly onVoid?: (target: Target, pod: Pod, note: StallNote) => void;
}

export interface PassDeps {
  readonly clock: Clock;
  readonly probers: Probers;
  readonly guard: AddressGuard;
  readonly hooks: PassHooks;
  /** Voids failures that overlapped a stall of this process (ADR 0016). @default none: every failure counts */
  readonly stall?: StallGuard | undefined;
}

/** The kubelet's view of one container, from the pod projection. */
export function containerView(pod: Pod, name: string): ContainerView | undefined {
  const s = pod.containerStatuses.find((c) => c.name === name);
  if (s === undefined) return undefined;
  const sidecar = pod.containers.find((c) => c.name === name)?.sidecar ?? false;
  return {
    containerId: s.containerId,
    restartCount: s.restartCount,
    state: s.state,
    startedAt: s.startedAt,
    started: s.started,
    restartable: pod.restartPolicy !== 'Never' || sidecar,
  };
}

/**
 * A new target. `seedTrue` (its gate condition is already True: this replica
 * restarted or gained the pod) keeps that True (design rule 5) only for a
 * container that was running since `restartGracePeriodMs` before `now`, the
 * kubelet's restart rule (§3.9): a container started later may never have
 * been probed by the previous owner, so it starts not ready, as it would
 * under a restarted kubelet (ADR 0009).
 */
export function newTarget(plan: TargetPlan, seedTrue: boolean, now: number): Target {
  return {
    plan,
    lastFailure: '',
    failure: null,
    // The plan is the state's key (it has the key's fields): no second object per target.
    state: createTarget(
      plan,
      { config: thresholdsOf(plan.probe), seed: seedTrue ? { value: 'success', startedBefore: now - restartGracePeriodMs } : undefined },
    ),
  };
}

/** A changed probe keeps the committed value but restarts the counters (§3.10). */
export function replan(target: Target, plan: TargetPlan): void {
  target.plan = plan;
  target.state = reconfigure(target.state, thresholdsOf(plan.probe));
}

/**
 * One pass of one target: decide (kubelet steps 1–9, with startup gating from
 * the sibling startup target), probe with up to 3 attempts on error, record
 * (steps 11–13). Transitions go to the hooks; the pass itself never throws.
 * Returns the end of the initial delay when the pass skipped for it, so the
 * first probe runs exactly then (§3.10).
 */
export async function runPass(
  target: Target,
  deps: PassDeps,
  lookup: { readonly pod: (key: string) => Pod | undefined; readonly startupOf: (target: Target) => TargetState | null },
  signal: AbortSignal,
): Promise<PassResult> {
  const pod = lookup.pod(target.plan.podKey);
  const container = pod === undefined ? undefined : containerView(pod, target.plan.container);
  const view: TargetView = {
    pod: pod === undefined ? undefined : { uid: pod.uid, phase: pod.phase, deletionTimestamp: pod.deletionTimestamp },
    container,
    started: containerStarted(container, lookup.startupOf(target)),
  };
  const decision = decide(target.state, view, deps.clock.now());
  target.state = decision.state;
  if (decision.emitted !== null && pod !== undefined) deps.hooks.onTransition(target, pod, decision.emitted);
  if (decision.action === 'stop') {
    deps.hooks.onStop(target);
    return {};
  }
  if (decision.action !== 'probe' || pod === undefined) return decision.wakeAt === null ? {} : { nextDueAt: decision.wakeAt };
  const instance = instanceOf(container) ?? undefined;
  const started = deps.clock.now();
  const outcome = await probeWithRetries(attemptOf(target, pod, deps, signal), signal);
  if (signal.aborted) return {}; // removed, replaced or stopping: a stale result is never recorded
  deps.hooks.onProbe(target, pod, outcome, deps.clock.now() - started);
  const recorded = record(target.state, outcome, deps.clock.now(), instance);
  target.state = recorded.state;
  if (recorded.emitted !== null) deps.hooks.onTransition(target, pod, recorded.emitted);
  return {};
}

/**
 * One attempt, inside a stall-guard window when there is a guard: a failure
 * it voids comes back errored (so it is retried) and marked (so `record`
 * counts nothing).
 */
function attemptOf(target: Target, pod: Pod, deps: PassDeps, signal: AbortSignal): () => Promise<Outcome> {
  const once = (): Promise<Outcome> => probeOnce(target, pod, deps, signal);
  const { stall } = deps;
  if (stall === undefined) return once;
  const timeoutMs = target.plan.probe.timeoutSeconds * 1000;
  return () => guardedAttempt(once, stall, timeoutMs, (note) => deps.hooks.onVoid?.(target, pod, note));
}

function probeOnce(target: Target, pod: Pod, deps: { readonly probers: Probers; readonly guard: AddressGuard }, signal: AbortSignal): Promise<Outcome> {
  return probePlan(target.plan, pod, deps, signal);
}

/**
 * One attempt of a planned probe against the pod as given, through the
 * address guard (the pod's own IP and ports only, every redirect hop
 * vetted). Also what a second opinion runs (ADR 0018).
 */
export async function probePlan(plan: TargetPlan, pod: Pod, deps: { readonly probers: Probers; readonly guard: AddressGuard }, signal: AbortSignal): Promise<Outcome> {
  const req = buildRequest(plan.probe, pod, plan.container, deps.guard);
  switch (req.type) {
    case 'error':
      return errored(req.error);
    case 'httpGet':
      return deps.probers.httpGet(req.request, signal);
    case 'tcpSocket':
      return deps.probers.tcpSocket(req.request, signal);
    case 'grpc':
      return deps.probers.grpc(req.request, signal);
    case 'exec':
      return deps.probers.exec === undefined ? errored('exec probes are disabled') : deps.probers.exec(pod, plan.container, req.command, req.timeoutMs, signal);
  }
}
