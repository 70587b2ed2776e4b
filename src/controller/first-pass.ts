import { handoverFirstPass, spreadDueAt } from '../probing/index.ts';
import type { FirstPass } from '../probing/index.ts';

/**
 * What planned a target: an event of its pod (`pod`), a policy created,
 * edited or removed (`policy`), or a replan of every pod (`resync`: shard
 * membership changed, a zone was learned).
 */
export type PlanCause = 'pod' | 'policy' | 'resync';

export interface FirstPassInput {
  readonly key: string;
  readonly periodMs: number;
  readonly initialDelayMs: number;
  /** The container's `state.running.startedAt` (whole seconds, ms), if it runs. */
  readonly startedAt: number | undefined;
  readonly now: number;
  readonly cause: PlanCause;
  /** When this replica began (it watches pods from then on). */
  readonly since: number;
  /** When this replica gained the pod in a shard handover, if it did. */
  readonly gainedAt: number | undefined;
  /** The phase rule for targets planned together (`spreadDueAt`, ADR 0019). */
  readonly spread?: ((key: string, periodMs: number, now: number) => number) | undefined;
}

/** `startedAt` has whole seconds: a container started in the same second as `at` counts as started at or after it. */
const wholeSecond = (at: number): number => Math.floor(at / 1000) * 1000;

/**
 * A container that started while this replica runs, seen by an event of its
 * pod within a period of its first probe falling due: the kubelet creates a
 * new worker for it and that worker probes at once (kubelet-probes.md §3.1),
 * after its initial delay. Not one planned by a policy change or a replan of
 * every pod, one that ran before this replica began or gained the pod, or
 * one whose first probe fell due longer ago (a pod newly selected by a label
 * change, seen late): those are planned together with others and spread.
 */
export function newContainer(i: FirstPassInput): boolean {
  if (i.cause !== 'pod' || i.startedAt === undefined) return false;
  if (i.startedAt < wholeSecond(i.since) || (i.gainedAt !== undefined && i.startedAt < wholeSecond(i.gainedAt))) return false;
  // The second `startedAt` truncated is allowed for.
  return i.now - (i.startedAt + i.initialDelayMs) < i.periodMs + 1000;
}

/**
 * When a newly planned (or replanned) target's first pass runs, and the phase
 * its ticks keep (ADR 0019, ADR 0065):
 *
 * - a container still in its initial delay: exactly at its end (§3.10);
 * - a new container (`newContainer`): at once, its delay being over;
 * - a container this replica gained in a handover within the last period: a
 *   slot the hand-off lost is caught up (`handoverFirstPass`);
 * - any other (replica start, policy created or edited, a pod newly
 *   selected): at the key's own phase in its period (`spreadDueAt`), so
 *   targets planned together never probe together.
 */
export function firstPass(i: FirstPassInput): FirstPass {
  const dueAt = i.startedAt === undefined ? i.now : i.startedAt + i.initialDelayMs;
  if (dueAt > i.now) return { dueAt, phaseAt: dueAt };
  if (newContainer(i)) return { dueAt: i.now, phaseAt: i.now };
  if (i.gainedAt !== undefined && i.now - i.gainedAt <= i.periodMs) return handoverFirstPass(i.key, i.periodMs, i.now);
  const spread = (i.spread ?? spreadDueAt)(i.key, i.periodMs, i.now);
  return { dueAt: spread, phaseAt: spread };
}
