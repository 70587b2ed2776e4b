import { probeKinds } from '../kernel/index.ts';
import type { ProbeKind } from '../kernel/index.ts';
import { fromZodIssue } from './issues.ts';
import type { PolicyIssue } from './issues.ts';
import { toProbePolicy } from './normalize.ts';
import { messages } from './rules.ts';
import { policySchema } from './schema.ts';
import type { ProbePolicy, ProbeSpec } from './types.ts';

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
  const policy = toProbePolicy(parsed.data);
  const issues = execIssues(policy, options);
  return issues.length === 0 ? { ok: true, policy } : { ok: false, issues };
}

function execIssues(policy: ProbePolicy, options: ValidateOptions): PolicyIssue[] {
  const namespaces = options.execNamespaces ?? '*';
  const namespace = policy.metadata.namespace ?? '';
  if (options.execEnabled && (namespaces === '*' || namespaces.includes(namespace))) return [];
  const issue = !options.execEnabled || namespaces === '*'
    ? { code: 'exec_disabled' as const, message: messages.execDisabled }
    : { code: 'exec_namespace_not_allowed' as const, message: messages.execNamespace(namespace, namespaces) };
  return probeKinds.filter((kind) => probeOf(policy, kind)?.handler.type === 'exec').map((kind) => ({ ...issue, path: ['spec', kind, 'probe', 'exec'] }));
}

/** The probe of one kind, or `null` when the policy has no such block. */
export function probeOf(policy: ProbePolicy, kind: ProbeKind): ProbeSpec | null {
  return policy.spec[kind]?.probe ?? null;
}
