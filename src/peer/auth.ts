import type { AdmissionLane, AdmissionResult, AuthDecision, ReviewLane } from '../observability/index.ts';
import { TokenGate } from '../observability/index.ts';
import type { Clock } from '../kernel/index.ts';
import type { PeerIdentity } from './identity.ts';

/** A peer token's review: the identity, or why it is none. */
export type PeerReview = PeerIdentity | { readonly refused: string };

export interface PeerAuthOptions {
  readonly clock: Pick<Clock, 'now'>;
  /** TokenReview with the peer audience (each lane its own API budget), then `peerIdentity`. */
  readonly review: (token: string, lane: ReviewLane) => Promise<PeerReview>;
  /** Is this the fleet's ServiceAccount username? False while this replica does not know its own fleet (everyone is refused). */
  readonly isFleetUser: (username: string) => boolean;
  /** Is this pod (name and UID) a proven member now? */
  readonly isMember: (podName: string, podUid: string) => boolean;
  /** Is this address a proven member's pod IP? Its unknown tokens are reviewed in the member lane. */
  readonly isMemberAddress: (ip: string) => boolean;
  /** How long a fleet token's identity is reused (membership is checked on every request all the same). @default 300000 */
  readonly ttlMs?: number;
  readonly onError?: (err: unknown) => void;
  readonly onAdmission?: (lane: AdmissionLane, result: AdmissionResult) => void;
}

/** `::ffff:10.0.0.1` → `10.0.0.1`. */
export function plainAddress(ip: string | undefined): string {
  return (ip ?? '').replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');
}

/**
 * Who may speak for the fleet on the peer port (ADR 0037): a projected
 * ServiceAccount token of the peer audience, of the fleet's ServiceAccount,
 * bound to a pod that is a proven member now. Identities are cached per
 * token hash through a TokenGate (a known peer is answered before any cap;
 * unknown tokens from members' addresses and from strangers are reviewed in
 * pools of their own); membership is checked on every request.
 */
export class PeerAuth {
  readonly #o: PeerAuthOptions;
  readonly #gate: TokenGate<PeerReview>;

  constructor(options: PeerAuthOptions) {
    this.#o = options;
    this.#gate = new TokenGate<PeerReview>({
      clock: options.clock,
      review: options.review,
      known: (r) => !('refused' in r) && options.isFleetUser(r.username),
      ttlMs: options.ttlMs ?? 300_000,
      negativeTtlMs: 60_000,
    });
  }

  async authorize(authorization: string | undefined, remoteAddress: string | undefined): Promise<AuthDecision> {
    const out = await this.#gate.admit(authorization, this.#o.isMemberAddress(plainAddress(remoteAddress)));
    switch (out.kind) {
      case 'no-token':
        this.#o.onAdmission?.('stranger', 'unauthenticated');
        return { status: 401, message: 'Unauthorized' };
      case 'shed':
        this.#o.onAdmission?.(out.lane, 'shed');
        return { status: 429, message: 'Too many token reviews in flight' };
      case 'error':
        this.#o.onError?.(out.error);
        this.#o.onAdmission?.(out.lane, 'error');
        return { status: 500, message: 'Token review failed' };
      case 'answer': {
        const r = out.answer;
        if ('refused' in r) {
          this.#o.onAdmission?.(out.lane, 'unauthenticated');
          return { status: 401, message: 'Unauthorized' };
        }
        if (!this.#o.isFleetUser(r.username) || !this.#o.isMember(r.podName, r.podUid)) {
          this.#o.onAdmission?.(out.lane, 'forbidden');
          return { status: 403, message: 'Forbidden: not a member of this fleet' };
        }
        this.#o.onAdmission?.(out.lane, 'served');
        return { status: 200, message: '' };
      }
    }
  }
}
