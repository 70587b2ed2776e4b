import type { Clock, ProbeKind } from '../kernel/index.ts';
import { ranked } from '../sharding/index.ts';
import { Ledger } from './ledger.ts';
import type { AskEnd } from './ledger.ts';
import type { SecondOpinionAnswer, SecondOpinionRequest } from './protocol.ts';

/** A live peer replica and where its health listener answers. */
export interface PeerAddress {
  readonly identity: string;
  readonly address: string;
}

/**
 * POSTs one request to a peer. Resolves with its answer, or 'not-served'
 * when the peer has no such endpoint (404: an older version during a
 * rollout). Rejects on anything else (refused, timed out, 401/403/429/5xx).
 */
export type AskPeer = (address: string, request: SecondOpinionRequest, signal: AbortSignal) => Promise<SecondOpinionAnswer | 'not-served'>;

/** One failure this replica is about to act on. */
export interface Question {
  readonly policy: string;
  readonly podUid: string;
  readonly probe: ProbeKind;
  /** When the failure was observed: only an agreement asked at or after it counts. */
  readonly since: number;
  /** The probe's period: after a disagreement the failure is asked about again no sooner. */
  readonly periodMs: number;
  /** The probe's timeout: the peer's attempt may take this long. */
  readonly timeoutMs: number;
  /** For the Event and the log. */
  readonly pod: { readonly namespace: string; readonly name: string; readonly uid: string };
  /** What this replica's probe said (its last failure output). */
  readonly ownView: string;
  /**
   * What waits for the answer: a readiness False may go out on this
   * replica's own verdict once no second opinion could be had for the bound
   * (ADR 0037); a remediation never does. @default 'remediation'
   */
  readonly action?: 'gate_false' | 'remediation';
}

/** Why an ask got no usable answer (a bounded set: a metric label). */
export type AskErrorReason = 'overloaded' | 'refused' | 'unreachable' | 'peer_error' | 'protocol' | 'no_token' | 'unknown_answer' | 'not_served';

/** An ask that failed, and why (thrown by an AskPeer). Its message never carries a token. */
export class AskError extends Error {
  readonly reason: AskErrorReason;
  constructor(reason: AskErrorReason, message: string) {
    super(message);
    this.reason = reason;
  }
}

/** What the guard reports (the observability seam). */
export type SecondOpinionEvent = AskEvent | FallbackEvent;

/**
 * A readiness False let through on this replica's own verdict: no second
 * opinion could be had for `unavailableForMs` (ADR 0037). Once per run of
 * errors per failure.
 */
export interface FallbackEvent {
  readonly result: 'fallback';
  readonly question: Question;
  readonly unavailableForMs: number;
}

export interface AskEvent {
  readonly result: AskEnd;
  readonly question: Question;
  readonly peer: string;
  /** From the start of the ask to its end. */
  readonly durationMs: number;
  readonly answer?: SecondOpinionAnswer;
  readonly error?: string;
  /** Set when `result` is `error`. */
  readonly errorReason?: AskErrorReason;
}

export interface SecondOpinionGuardOptions {
  readonly clock: Clock;
  readonly identity: string;
  /** Live peers that publish an address (this replica excluded or not: it is skipped). */
  readonly peers: () => readonly PeerAddress[];
  /**
   * The peers (identities) to ask about a pod, best first (vantage, ADR 0040:
   * the eligible ones only, never a replica on the pod's node).
   * @default rendezvous order over every peer
   */
  readonly order?: (ids: readonly string[], podUid: string) => string[];
  readonly ask: AskPeer;
  readonly observe?: (e: SecondOpinionEvent) => void;
  /** After each answer (held writes and remediations are swept again then). */
  readonly onSettled?: () => void;
  /** After an error or an unknown answer, ask again this much later (the next peer in the order). @default 1000 */
  readonly retryMs?: number;
  /** Added to the probe's timeout for the whole request. @default 2000 */
  readonly requestSlackMs?: number;
  /** Asks in flight at once; more wait for the next sweep. @default 64 */
  readonly maxInFlight?: number;
  /** A peer that answered 404 is not asked again for this long. @default 60000 */
  readonly notServedForMs?: number;
  /**
   * After this long with nothing but errors from the peers asked about one
   * failure, a readiness False proceeds on this replica's own verdict (the
   * peer write guard of ADR 0017 and the panic cap still apply); a
   * remediation stays held. Undefined: every failure waits for an answer
   * (ADR 0037). @default undefined
   */
  readonly unavailableAfterMs?: number;
}

