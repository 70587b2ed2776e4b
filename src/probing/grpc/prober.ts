/**
 * The kubelet's gRPC probe as a hand-rolled unary call over node:http2:
 * plaintext h2c with prior knowledge, one deadline of `timeoutSeconds` for
 * the blocking dial and the RPC, `grpc.health.v1.Health/Check`, and the
 * session closed after every probe. Each probe opens its own connection
 * and leaves no socket, session or timer behind, whatever the server does.
 */
import type http2 from 'node:http2';
import { setLongTimeout, systemRandom } from '../../kernel/index.ts';
import type { CancelTimer, Random } from '../../kernel/index.ts';
import { errored } from '../outcome.ts';
import type { Outcome } from '../outcome.ts';
import type { GrpcProbeRequest } from '../request.ts';
import { joinHostPort } from '../request.ts';
import { unaryCall } from './call.ts';
import type { RawResponse } from './call.ts';
import { encodeGrpcTimeout, encodeRequest } from './codec.ts';
import { dialBlocking } from './dial.ts';
import { formatGoDuration } from './duration.ts';
import { connectError, connectTimeout, rpcOutcome, rpcTimeout } from './outputs.ts';
import { acceptsHeaders, interpretResponse } from './response.ts';

export type GrpcProber = (req: GrpcProbeRequest, signal?: AbortSignal) => Promise<Outcome>;

export interface GrpcProberOptions {
  /**
   * The kubelet's `grpc.WithUserAgent` value, e.g. `kube-probe/1.37`.
   * grpc-go appends ` grpc-go/<version>`; so does outprobe, with the
   * version k8s.io/kubernetes v1.37.2 links, so an app sees the same header.
   */
  readonly userAgent: string;
  /** Jitter source for grpc-go's reconnect backoff. @default Math.random */
  readonly random?: Random;
}

const checkPath = '/grpc.health.v1.Health/Check';

/** grpc-go's own user-agent (`grpcUA`), of the version k8s.io/kubernetes v1.37.2 requires. */
export const grpcGoUserAgent = 'grpc-go/1.82.1';

/** The outcome for a probe the caller cancelled: void, like any errored attempt. */
const cancelled = (): Outcome => errored('probe cancelled');

export function createGrpcProber(options: GrpcProberOptions): GrpcProber {
  const random = options.random ?? systemRandom;
  const userAgent = `${options.userAgent} ${grpcGoUserAgent}`;
  return async (req, signal) => {
    if (signal?.aborted === true) return cancelled();
    const addr = joinHostPort(req.ip, req.port);
    const within = formatGoDuration(req.timeoutMs);
    const deadline = new Deadline(req.timeoutMs, signal);
    try {
      let session;
      try {
        session = await dialBlocking(addr, deadline.signal, random);
      } catch (err: unknown) {
        return connectError(addr, err instanceof Error ? err.message : String(err));
      }
      if (session === undefined) return deadline.callerAborted() ? cancelled() : connectTimeout(addr, within);
      const conn = { session };
      try {
        const body = encodeRequest(req.service);
        // Each attempt sends the time then left of the deadline.
        const attempt = (): Promise<RawResponse | undefined> => {
          const timeout = encodeGrpcTimeout(deadline.remainingMs());
          return unaryCall(conn.session, { authority: addr, path: checkPath, userAgent, timeout, deadlineAt: deadline.endsAt, body, acceptsHeaders }, deadline.signal);
        };
        // A connection for the retry: the same one while it takes streams, else a new one dialled as the first was.
        const usable = async (): Promise<boolean> => {
          if (acceptsStreams(conn.session)) return true;
          conn.session.destroy();
          const next = await dialBlocking(addr, deadline.signal, random);
          if (next === undefined) return false;
          conn.session = next;
          return true;
        };
        let raw = await attempt();
        // grpc-go's transparent retry: a first attempt the server never
        // processed (RST_STREAM REFUSED_STREAM, or left out by a GOAWAY's
        // last-stream-id) is sent again, once.
        if (raw !== undefined && unprocessed(raw)) raw = (await usable()) ? await attempt() : undefined;
        if (raw === undefined) return deadline.callerAborted() ? cancelled() : rpcTimeout(within);
        return rpcOutcome(interpretResponse(raw), within);
      } finally {
        conn.session.destroy();
      }
    } finally {
      deadline.dispose();
    }
  };
}

const refusedStream = 7;

/** grpc-go marks a stream unprocessed on REFUSED_STREAM and on a GOAWAY that leaves it out. */
function unprocessed(raw: RawResponse): boolean {
  return (raw.end.kind === 'reset' && raw.end.http2Code === refusedStream) || raw.end.kind === 'drained';
}

/** The connection is still up and may open a stream (no GOAWAY received). */
function acceptsStreams(session: http2.ClientHttp2Session): boolean {
  return !session.closed && !session.destroyed;
}

/** One AbortSignal for "the probe's time is up or the caller gave up", with its timer and listener released on dispose. */
class Deadline {
  readonly signal: AbortSignal;
  readonly #controller = new AbortController();
  readonly #external: AbortSignal | undefined;
  /** The deadline on the performance.now() clock. */
  readonly endsAt: number;
  readonly #cancelTimer: CancelTimer;
  readonly #onAbort = (): void => this.#controller.abort();

  constructor(timeoutMs: number, external: AbortSignal | undefined) {
    this.signal = this.#controller.signal;
    this.#external = external;
    this.endsAt = performance.now() + timeoutMs;
    this.#cancelTimer = setLongTimeout(this.#onAbort, timeoutMs);
    external?.addEventListener('abort', this.#onAbort, { once: true });
  }

  remainingMs(): number {
    return Math.max(0, this.endsAt - performance.now());
  }

  callerAborted(): boolean {
    return this.#external?.aborted === true;
  }

  dispose(): void {
    this.#cancelTimer();
    this.#external?.removeEventListener('abort', this.#onAbort);
  }
}
