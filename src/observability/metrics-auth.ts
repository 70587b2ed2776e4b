import type { Clock } from '../kernel/index.ts';
import type { AdmissionLane, AdmissionResult } from './peer-metrics.ts';
import { TokenGate } from './token-gate.ts';
import type { ReviewLane } from './token-gate.ts';

export { bearerToken } from './token-gate.ts';

/** The answer of a token review: who may read `/metrics`. */
export type MetricsAccess = 'allowed' | 'unauthenticated' | 'forbidden';

/** Reviews one bearer token (in main: a TokenReview, then a SubjectAccessReview for `get /metrics`), in the lane's own API budget. */
export type MetricsAccessReview = (token: string, lane: ReviewLane) => Promise<MetricsAccess>;

/** What the server answers: 200 lets the request through. */
export interface AuthDecision {
  readonly status: 200 | 401 | 403 | 429 | 500;
  readonly message: string;
}

export interface MetricsAuthOptions {
  readonly review: MetricsAccessReview;
  readonly clock: Pick<Clock, 'now'>;
  /** How long an answer (allowed or not) is reused for the same token. @default 60000 */
  readonly ttlMs?: number;
  /** Allowed tokens remembered at once, and as many refused ones, each in a map of its own; the oldest dropped first. @default 1024 */
  readonly maxEntries?: number;
  /**
   * Unknown tokens under review at once; more answer 429 without asking the
   * API server, so a flood of made-up tokens costs it a bounded number of
   * reviews. A token already allowed is answered from the cache before this
   * bound (ADR 0037). @default 4
   */
  readonly maxInFlight?: number;
  /** Reviews of unknown tokens started per second (a bucket of twice that); more answer 429. @default 5 */
  readonly reviewsPerSecond?: number;
  /** A review that failed (API server unreachable, RBAC missing). Never given the token. */
  readonly onError?: (err: unknown) => void;
  /** Every decision, by lane and result (the metrics). */
  readonly onAdmission?: (lane: AdmissionLane, result: AdmissionResult) => void;
}

const decisions: Readonly<Record<MetricsAccess, AuthDecision>> = {
  allowed: { status: 200, message: '' },
  unauthenticated: { status: 401, message: 'Unauthorized' },
  forbidden: { status: 403, message: 'Forbidden' },
};

const results: Readonly<Record<MetricsAccess, AdmissionResult>> = { allowed: 'served', unauthenticated: 'unauthenticated', forbidden: 'forbidden' };

/**
 * Bearer-token authentication and authorization for `/metrics`, as
 * kube-rbac-proxy does it, in process, through a TokenGate (ADR 0037): a
 * scraper whose token was allowed is answered from the cache before any
 * bound, so a flood of made-up tokens can never lock it out; unknown tokens
 * are reviewed a few at a time and shed (429) beyond. A failed review is not
 * cached and answers 500.
 */
export class MetricsAuth {
  readonly #o: MetricsAuthOptions;
  readonly #gate: TokenGate<MetricsAccess>;

  constructor(options: MetricsAuthOptions) {
    this.#o = options;
    this.#gate = new TokenGate<MetricsAccess>({
      clock: options.clock,
      review: options.review,
      known: (a) => a === 'allowed',
      ttlMs: options.ttlMs ?? 60_000,
      negativeTtlMs: options.ttlMs ?? 60_000,
      maxKnown: options.maxEntries ?? 1024,
      maxUnknown: options.maxEntries ?? 1024,
      strangerInFlight: options.maxInFlight ?? 4,
      strangerRate: options.reviewsPerSecond ?? 5,
    });
  }

  /** Decides on the request's `Authorization` header. */
  async authorize(authorization: string | undefined): Promise<AuthDecision> {
    const out = await this.#gate.admit(authorization);
    switch (out.kind) {
      case 'no-token':
        this.#o.onAdmission?.('stranger', 'unauthenticated');
        return decisions.unauthenticated;
      case 'shed':
        this.#o.onAdmission?.(out.lane, 'shed');
        return { status: 429, message: 'Too many token reviews in flight' };
      case 'error':
        this.#o.onError?.(out.error);
        this.#o.onAdmission?.(out.lane, 'error');
        return { status: 500, message: 'Token review failed' };
      case 'answer':
        this.#o.onAdmission?.(out.lane, results[out.answer]);
        return decisions[out.answer];
    }
  }

  /** Answers currently remembered (for tests and metrics). */
  get size(): number {
    return this.#gate.size;
  }
}
