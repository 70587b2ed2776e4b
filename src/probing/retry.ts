import type { Outcome } from './outcome.ts';

/** The kubelet retries an errored probe at once, up to this many attempts (maxProbeRetries). */
export const maxProbeAttempts = 3;

/**
 * Runs a probe, retrying at once while it errors (kubelet-probes.md §4).
 * Success, warning and failure end the loop; if every attempt errors, the
 * last errored outcome is returned and the caller discards it.
 */
export async function probeWithRetries(attempt: () => Promise<Outcome>, signal?: AbortSignal): Promise<Outcome> {
  let outcome = await attempt();
  for (let i = 1; i < maxProbeAttempts && outcome.kind === 'errored' && signal?.aborted !== true; i++) {
    outcome = await attempt();
  }
  return outcome;
}
