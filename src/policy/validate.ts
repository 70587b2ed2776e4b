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
  const issues = options.execEnabled ? [] : execIssues(policy);
  return issues.length === 0 ? { ok: true, policy } : { ok: false, issues };
}

function execIssues(policy: ProbePolicy): PolicyIssue[] {
  return probeKinds.filter((kind) => probeOf(policy, kind)?.handler.type === 'exec').map((kind) => ({
    code: 'exec_disabled' as const,
    path: ['spec', kind, 'probe', 'exec'],
    message: messages.execDisabled,
  }));
}

/** The probe of one kind, or `null` when the policy has no such block. */
export function probeOf(policy: ProbePolicy, kind: ProbeKind): ProbeSpec | null {
  return policy.spec[kind]?.probe ?? null;
}
