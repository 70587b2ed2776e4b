import type { ProbeKind } from '../kernel/index.ts';
import type { Outcome } from '../probing/outcome.ts';

/**
 * The value a target commits, as in the kubelet's results cache
 * (kubelet-probes.md §2): `unknown` (-1), `success` (0), `failure` (1).
 */
export const probeResults = ['unknown', 'success', 'failure'] as const;
export type ProbeResult = (typeof probeResults)[number];

/** What a probe attempt counts as in a run; `unknown` never comes from a probe. */
export type CountedResult = Exclude<ProbeResult, 'unknown'>;

/**
 * The value written whenever a target sees a new container instance (§2):
 * readiness starts not ready, liveness starts alive, startup starts not started.
 */
const initialResults: Readonly<Record<ProbeKind, ProbeResult>> = {
  readiness: 'failure',
  liveness: 'success',
  startup: 'unknown',
};

export function initialResult(kind: ProbeKind): ProbeResult {
  return initialResults[kind];
}

/** Every outcome except `errored`, which is void and never counted (§4). */
export type CountedOutcome = Exclude<Outcome, { readonly kind: 'errored' }>;

/**
 * How a non-errored outcome counts (§4): warning is a success. The kubelet's
 * "Unknown without error → Failure" has no Outcome variant; executors report
 * such cases as `failure`.
 */
export function countedResult(outcome: CountedOutcome): CountedResult {
  return outcome.kind === 'failure' ? 'failure' : 'success';
}
