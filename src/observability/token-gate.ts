import { createHash } from 'node:crypto';
import type { Clock } from '../kernel/index.ts';
import type { AdmissionLane } from './peer-metrics.ts';

/** Where an unknown token is reviewed: from a proven member's pod address, or from anyone else. */
export type ReviewLane = 'member' | 'stranger';

export interface TokenGateOptions<T> {
  readonly clock: Pick<Clock, 'now'>;
  /** Reviews a token (a TokenReview, ...). Each lane is given its own API budget by the caller. Never given to anything else. */
  readonly review: (token: string, lane: ReviewLane) => Promise<T>;
  /**
   * Whether an answer makes its token *known*: kept in a cache of its own
   * that unknown tokens can never push out, and answered before any cap.
   * The others (unauthenticated, forbidden) are cached apart.
   */
  readonly known: (answer: T) => boolean;
  /** How long a known token's answer is reused. @default 60000 */
  readonly ttlMs?: number;
  /** How long any other answer is reused. @default 60000 */
  readonly negativeTtlMs?: number;
  /** Known tokens remembered at once (the oldest dropped first). @default 256 */
  readonly maxKnown?: number;
  /** Other answers remembered at once. @default 1024 */
  readonly maxUnknown?: number;
  /** Distinct tokens under review at once in the member lane. @default 8 */
  readonly memberInFlight?: number;
  /** Distinct tokens under review at once in the stranger lane; more are shed (429) at once. @default 4 */
  readonly strangerInFlight?: number;
  /** Stranger reviews started per second (a bucket of twice that); more are shed. @default 5 */
  readonly strangerRate?: number;
}

export type GateOutcome<T> =
  | { readonly kind: 'answer'; readonly answer: T; readonly lane: AdmissionLane }
  /** No `Authorization: Bearer` at all. */
  | { readonly kind: 'no-token' }
  /** Refused for load before any review (429), always a stranger or a crowded member lane. */
  | { readonly kind: 'shed'; readonly lane: AdmissionLane }
  /** The review itself failed (not cached). */
  | { readonly kind: 'error'; readonly lane: AdmissionLane; readonly error: unknown };

interface Entry<T> {
  readonly answer: T;
  readonly expiresAt: number;
}

/**
 * Bearer-token admission that no flood can starve (ADR 0037). Answers are
 * cached by the token's SHA-256 (the token itself is never kept). A request
 * whose token is known is answered from the cache before any cap. An unknown
 * token is reviewed in one of two pools: the member lane (the caller's
 * address is a proven replica's pod IP) or the stranger lane, small, rate
 * limited, and shed first (429 without asking anything). Concurrent requests
 * with one token share one review in whichever lane started it.
 */
export class TokenGate<T> {
  readonly #o: TokenGateOptions<T>;
  readonly #known = new Map<string, Entry<T>>();
  readonly #unknown = new Map<string, Entry<T>>();
  readonly #inFlight = new Map<string, { readonly lane: ReviewLane; readonly answer: Promise<T> }>();
  readonly #lanes: Record<ReviewLane, number> = { member: 0, stranger: 0 };
  #tokens: number;
  #tokensAt: number;

  constructor(options: TokenGateOptions<T>) {
    this.#o = options;
    this.#tokens = 2 * (options.strangerRate ?? 5);
    this.#tokensAt = options.clock.now();
  }

  /** Decides on an `Authorization` header; `fromMember`: the request came from a proven replica's address. */
  async admit(authorization: string | undefined, fromMember = false): Promise<GateOutcome<T>> {
    const token = bearerToken(authorization);
    if (token === undefined) return { kind: 'no-token' };
    const key = createHash('sha256').update(token).digest('hex');
    const cached = this.#cached(this.#known, key) ?? this.#cached(this.#unknown, key);
    if (cached !== undefined) return { kind: 'answer', answer: cached.answer, lane: 'known' };
    let pending = this.#inFlight.get(key);
    if (pending === undefined) {
      const lane: ReviewLane = fromMember ? 'member' : 'stranger';
      if (!this.#room(lane)) return { kind: 'shed', lane };
      pending = { lane, answer: this.#o.review(token, lane) };
      this.#inFlight.set(key, pending);
      this.#lanes[lane]++;
      const settle = (): void => {
        this.#lanes[lane]--;
        this.#inFlight.delete(key);
      };
      pending.answer.then((answer) => {
        settle();
        this.#remember(key, answer);
      }, settle);
    }
    try {
      return { kind: 'answer', answer: await pending.answer, lane: pending.lane };
    } catch (error: unknown) {
      return { kind: 'error', lane: pending.lane, error };
    }
  }

  /** Known tokens remembered now (for tests). */
  get knownSize(): number {
    return this.#known.size;
  }

  /** Answers remembered now, known or not. */
  get size(): number {
    return this.#known.size + this.#unknown.size;
  }

  #room(lane: ReviewLane): boolean {
    if (lane === 'member') return this.#lanes.member < (this.#o.memberInFlight ?? 8);
    if (this.#lanes.stranger >= (this.#o.strangerInFlight ?? 4)) return false;
    const rate = this.#o.strangerRate ?? 5;
    const now = this.#o.clock.now();
    this.#tokens = Math.min(2 * rate, this.#tokens + ((now - this.#tokensAt) / 1000) * rate);
    this.#tokensAt = now;
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }

  #cached(map: Map<string, Entry<T>>, key: string): Entry<T> | undefined {
    const entry = map.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt > this.#o.clock.now()) return entry;
    map.delete(key);
    return undefined;
  }

  #remember(key: string, answer: T): void {
    const known = this.#o.known(answer);
    const map = known ? this.#known : this.#unknown;
    const ttl = known ? (this.#o.ttlMs ?? 60_000) : (this.#o.negativeTtlMs ?? 60_000);
    map.delete(key);
    map.set(key, { answer, expiresAt: this.#o.clock.now() + ttl });
    const max = Math.max(1, known ? (this.#o.maxKnown ?? 256) : (this.#o.maxUnknown ?? 1024));
    for (const oldest of map.keys()) {
      if (map.size <= max) break;
      map.delete(oldest);
    }
  }
}

/** The token of `Authorization: Bearer <token>` (scheme case-insensitive), else undefined. */
export function bearerToken(authorization: string | undefined): string | undefined {
  const m = /^bearer[ \t]+([^\s]+)[ \t]*$/i.exec(authorization ?? '');
  return m?.[1];
}
