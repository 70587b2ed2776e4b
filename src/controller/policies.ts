import type { RawObject } from '../kube/index.ts';
import { capProbeTimeouts, defaultMaxProbeTimeoutSeconds, formatIssue, validatePolicy } from '../policy/index.ts';
import type { CappedTimeout, PolicyIssue, ProbePolicy, ValidateOptions } from '../policy/index.ts';
import type { PolicyCondition, PolicyStatus } from '../status/index.ts';
import { limitNotes, noRemediationLimits } from '../writeback/index.ts';
import type { RemediationLimits } from '../writeback/index.ts';

/** What the controller keeps per ProbePolicy object. */
export interface PolicyEntry {
  readonly key: string;
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly generation: number;
  /** metadata.creationTimestamp (RFC 3339, so it sorts as text); '' when unknown. The older of two policies claiming one gate keeps it. */
  readonly created?: string;
  /** The validated, defaulted policy; `undefined` when invalid. */
  readonly policy: ProbePolicy | undefined;
  readonly issues: readonly PolicyIssue[];
  /** Probes whose timeoutSeconds was lowered to the controller's maximum (reported on the policy). */
  readonly cappedTimeouts?: readonly CappedTimeout[];
  /** The status stored on the object (normalised), to write only changes. */
  readonly stored: PolicyStatus | undefined;
  /** What the installer's remediation limits override in this policy, in words (status and Events). @default [] */
  readonly limited?: readonly string[];
}

interface RawPolicy extends RawObject {
  readonly metadata?: RawObject['metadata'] & { readonly generation?: number; readonly creationTimestamp?: unknown };
  readonly status?: Partial<Record<keyof PolicyStatus, unknown>>;
}

/** The stored status in the same shape and key order computeStatus produces. */
export function parseStoredStatus(raw: RawPolicy['status']): PolicyStatus | undefined {
  if (raw === undefined || typeof raw.observedGeneration !== 'number') return undefined;
  const num = (v: unknown): number => (typeof v === 'number' ? v : 0);
  const conditions = (Array.isArray(raw.conditions) ? (raw.conditions as Partial<PolicyCondition>[]) : []).map((c): PolicyCondition => ({
    type: c.type ?? 'Ready',
    status: c.status ?? 'False',
    observedGeneration: c.observedGeneration ?? 0,
    lastTransitionTime: c.lastTransitionTime ?? '',
    reason: c.reason ?? '',
    message: c.message ?? '',
  }));
  return {
    observedGeneration: raw.observedGeneration,
    pods: num(raw.pods),
    ready: num(raw.ready),
    failing: num(raw.failing),
    ungated: num(raw.ungated),
    // Absent from a status an older controller wrote: left out, so the first status this one computes differs and is written.
    ...(typeof raw.diverged === 'number' ? { diverged: raw.diverged } : {}),
    ...(typeof raw.noVantage === 'number' ? { noVantage: raw.noVantage } : {}),
    remediations: num(raw.remediations),
    message: typeof raw.message === 'string' ? raw.message : '',
    conditions,
  };
}

/** `maxTimeoutSeconds`: the controller's `--max-probe-timeout`; longer probe timeouts are lowered to it. */
export function policyEntry(obj: RawObject, exec: ValidateOptions, limits: RemediationLimits = noRemediationLimits, maxTimeoutSeconds = defaultMaxProbeTimeoutSeconds): PolicyEntry {
  const raw = obj as RawPolicy;
  const result = validatePolicy(obj, exec);
  const capped = result.ok ? capProbeTimeouts(result.policy, maxTimeoutSeconds) : undefined;
  return {
    ...identity(raw),
    policy: capped?.policy,
    issues: result.ok ? [] : result.issues,
    cappedTimeouts: capped?.capped ?? [],
    stored: parseStoredStatus(raw.status),
    limited: result.ok ? limitedBy(result.policy, limits) : [],
  };
}

function identity(raw: RawPolicy): Pick<PolicyEntry, 'key' | 'namespace' | 'name' | 'uid' | 'created' | 'generation'> {
  const namespace = raw.metadata?.namespace ?? '';
  const name = raw.metadata?.name ?? '';
  return {
    key: `${namespace}/${name}`,
    namespace,
    name,
    uid: raw.metadata?.uid ?? '',
    created: typeof raw.metadata?.creationTimestamp === 'string' ? raw.metadata.creationTimestamp : '',
    generation: raw.metadata?.generation ?? 0,
  };
}

function limitedBy(policy: ProbePolicy, limits: RemediationLimits): string[] {
  const { spec } = policy;
  const remediates = spec.mode === 'Enforce' && (spec.liveness !== null || spec.startup !== null);
  return limitNotes({ action: spec.liveness?.action ?? 'Evict', budget: spec.remediation, remediates }, limits);
}

export function invalidMessage(entry: PolicyEntry): string | null {
  return entry.policy !== undefined ? null : entry.issues.map(formatIssue).join('; ').slice(0, 1000) || 'invalid';
}

/**
 * An update that changed nothing a plan reads (issue 18): the same object
 * (uid) at the same generation. The API server bumps a custom resource's
 * generation on every spec change and never on a status or metadata-only
 * one, and a plan reads only the spec, the name and the (immutable)
 * creation time, so outprobe's own status writes replan nothing. An object
 * without a generation (not from an API server) is always replanned.
 */
export function statusOnly(before: PolicyEntry | undefined, entry: PolicyEntry): boolean {
  return before !== undefined && before.uid === entry.uid && entry.generation > 0 && before.generation === entry.generation;
}
