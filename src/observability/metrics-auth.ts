import { createHash } from 'node:crypto';
import type { Clock } from '../kernel/index.ts';

/** The answer of a token review: who may read `/metrics`. */
export type MetricsAccess = 'allowed' | 'unauthenticated' | 'forbidden';

/** Reviews one bearer token (in main: a TokenReview, then a SubjectAccessReview for `get /metrics`). */
export type MetricsAccessReview = (token: string) => Promise<MetricsAccess>;

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
  /** Tokens remembered at once; the oldest answer is dropped first. @default 1024 */
  readonly maxEntries?: number;
  /**
   * Different tokens under review at once; more answer 429 without asking
   * the API server, so a flood of made-up tokens costs it a bounded number
   * of reviews. @default 16
   */
  readonly maxInFlight?: number;
  /** A review that failed (API server unreachable, RBAC missing). Never given the token. */
  readonly onError?: (err: unknown) => void;
}

interface Entry {
  readonly access: MetricsAccess;
  readonly expiresAt: number;
}

const decisions: Readonly<Record<MetricsAccess, AuthDecision>> = {
  allowed: { status: 200, message: '' },
  unauthenticated: { status: 401, message: 'Unauthorized' },
  forbidden: { status: 403, message: 'Forbidden' },
};

/**
 * Bearer-token authentication and authorization for `/metrics`, as
 * kube-rbac-proxy does it, in process. Answers are cached per token for
 * `ttlMs` in a bounded map keyed by the token's SHA-256, so the token
 * itself is never kept, logged or compared; concurrent requests with one
 * token share one review. A failed review is not cached and answers 500.
 */
export class MetricsAuth {
  readonly #o: MetricsAuthOptions;
  readonly #cache = new Map<string, Entry>();
  readonly #inFlight = new Map<string, Promise<MetricsAccess>>();

  constructor(options: MetricsAuthOptions) {
    this.#o = options;
  }

  /** Decides on the request's `Authorization` header. */
  async authorize(authorization: string | undefined): Promise<AuthDecision> {
    const token = bearerToken(authorization);
    if (token === undefined) return decisions.unauthenticated;
    const key = createHash('sha256').update(token).digest('hex');
    const cached = this.#cached(key);
    if (cached !== undefined) return decisions[cached];
    let pending = this.#inFlight.get(key);
    if (pending === undefined) {
      if (this.#inFlight.size >= (this.#o.maxInFlight ?? 16)) return { status: 429, message: 'Too many token reviews in flight' };
      pending = this.#o.review(token);
      this.#inFlight.set(key, pending);
      pending.then(
        (access) => this.#remember(key, access),
        () => undefined,
      ).finally(() => this.#inFlight.delete(key)).catch(() => undefined);
    }
    try {
      return decisions[await pending];
    } catch (err: unknown) {
      this.#o.onError?.(err);
      return { status: 500, message: 'Token review failed' };
    }
  }

  /** Answers currently remembered (for tests and metrics). */
  get size(): number {
    return this.#cache.size;
  }

  #cached(key: string): MetricsAccess | undefined {
    const entry = this.#cache.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt > this.#o.clock.now()) return entry.access;
    this.#cache.delete(key);
    return undefined;
  }

  #remember(key: string, access: MetricsAccess): void {
    this.#cache.delete(key);
    this.#cache.set(key, { access, expiresAt: this.#o.clock.now() + (this.#o.ttlMs ?? 60_000) });
    const max = Math.max(1, this.#o.maxEntries ?? 1024);
    for (const oldest of this.#cache.keys()) {
      if (this.#cache.size <= max) break;
      this.#cache.delete(oldest);
    }
  }
}

/** The token of `Authorization: Bearer <token>` (scheme case-insensitive), else undefined. */
export function bearerToken(authorization: string | undefined): string | undefined {
  const m = /^bearer[ \t]+([^\s]+)[ \t]*$/i.exec(authorization ?? '');
  return m?.[1];
}
