import { voided } from '../outcome.ts';
import type { Outcome, StallNote } from '../outcome.ts';
import type { StallGuard } from './monitor.ts';

/**
 * Runs one probe attempt inside a stall-guard window. A failure the guard
 * voids comes back as an errored outcome carrying the StallNote, so
 * `probeWithRetries` retries it at once and, if every attempt is void, the
 * results stage records it as void (ADR 0016). `onVoid` hears every voided
 * attempt, retried ones included.
 */
export async function guardedAttempt(
  attempt: () => Promise<Outcome>,
  guard: StallGuard,
  timeoutMs: number,
  onVoid: (note: StallNote) => void,
): Promise<Outcome> {
  const close = guard.open();
  const outcome = await attempt();
  const note = close(outcome, timeoutMs);
  if (note === null) return outcome;
  onVoid(note);
  return voided(note);
}
