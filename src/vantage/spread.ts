import type { Pod } from '../kube/index.ts';
import type { ProbePolicy } from '../policy/index.ts';
import { selects } from '../targets/index.ts';
import { defaultSpread, strictest } from './eligible.ts';
import type { Spread } from './eligible.ts';

const spreadOf = (p: ProbePolicy): Spread => p.spec.vantage?.spread ?? defaultSpread;

/**
 * A pod's spread: the strictest of the valid policies that select it
 * (`node` when none does). When every valid policy has the same spread (the
 * common case) that is the answer without matching selectors.
 */
export function podSpread(policies: Iterable<{ readonly policy: ProbePolicy | undefined }>, pod: Pod): Spread {
  const valid: ProbePolicy[] = [];
  for (const e of policies) if (e.policy !== undefined) valid.push(e.policy);
  const first = valid[0];
  if (first === undefined) return defaultSpread;
  if (valid.every((p) => spreadOf(p) === spreadOf(first))) return spreadOf(first);
  return strictest(valid.filter((p) => selects(p, pod)).map(spreadOf));
}