/**
 * The second opinion (issue 13, deliver 3; ADR 0018): before this replica
 * acts on a failure (the first False of a gate, an eviction or delete), the
 * next live replica in the pod's rendezvous order probes the same target from
 * its own node. `confirm()` is asked by the same hold-and-sweep mechanism as
 * the peer write guard: it answers at once from what it knows and starts an
 * ask when one is due; the held write is asked again on the next sweep.
 * Agreement lets it proceed; disagreement, an error or an unknown answer
 * holds it (fail open). With no peer to ask (one replica) it never holds.
 */
export class SecondOpinionGuard {
  readonly #o: SecondOpinionGuardOptions;
  readonly #ledger = new Ledger();
  readonly #notServed = new Map<string, number>();
  /** Keys whose fallback was reported, by the start of the run of errors it ended. */
  readonly #fellBack = new Map<string, number>();
  #inFlight = 0;

  constructor(options: SecondOpinionGuardOptions) {
    this.#o = options;
  }

  /** May this replica act on the failure now? Starts an ask when one is due. */
  confirm(q: Question): boolean {
    const candidates = this.#candidates(q.podUid);
    if (candidates.length === 0) return true;
    const key = `${q.policy}/${q.podUid}/${q.probe}`;
    const now = this.#o.clock.now();
    const decision = this.#ledger.decide(key, q.since, now);
    if (decision === 'agreed') return true;
    if (decision === 'ask' && this.#inFlight < (this.#o.maxInFlight ?? 64)) {
      const peer = candidates[this.#ledger.errors(key) % candidates.length];
      if (peer !== undefined) this.#ask(key, q, peer);
    }
    return this.#fallBack(key, q, now);
  }

  /** A readiness False whose peers gave nothing but errors for the bound goes out on this replica's own verdict (ADR 0037). */
  #fallBack(key: string, q: Question, now: number): boolean {
    const bound = this.#o.unavailableAfterMs;
    const since = this.#ledger.errorsSince(key);
    if (bound === undefined || q.action !== 'gate_false' || since === undefined || now - since < bound) return false;
    if (this.#fellBack.get(key) !== since) {
      this.#fellBack.set(key, since);
      if (this.#fellBack.size > 4096) this.#fellBack.delete(this.#fellBack.keys().next().value ?? key);
      this.#o.observe?.({ result: 'fallback', question: q, unavailableForMs: now - since });
    }
    return true;
  }

  /** Asks in flight now. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Peers to ask about this pod, in its rendezvous order (itself, address-less and 404 peers skipped). */
  #candidates(podUid: string): PeerAddress[] {
    const now = this.#o.clock.now();
    const byId = new Map<string, PeerAddress>();
    for (const p of this.#o.peers()) {
      const until = this.#notServed.get(p.identity);
      if (p.identity === this.#o.identity || p.address === '' || (until !== undefined && until > now)) continue;
      byId.set(p.identity, p);
    }
    return (this.#o.order ?? ranked)([...byId.keys()], podUid).flatMap((id) => byId.get(id) ?? []);
  }

  #ask(key: string, q: Question, peer: PeerAddress): void {
    const { clock } = this.#o;
    const askedAt = clock.now();
    this.#ledger.started(key, askedAt);
    this.#inFlight++;
    const signal = AbortSignal.timeout(q.timeoutMs + (this.#o.requestSlackMs ?? 2000));
    const end = (result: AskEnd, extra: { answer?: SecondOpinionAnswer; error?: string; errorReason?: AskErrorReason }): void => {
      this.#inFlight--;
      const now = clock.now();
      this.#ledger.settled(key, { askedAt, now, result, againAfterMs: result === 'disagreed' ? q.periodMs : (this.#o.retryMs ?? 1000) });
      this.#o.observe?.({ result, question: q, peer: peer.identity, durationMs: now - askedAt, ...extra });
      this.#o.onSettled?.();
    };
    void this.#o.ask(peer.address, { policy: q.policy, podUid: q.podUid, probe: q.probe }, signal).then(
      (answer) => {
        if (answer === 'not-served') {
          this.#notServed.set(peer.identity, clock.now() + (this.#o.notServedForMs ?? 60_000));
          end('error', { error: `${peer.identity} serves no second opinions (404)`, errorReason: 'not_served' });
          return;
        }
        if (answer.result === 'failure') end('agreed', { answer });
        else if (answer.result === 'success') end('disagreed', { answer });
        else end('error', { answer, error: `${peer.identity} could not probe: ${answer.message}`, errorReason: 'unknown_answer' });
      },
      (err: unknown) => end('error', { error: err instanceof Error ? err.message : String(err), errorReason: err instanceof AskError ? err.reason : 'unreachable' }),
    );
  }
}
