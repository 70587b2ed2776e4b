import { panicMessage } from '../panic/index.ts';
import type { PanicCounts } from '../panic/index.ts';

/**
 * ProbePolicy `.status`, computed from what the controller knows (pure).
 * Conditions follow metav1.Condition; a condition's lastTransitionTime is
 * carried over from the stored status while its status does not change, so
 * an unchanged world yields a byte-identical status and no write.
 */
export interface PolicyCondition {
  readonly type: 'Ready' | 'Degraded' | 'RemediationHalted' | 'ReadinessPanic' | 'Invalid';
  readonly status: 'True' | 'False';
  readonly observedGeneration: number;
  readonly lastTransitionTime: string;
  readonly reason: string;
  readonly message: string;
}

export interface PolicyStatus {
  readonly observedGeneration: number;
  readonly pods: number;
  readonly ready: number;
  readonly failing: number;
  readonly ungated: number;
  /**
   * Selected pods whose node (ContainersReady) and outprobe disagree on
   * readiness, stably (ADR 0023). Always set by computeStatus; absent only in
   * a status stored by an older controller, so that it differs and is written.
   */
  readonly diverged?: number;
  /** Selected pods no replica may probe under the policy's vantage spread (ADR 0040): not probed, kept True. @default 0 */
  readonly noVantage?: number;
  readonly remediations: number;
  readonly message: string;
  readonly conditions: readonly PolicyCondition[];
}

export interface StatusInput {
  readonly generation: number;
  /** `null` when the policy is valid. */
  readonly invalid: string | null;
  readonly synced: boolean;
  readonly pods: number;
  readonly ready: number;
  readonly failing: number;
  readonly ungated: number;
  /** Targets whose last attempts errored (bad port, no IP, ...). */
  readonly erroring: number;
  /** Pods whose node and outprobe disagree on readiness (ADR 0023), summed over the replicas. @default 0 */
  readonly diverged?: number;
  /** Selected pods no replica may probe under `spec.vantage.spread` (ADR 0040). @default 0 */
  readonly noVantage?: number;
  readonly planIssues: readonly string[];
  /** Of the pods with plan issues, those whose container's own probe (`fromContainer`) is missing or refused (ADR 0023). @default 0 */
  readonly containerProbeIssues?: number;
  /**
   * Pods on which this policy does not write its readiness condition because
   * an older ProbePolicy writes the same condition type there (one message each).
   */
  readonly conflicts?: readonly string[];
  /** Gated pods whose condition of this type another writer set (not outprobe): left alone. */
  readonly foreign?: number;
  readonly remediations: number;
  readonly halted: boolean;
  /**
   * The panic threshold (ADR 0015), summed over the replicas: `panic` when
   * any of them fails open. `null` when the policy writes no gates.
   * @default null
   */
  readonly readinessPanic?: { readonly panic: boolean; readonly counts: PanicCounts } | null;
  /** What the installer's limits override in the policy (shown on RemediationHalted). @default [] */
  readonly limited?: readonly string[];
  readonly now: string;
}

type Draft = Omit<PolicyCondition, 'observedGeneration' | 'lastTransitionTime'>;

function degraded(i: StatusInput): Draft {
  const parts: string[] = [];
  if (i.erroring > 0) parts.push(`${i.erroring} probe target(s) error (the attempt is void: check ports and pod IPs)`);
  if (i.ungated > 0) parts.push(`${i.ungated} selected pod(s) lack the readiness gate and are probed but not gated`);
  const foreign = i.foreign ?? 0;
  if (foreign > 0) parts.push(`${foreign} pod(s) carry this condition type written by another writer (not outprobe): outprobe does not write it there`);
  const noVantage = i.noVantage ?? 0;
  if (noVantage > 0) parts.unshift(`${noVantage} pod(s) have no vantage: no replica runs outside their node (spec.vantage.spread), so they are not probed and their readiness condition is kept True`);
  parts.push(...i.planIssues.slice(0, 3));
  if (parts.length === 0) return { type: 'Degraded', status: 'False', reason: 'AsExpected', message: 'All targets probe cleanly' };
  const reason = noVantage > 0 ? 'NoVantage' : i.erroring > 0 ? 'ProbeErrors' : i.ungated > 0 ? 'PodsUngated' : foreign > 0 ? 'ForeignCondition' : (i.containerProbeIssues ?? 0) > 0 ? 'ContainerProbeUnavailable' : 'ContainerMissing';
  return { type: 'Degraded', status: 'True', reason, message: parts.join('; ') };
}

