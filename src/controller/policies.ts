import type { RawObject } from '../kube/index.ts';
import { capProbeTimeouts, defaultMaxProbeTimeoutSeconds, formatIssue, validatePolicy } from '../policy/index.ts';
import type { CappedTimeout, PolicyIssue, ProbePolicy } from '../policy/index.ts';
import type { PolicyCondition, PolicyStatus } from '../status/index.ts';

/** What the controller keeps per ProbePolicy object. */
export interface PolicyEntry {
  readonly key: string;
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly generation: number;
  /** The validated, defaulted policy; `undefined` when invalid. */
  readonly policy: ProbePolicy | undefined;
  readonly issues: readonly PolicyIssue[];
  /** Probes whose timeoutSeconds was lowered to the controller's maximum (reported on the policy). */
  readonly cappedTimeouts?: readonly CappedTimeout[];
  /** The status stored on the object (normalised), to write only changes. */
  readonly stored: PolicyStatus | undefined;
}

interface RawPolicy extends RawObject {
  readonly metadata?: RawObject['metadata'] & { readonly generation?: number };
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
    remediations: num(raw.remediations),
    message: typeof raw.message === 'string' ? raw.message : '',
    conditions,
  };
}

/** `maxTimeoutSeconds`: the controller's `--max-probe-timeout`; longer probe timeouts are lowered to it. */
export function policyEntry(obj: RawObject, execEnabled: boolean, maxTimeoutSeconds = defaultMaxProbeTimeoutSeconds): PolicyEntry {
  const raw = obj as RawPolicy;
  const namespace = raw.metadata?.namespace ?? '';
  const name = raw.metadata?.name ?? '';
  const result = validatePolicy(obj, { execEnabled });
  const capped = result.ok ? capProbeTimeouts(result.policy, maxTimeoutSeconds) : undefined;
  return {
    key: `${namespace}/${name}`,
    namespace,
    name,
    uid: raw.metadata?.uid ?? '',
    generation: raw.metadata?.generation ?? 0,
    policy: capped?.policy,
    issues: result.ok ? [] : result.issues,
    cappedTimeouts: capped?.capped ?? [],
    stored: parseStoredStatus(raw.status),
  };
}

export function invalidMessage(entry: PolicyEntry): string | null {
  return entry.policy !== undefined ? null : entry.issues.map(formatIssue).join('; ').slice(0, 1000) || 'invalid';
}
