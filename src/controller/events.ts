import type { Pod, ReflectorSignal, WatchRestartReason } from '../kube/index.ts';
import type { CappedTimeout, PolicyIssue } from '../policy/index.ts';
import type { PanicCounts } from '../panic/index.ts';
import type { Outcome, StallNote } from '../probing/index.ts';
import type { Transition } from '../results/index.ts';
import type { PlanIssue, TargetPlan } from '../targets/index.ts';
import type { GateCondition, GateWriteTiming, PodRef } from '../writeback/index.ts';

/**
 * What the controller reports. Domain code only emits these; logs, metrics
 * and Kubernetes Events subscribe (style rule 10), so nothing here imports a
 * logger or a metrics library.
 */
export type ControllerEvent =
  | { readonly type: 'probe'; readonly target: TargetPlan; readonly pod: Pod; readonly outcome: Outcome; readonly durationMs: number; readonly observe: boolean }
  /** A failed attempt voided by the stall guard (ADR 0016): retried, never counted. */
  | { readonly type: 'probe-voided'; readonly target: TargetPlan; readonly pod: Pod; readonly note: StallNote }
  | { readonly type: 'pass-start'; readonly namespace: string; readonly policy: string; readonly lagMs: number }
  | { readonly type: 'transition'; readonly target: TargetPlan; readonly pod: Pod; readonly transition: Transition; readonly observe: boolean }
  /** `policy`: the policy that owns the gate (its summary Event accounts for gate-change Events that could not be sent). */
  | { readonly type: 'gate-write'; readonly pod: PodRef; readonly condition: GateCondition; readonly result: 'written' | 'gone' | 'failed'; readonly policy?: PolicyRef; readonly error?: unknown; readonly timing?: GateWriteTiming }
  | { readonly type: 'gate-repair'; readonly pod: PodRef; readonly condition: GateCondition; readonly serverStatus: string | undefined }
  | { readonly type: 'gate-skipped'; readonly target: TargetPlan; readonly pod: Pod; readonly condition: GateCondition; readonly why: 'observe' | 'ungated' | 'foreign' }
  | { readonly type: 'remediation'; readonly policy: PolicyRef; readonly pod: PodRef; readonly action: 'Evict' | 'Delete'; readonly result: RemediationResult; readonly message: string }
  /** A policy's panic threshold state changed (ADR 0015): started, ended, or new counts. */
  | { readonly type: 'readiness-panic'; readonly policy: PolicyRef; readonly change: 'started' | 'ended' | 'counts'; readonly panic: boolean; readonly counts: PanicCounts }
  /**
   * The hold at the start of a mass failure (ADR 0032) began (`holding`) or
   * ended: `arrived` of this replica's gated pods turned failing within
   * `windowMs`, more than the `allowance` it may hold False.
   */
  | { readonly type: 'readiness-hold'; readonly policy: PolicyRef; readonly holding: boolean; readonly arrived: number; readonly allowance: number; readonly windowMs: number }
  | { readonly type: 'halt'; readonly policy: PolicyRef; readonly halted: boolean; readonly message: string }
  | { readonly type: 'policy-invalid'; readonly policy: PolicyRef; readonly issues: readonly PolicyIssue[] }
  | { readonly type: 'policy-valid'; readonly policy: PolicyRef }
  /** The installer's limits override part of a valid policy's remediation spec (clamped halt, Delete → Evict). */
  | { readonly type: 'policy-limited'; readonly policy: PolicyRef; readonly notes: readonly string[] }
  | { readonly type: 'policy-timeout-capped'; readonly policy: PolicyRef; readonly capped: readonly CappedTimeout[] }
  | { readonly type: 'policy-removed'; readonly policy: PolicyRef }
  /** A probe block plans no target on a pod; `policy` is absent only when the policy went away meanwhile. */
  | { readonly type: 'plan-issue'; readonly issue: PlanIssue; readonly pod: PodRef; readonly policy?: PolicyRef }
  /** A pod turned diverged (the node's ContainersReady and outprobe's readiness disagree, ADR 0023), or stopped being so. */
  | { readonly type: 'divergence'; readonly pod: PodRef; readonly policy: PolicyRef; readonly diverged: boolean; readonly message: string }
  /** This replica's count of diverged pods of a policy changed (the outprobe_divergent_pods gauge). */
  | { readonly type: 'divergence-count'; readonly policy: PolicyRef; readonly diverged: number }
  /** A pod lost its vantage (no replica may probe it from outside its node, ADR 0040), or has one again: one per pod and transition, from the replica that keeps or probes it. */
  | { readonly type: 'no-vantage'; readonly pod: PodRef; readonly policy: PolicyRef; readonly blind: boolean; readonly message: string }
  /** This replica's count of a policy's pods without a vantage that it keeps changed (the outprobe_pods_without_vantage gauge). */
  | { readonly type: 'no-vantage-count'; readonly policy: PolicyRef; readonly count: number }
  | { readonly type: 'gate-conflict'; readonly policy: PolicyRef; readonly message: string }
  | { readonly type: 'status-write'; readonly policy: PolicyRef; readonly result: 'written' | 'failed'; readonly error?: unknown }
  | {
    readonly type: 'reflector';
    readonly resource: string;
    readonly detail: string;
    readonly error?: unknown;
    /** The object a `skipped` signal is about (metadata only, never the body). */
    readonly object?: { readonly namespace: string; readonly name: string; readonly uid: string };
    /** Set when the signal means the watch starts again, and why (the outprobe_watch_restarts_total counter). */
    readonly restart?: WatchRestartReason;
  };

/** A reflector signal as a controller event; `skipped` carries the object's identity and the error. */
export function reflectorEvent(resource: string, s: ReflectorSignal): ControllerEvent {
  if (s.kind === 'skipped') return { type: 'reflector', resource, detail: s.kind, error: s.error, object: s.object };
  if (s.kind === 'watch-ended') return { type: 'reflector', resource, detail: `${s.kind} (${s.reason})`, restart: s.reason };
  if (s.kind === 'expired') return { type: 'reflector', resource, detail: s.kind, restart: 'expired' };
  if (s.kind === 'error') return { type: 'reflector', resource, detail: s.kind, error: s.error, restart: 'error' };
  return { type: 'reflector', resource, detail: s.kind };
}

export type RemediationResult = 'evicted' | 'deleted' | 'observe' | 'skipped_budget' | 'rate_limited' | 'halted' | 'waiting' | 'pdb_blocked' | 'conflict' | 'not_found' | 'failed';

export interface PolicyRef {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

export type Observer = (event: ControllerEvent) => void;