function drafts(i: StatusInput): Draft[] {
  if (i.invalid !== null) {
    return [
      { type: 'Ready', status: 'False', reason: 'InvalidSpec', message: 'The policy is invalid and is not applied' },
      { type: 'Invalid', status: 'True', reason: 'InvalidSpec', message: i.invalid },
      { type: 'Degraded', status: 'False', reason: 'InvalidSpec', message: 'Not applied' },
      { type: 'RemediationHalted', status: 'False', reason: 'InvalidSpec', message: 'Not applied' },
      { type: 'ReadinessPanic', status: 'False', reason: 'InvalidSpec', message: 'Not applied' },
    ];
  }
  const conflicts = i.conflicts ?? [];
  if (conflicts.length > 0) {
    const more = conflicts.length > 1 ? ` (and ${conflicts.length - 1} more pod(s))` : '';
    return [
      { type: 'Ready', status: 'False', reason: 'ConditionTypeConflict', message: `Not writing its readiness condition on ${conflicts.length} pod(s): an older ProbePolicy writes that condition type there` },
      { type: 'Invalid', status: 'True', reason: 'ConditionTypeConflict', message: `${conflicts[0] ?? ''}${more}` },
      degraded(i),
      halted(i),
      readinessPanic(i),
    ];
  }
  return [
    i.synced
      ? { type: 'Ready', status: 'True', reason: 'Probing', message: `Probing ${i.pods} pod(s)` }
      : { type: 'Ready', status: 'False', reason: 'Syncing', message: 'Waiting for the pod cache to sync' },
    { type: 'Invalid', status: 'False', reason: 'Valid', message: 'The policy is valid' },
    degraded(i),
    halted(i),
    readinessPanic(i),
  ];
}

function readinessPanic(i: StatusInput): Draft {
  const p = i.readinessPanic ?? null;
  if (p === null) return { type: 'ReadinessPanic', status: 'False', reason: 'NoGates', message: 'The policy writes no readiness gates here (no readiness probe, Observe mode, or no gated pods)' };
  if (p.panic) return { type: 'ReadinessPanic', status: 'True', reason: 'FailingOpen', message: panicMessage(p.counts) };
  const c = p.counts;
  return { type: 'ReadinessPanic', status: 'False', reason: 'WithinThreshold', message: `${c.failing} of ${c.gated} gated pods fail readiness; at most ${c.maxUnreadyPercent}% (${c.maxUnready}) may be held unready` };
}

function halted(i: StatusInput): Draft {
  return i.halted
    ? { type: 'RemediationHalted', status: 'True', reason: 'CorrelatedFailure', message: [`${i.failing} of ${i.pods} pods fail at once, above haltAbovePercentFailing: remediation halted`, ...(i.limited ?? [])].join('; ') }
    : { type: 'RemediationHalted', status: 'False', reason: 'WithinBudget', message: ['Remediation is allowed', ...(i.limited ?? [])].join('; ') };
}

function summary(i: StatusInput): string {
  if (i.invalid !== null) return `Invalid: ${i.invalid}`;
  const conflicts = i.conflicts ?? [];
  if (conflicts.length > 0) return `Conflict: ${conflicts.length} pod(s) have this condition type written by an older ProbePolicy`;
  const panic = i.readinessPanic ?? null;
  if (panic?.panic === true) {
    const c = panic.counts;
    const more = i.halted ? '; remediation halted' : '';
    return `Readiness panic: ${c.failing}/${c.gated} gated pods fail readiness, ${c.held} held unready, ${c.failing - c.held} kept ready (maxUnreadyPercent ${c.maxUnreadyPercent})${more}`;
  }
  if (i.halted) return `Remediation halted: ${i.failing}/${i.pods} pods failing`;
  const parts = [`${i.ready}/${i.pods} ready`];
  if (i.failing > 0) parts.push(`${i.failing} failing`);
  if (i.ungated > 0) parts.push(`${i.ungated} ungated`);
  if (i.erroring > 0) parts.push(`${i.erroring} erroring`);
  return [...parts, ...viewParts(i)].join(', ');
}

/** What the summary says of where the verdicts come from: divergence (ADR 0023), pods without a vantage (ADR 0040). */
function viewParts(i: StatusInput): string[] {
  const parts: string[] = [];
  if ((i.diverged ?? 0) > 0) parts.push(`${i.diverged ?? 0} diverged (node and outprobe disagree)`);
  if ((i.noVantage ?? 0) > 0) parts.push(`${i.noVantage ?? 0} without vantage (not probed, kept ready)`);
  return parts;
}

export function computeStatus(input: StatusInput, previous: PolicyStatus | undefined): PolicyStatus {
  const conditions = drafts(input).map((d): PolicyCondition => {
    const old = previous?.conditions.find((c) => c.type === d.type);
    const lastTransitionTime = old !== undefined && old.status === d.status ? old.lastTransitionTime : input.now;
    return { ...d, observedGeneration: input.generation, lastTransitionTime };
  });
  return {
    observedGeneration: input.generation,
    pods: input.pods,
    ready: input.ready,
    failing: input.failing,
    ungated: input.ungated,
    diverged: input.diverged ?? 0,
    noVantage: input.noVantage ?? 0,
    remediations: input.remediations,
    message: summary(input),
    conditions,
  };
}

/** Whether two statuses are the same for writing purposes. */
export function sameStatus(a: PolicyStatus | undefined, b: PolicyStatus): boolean {
  return a !== undefined && JSON.stringify(a) === JSON.stringify(b);
}
