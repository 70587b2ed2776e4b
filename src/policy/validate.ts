import { probeKinds } from '../kernel/index.ts';
import type { ProbeKind } from '../kernel/index.ts';
import { fromZodIssue } from './issues.ts';
import type { PolicyIssue } from './issues.ts';
import { toProbePolicy } from './normalize.ts';
import { messages } from './rules.ts';
import { policySchema } from './schema.ts';
import type { PolicyProbe, ProbePolicy } from './types.ts';
import { isContainerProbeRef } from './from-container.ts';

export interface ValidateOptions {
  /**
   * The controller runs with exec probes enabled (it holds `pods/exec`).
   * Without it, a policy with an exec probe is valid to the API server but
   * cannot be honoured, and is reported with code `exec_disabled`.
   */
  readonly execEnabled: boolean;
  /**
   * Namespaces whose policies may use exec probes (the installer's
   * `--exec-namespaces`); elsewhere an exec probe is reported with code
   * `exec_namespace_not_allowed`. `'*'` means every namespace.
   * @default '*' (the controller always passes its own list)
   */
  readonly execNamespaces?: '*' | readonly string[];
}

export type ValidationResult =
  | { readonly ok: true; readonly policy: ProbePolicy }
  | { readonly ok: false; readonly issues: readonly PolicyIssue[] };

/**
 * Validates and defaults a ProbePolicy object (as read from the API or
 * written in a manifest). Returns every issue found rather than the first;
 * the only checks that can hide others are wrong JSON types and unknown enum
 * values, which stop the rules of the enclosing objects, as in the API server.
 * Never throws for bad input.
 */
export function validatePolicy(obj: unknown, options: ValidateOptions): ValidationResult {
  const parsed = policySchema.safeParse(obj, { reportInput: true });
  if (!parsed.success) return { ok: false, issues: parsed.error.issues.map((issue) => fromZodIssue(issue)) };
  const exec = execRefusal(parsed.data.metadata.namespace ?? '', options);
  const policy = withContainerExec(toProbePolicy(parsed.data), exec);
  const issues = exec === null ? [] : execIssues(policy, exec);
  return issues.length === 0 ? { ok: true, policy } : { ok: false, issues };
}

type ExecRefusal = { readonly code: 'exec_disabled' | 'exec_namespace_not_allowed'; readonly message: string };

/** Why exec probes cannot run for a policy of this namespace, or `null` when they can. */
function execRefusal(namespace: string, options: ValidateOptions): ExecRefusal | null {
  const namespaces = options.execNamespaces ?? '*';
  if (options.execEnabled && (namespaces === '*' || namespaces.includes(namespace))) return null;
  return !options.execEnabled || namespaces === '*'
    ? { code: 'exec_disabled', message: messages.execDisabled }
    : { code: 'exec_namespace_not_allowed', message: messages.execNamespace(namespace, namespaces) };
}

function execIssues(policy: ProbePolicy, issue: ExecRefusal): PolicyIssue[] {
  return probeKinds.filter((kind) => {
    const probe = probeOf(policy, kind);
    return probe !== null && !isContainerProbeRef(probe) && probe.handler.type === 'exec';
  }).map((kind) => ({ ...issue, path: ['spec', kind, 'probe', 'exec'] }));
}

/**
 * A `fromContainer` probe learns here whether an exec probe a container
 * declares may run: exactly where a policy's own exec probe would be honoured
 * (ADR 0023). Elsewhere the policy stays valid and such a container's target
 * is reported instead of run, since other pods may declare HTTP probes.
 */
function withContainerExec(policy: ProbePolicy, refusal: ExecRefusal | null): ProbePolicy {
  const exec = refusal === null ? ({ allowed: true } as const) : ({ allowed: false, message: refusal.message } as const);
  const mark = <B extends { readonly probe: PolicyProbe }>(block: B | null): B | null =>
    block === null || !isContainerProbeRef(block.probe) ? block : { ...block, probe: { ...block.probe, exec } };
  const { readiness, liveness, startup } = policy.spec;
  return { ...policy, spec: { ...policy.spec, readiness: mark(readiness), liveness: mark(liveness), startup: mark(startup) } };
}

/** The probe of one kind, or `null` when the policy has no such block. */
export function probeOf(policy: ProbePolicy, kind: ProbeKind): PolicyProbe | null {
  return policy.spec[kind]?.probe ?? null;
}
