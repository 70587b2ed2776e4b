import { Counter, Gauge } from 'prom-client';
import type { Registry } from 'prom-client';

/** Which endpoint a request on a guarded listener was for. */
export type GuardedEndpoint = 'second_opinion' | 'metrics';
/**
 * Which pool a request was admitted through (ADR 0037): `known` (its token's
 * decision was cached), `member` (an unknown token from a proven member's
 * pod address), `stranger` (anyone else: shed first).
 */
export type AdmissionLane = 'known' | 'member' | 'stranger';
export type AdmissionResult = 'served' | 'shed' | 'unauthenticated' | 'forbidden' | 'error';
/** Why a second opinion got no usable answer (the asking side). */
export type SecondOpinionErrorReason = 'overloaded' | 'refused' | 'unreachable' | 'peer_error' | 'protocol' | 'no_token' | 'unknown_answer' | 'not_served';

const prefix = 'outprobe_';

/**
 * The fleet's trust metrics (ADR 0036, ADR 0037): rejected shard Leases,
 * this replica's own proof, what the guarded listeners admitted and shed,
 * and why second opinions failed. Registered in the replica's registry.
 */
export class PeerMetrics {
  readonly #rejectedTotal: Counter<'reason'>;
  readonly #rejected: Gauge<'reason'>;
  readonly #selfProven: Gauge;
  readonly #admissions: Counter<'endpoint' | 'lane' | 'result'>;
  readonly #soErrors: Counter<'reason'>;
  readonly #soFallbacks: Counter<'action'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.#rejectedTotal = new Counter({ name: `${prefix}shard_leases_rejected_total`, help: 'Live shard Leases found not to be members (ADR 0036: the holder is not a Running, Ready pod of this Deployment matching the Lease), counted once per Lease and reason.', labelNames: ['reason'], registers });
    this.#rejected = new Gauge({ name: `${prefix}shard_leases_rejected`, help: 'Live shard Leases rejected now, by reason: they own no pods, carry no counts or reports, and are never asked anything.', labelNames: ['reason'], registers });
    this.#selfProven = new Gauge({ name: `${prefix}shard_self_proven`, help: 'Whether this replica\'s own pod passes the membership proof (1); at 0 it writes no shard Lease and owns no pods.', registers });
    this.#admissions = new Counter({ name: `${prefix}guarded_requests_total`, help: 'Requests on the authenticated endpoints (second opinion on the peer port, /metrics), by endpoint, admission lane (known: cached token; member: a new token from a member\'s pod address; stranger: anyone else) and result (shed: refused for load, 429).', labelNames: ['endpoint', 'lane', 'result'], registers });
    this.#soErrors = new Counter({ name: `${prefix}second_opinion_errors_total`, help: 'Second opinions that got no usable answer, by reason (overloaded: the peer answered 429; refused: 401/403; unreachable: no connection or no answer in time; peer_error: 5xx; protocol: malformed; no_token: no peer token to present; unknown_answer; not_served: 404).', labelNames: ['reason'], registers });
    this.#soFallbacks = new Counter({ name: `${prefix}second_opinion_fallbacks_total`, help: 'Readiness False writes sent on this replica\'s own verdict because no second opinion could be had for longer than the bound (ADR 0037); remediation is never sent this way.', labelNames: ['action'], registers });
  }

  recordLeaseRejected(reason: string): void {
    this.#rejectedTotal.inc({ reason });
  }

  setLeasesRejected(byReason: ReadonlyMap<string, number>): void {
    for (const [reason, n] of byReason) this.#rejected.set({ reason }, n);
  }

  setSelfProven(proven: boolean): void {
    this.#selfProven.set(proven ? 1 : 0);
  }

  recordAdmission(endpoint: GuardedEndpoint, lane: AdmissionLane, result: AdmissionResult): void {
    this.#admissions.inc({ endpoint, lane, result });
  }

  recordSecondOpinionError(reason: SecondOpinionErrorReason): void {
    this.#soErrors.inc({ reason });
  }

  recordSecondOpinionFallback(action: 'gate_false'): void {
    this.#soFallbacks.inc({ action });
  }
}
