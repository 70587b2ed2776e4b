import type { z } from 'zod';

/**
 * Stable codes for everything that can be wrong with a ProbePolicy. Callers
 * branch on the code; the message is for people and follows the API server's
 * wording where the CRD checks the same thing.
 */
export const policyIssueCodes = [
  /** A required field is missing. */
  'required',
  /** Wrong JSON type (string where an integer belongs, ...). */
  'invalid_type',
  /** Not one of an enum's values. */
  'invalid_value',
  /** A number below its minimum or above its maximum. */
  'out_of_range',
  /** A string or list longer than allowed. */
  'too_long',
  'host_not_allowed',
  'handler_count',
  /** `fromContainer` and a handler in one probe block. */
  'from_container_with_handler',
  'success_threshold_must_be_1',
  'grace_period_not_allowed',
  'port_invalid',
  'condition_type_invalid',
  'condition_type_reserved',
  'container_invalid',
  'header_name_invalid',
  'header_value_invalid',
  'exec_command_empty',
  /** Schema-valid, but this controller runs without exec: it cannot honour the policy. */
  'exec_disabled',
  /** Exec is enabled, but not for this policy's namespace (--exec-namespaces). */
  'exec_namespace_not_allowed',
  'max_unavailable_invalid',
  'no_probes',
  'selector_invalid',
  /** Anything else the schema rejects. */
  'invalid',
] as const;
export type PolicyIssueCode = (typeof policyIssueCodes)[number];

export interface PolicyIssue {
  readonly code: PolicyIssueCode;
  /** From the object root, e.g. `['spec', 'liveness', 'probe', 'successThreshold']`. */
  readonly path: readonly (string | number)[];
  readonly message: string;
}

/** `spec.liveness.probe.successThreshold: successThreshold must be 1 ...`, as the API server prints it. */
export function formatIssue(issue: PolicyIssue): string {
  const path = issue.path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
  return path === '' ? issue.message : `${path}: ${issue.message}`;
}

/** The params a custom zod issue carries so that it maps to a code. */
export interface CodedParams {
  readonly code: PolicyIssueCode;
}

export function coded(code: PolicyIssueCode): { readonly params: CodedParams } {
  return { params: { code } };
}

function isCode(value: unknown): value is PolicyIssueCode {
  return typeof value === 'string' && (policyIssueCodes as readonly string[]).includes(value);
}

/** The JSON type name the API server would print for a value. */
function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** Every number in a ProbePolicy is an integer, and zod says `number` for a z.int() given a string. */
function expectedName(expected: string): string {
  return expected === 'int' || expected === 'number' ? 'integer' : expected;
}

type ZodIssue = z.core.$ZodIssue;

function sizeIssue(issue: ZodIssue & { code: 'too_small' | 'too_big' }): Omit<PolicyIssue, 'path'> {
  if (issue.code === 'too_small') {
    const min = String(issue.minimum);
    return issue.origin === 'array'
      ? { code: 'required', message: `should have at least ${min} items` }
      : { code: 'out_of_range', message: `should be greater than or equal to ${min}` };
  }
  const max = String(issue.maximum);
  if (issue.origin === 'array') return { code: 'too_long', message: `must have at most ${max} items` };
  if (issue.origin === 'string') return { code: 'too_long', message: `may not be more than ${max} bytes` };
  return { code: 'out_of_range', message: `should be less than or equal to ${max}` };
}

function describe(issue: ZodIssue): Omit<PolicyIssue, 'path'> {
  switch (issue.code) {
    case 'custom': {
      const code: unknown = issue.params?.['code'];
      return { code: isCode(code) ? code : 'invalid', message: issue.message };
    }
    case 'invalid_type':
      return issue.input === undefined
        ? { code: 'required', message: 'Required value' }
        : { code: 'invalid_type', message: `must be of type ${expectedName(issue.expected)}: "${jsonType(issue.input)}"` };
    case 'invalid_value': {
      const supported = issue.values.map((v) => JSON.stringify(v)).join(', ');
      return { code: 'invalid_value', message: `Unsupported value: ${JSON.stringify(issue.input)}: supported values: ${supported}` };
    }
    case 'too_small':
    case 'too_big':
      return sizeIssue(issue);
    default:
      return { code: 'invalid', message: issue.message };
  }
}

/** A zod issue as a PolicyIssue, its path prefixed with where the parsed value sits. */
export function fromZodIssue(issue: ZodIssue, prefix: readonly (string | number)[] = []): PolicyIssue {
  const path = [...prefix, ...issue.path.filter((p): p is string | number => typeof p !== 'symbol')];
  return { ...describe(issue), path };
}
