import type { Clock } from '../kernel/index.ts';
import type { Pod } from '../kube/index.ts';
import type { PassResult, Scheduler, Share } from '../probing/index.ts';
import { firstPass } from './first-pass.ts';
import type { PlanCause } from './first-pass.ts';
import type { Target } from './runner.ts';

export interface TargetSchedulingDeps {
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  /** See `TargetSetDeps.spread`. */
  readonly spread?: ((key: string, periodMs: number, now: number) => number) | undefined;
  /** See `TargetSetDeps.gainedAt`. */
  readonly gainedAt?: ((pod: Pod) => number | undefined) | undefined;
  /** See `TargetSetDeps.since`. @default the creation of this object */
  readonly since?: number | undefined;
}

/** A signature of what, in a container's status, should wake its targets at once. */
function containerSignature(pod: Pod | undefined, name: string): string {
  const s = pod?.containerStatuses.find((c) => c.name === name);
  return s === undefined ? '' : `${s.containerId ?? ''}#${s.restartCount}#${s.state}#${String(s.started)}`;
}

/**
 * A new instance or a change of started/running: the target's pass runs at
 * once, as the kubelet's next tick would see it (§3.2 step 4): a new instance
 * gets its initial value and loses the old one's hold at once, before the
 * initial delay, which the pass then waits out (§3.6 improvement: the probe
 * itself runs now when no delay is left).
 */
export function wakesAtOnce(old: Pod | undefined, pod: Pod, container: string): boolean {
  return old !== undefined && containerSignature(old, container) !== containerSignature(pod, container);
}

/** Hands the target set's targets to the scheduler: when each first pass falls (first-pass.ts), and each policy's fair share. */
export class TargetScheduling {
  readonly #d: TargetSchedulingDeps;
  readonly #since: number;
  /** policy key → its scheduler share: one object per policy, not one per target. */
  readonly #shares = new Map<string, Share>();

  constructor(deps: TargetSchedulingDeps) {
    this.#d = deps;
    this.#since = deps.since ?? deps.clock.now();
  }

  /**
   * Schedules the target's passes: a pass asked for (`at`) runs exactly then;
   * a first pass falls where `firstPass` puts it (initial delay, a new
   * container at once, a handover's catch-up, else spread: ADR 0019, 0065).
   */
  schedule(target: Target, pod: Pod, cause: PlanCause, run: (signal: AbortSignal) => Promise<PassResult>, at?: number): void {
    const periodMs = target.plan.probe.periodSeconds * 1000;
    const first = at !== undefined
      ? { dueAt: at, phaseAt: at }
      : firstPass({
          key: target.plan.key,
          periodMs,
          initialDelayMs: target.plan.probe.initialDelaySeconds * 1000,
          startedAt: pod.containerStatuses.find((c) => c.name === target.plan.container)?.startedAt,
          now: this.#d.clock.now(),
          cause,
          since: this.#since,
          gainedAt: this.#d.gainedAt?.(pod),
          spread: this.#d.spread,
        });
    this.#d.scheduler.upsert({
      key: target.plan.key,
      periodMs,
      firstDueAt: first.dueAt,
      phaseAt: first.phaseAt,
      share: this.#shareOf(pod.namespace, target.plan.policy),
      run,
    });
  }

  /** The policy is gone: its share goes. */
  forget(policyKey: string): void {
    this.#shares.delete(policyKey);
  }

  #shareOf(namespace: string, policy: string): Share {
    const known = this.#shares.get(policy);
    if (known !== undefined && known.namespace === namespace) return known;
    const share = { namespace, policy };
    this.#shares.set(policy, share);
    return share;
  }
}
