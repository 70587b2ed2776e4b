import { validatePolicy } from '../../../src/policy/index.ts';
import type { ProbePolicy } from '../../../src/policy/index.ts';

export { reviewPodCreate } from '../../../src/injection/index.ts';

/** A validated, defaulted policy from a spec as a user writes it. */
export function validatePolicyForTest(name: string, namespace: string, spec: Record<string, unknown>): ProbePolicy {
  const r = validatePolicy({ apiVersion: 'outprobe.io/v1alpha1', kind: 'ProbePolicy', metadata: { name, namespace, uid: `uid-${name}` }, spec }, { execEnabled: false, execNamespaces: [] });
  if (!r.ok) throw new Error(`invalid test policy: ${JSON.stringify(r.issues)}`);
  return r.policy;
}
