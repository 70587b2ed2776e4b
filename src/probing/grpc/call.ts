/**
 * One unary call on a READY session: send the framed request, collect what
 * the server sent back and how the stream ended. Interpretation (statuses,
 * kubelet messages) happens elsewhere; this file only observes the stream,
 * and stops reading it where grpc-go would stop: at response headers that
 * are not a gRPC answer, and at the byte of the body that decides an error.
 * Nothing of the body is kept but the reader's constant-size state, so a
 * server that sends more, or never stops, costs no memory.
 */
import http2 from 'node:http2';
import { ResponseReader } from './reader.ts';
import type { BodyResult } from './reader.ts';
import { http2CodeName } from './status-codes.ts';

export interface CallRequest {
  /** `host:port`, IPv6 bracketed, as grpc-go sends it in `:authority`. */
  readonly authority: string;
  readonly path: string;
  /** The whole user-agent value, grpc-go's suffix included. */
  readonly userAgent: string;
  /** Encoded grpc-timeout value (the time left of the probe's deadline). */
  readonly timeout: string;
  /** The probe's deadline on the performance.now() clock. */
  readonly deadlineAt: number;
  readonly body: Buffer;
  /** False for response headers grpc-go rejects at once (non-200, not application/grpc): reading stops there. */
  readonly acceptsHeaders: (headers: ResponseHeaders) => boolean;
}

/** How the stream ended, beyond the frames received. */
export type StreamEnd =
  | { readonly kind: 'closed' } // END_STREAM, or RST_STREAM(NO_ERROR)
  /** `pastDeadline`: the reset arrived once the deadline had passed (grpc-go then reads CANCEL as DeadlineExceeded). */
  | { readonly kind: 'reset'; readonly http2Code: number; readonly pastDeadline?: boolean }
  /**
   * The connection went away under the stream. `reason` is how grpc-go's
   * reader words the read error; `goaway` the GOAWAY received before, as
   * grpc-go describes it (`code: NO_ERROR`, `…, debug data: "…"`).
   */
  | { readonly kind: 'connection-lost'; readonly reason: string; readonly goaway?: string }
  /** A GOAWAY's last-stream-id left this stream out: the server never processed it. */
  | { readonly kind: 'drained' };

export type ResponseHeaders = http2.IncomingHttpHeaders & http2.IncomingHttpStatusHeader;

export interface RawResponse {
  readonly headers: ResponseHeaders | undefined;
  /** The response headers carried END_STREAM ("trailers-only", usual for errors). */
  readonly trailersOnly: boolean;
  readonly trailers: http2.IncomingHttpHeaders | undefined;
  /** What the response DATA amounted to; undefined when there was none. */
  readonly message: BodyResult | undefined;
  readonly end: StreamEnd;
}

/** Resolves when the stream closes; undefined if `signal` aborted first (the caller destroys the session). */
export function unaryCall(session: http2.ClientHttp2Session, req: CallRequest, signal: AbortSignal): Promise<RawResponse | undefined> {
  return new Promise((resolve) => {
    // grpc-go's createHeaderFields order: pseudo-headers, content-type,
    // user-agent, te, grpc-accept-encoding, grpc-timeout (node:http2 keeps it).
    const stream = session.request({
      ':method': 'POST',
      ':scheme': 'http',
      ':path': req.path,
      ':authority': req.authority,
      'content-type': 'application/grpc',
      'user-agent': req.userAgent,
      te: 'trailers',
      // The compressors registered in the kubelet binary (it links grpc-go's gzip).
      'grpc-accept-encoding': 'gzip',
      'grpc-timeout': req.timeout,
    }, { endStream: false, signal });
    let headers: ResponseHeaders | undefined;
    let trailersOnly = false;
    let trailers: http2.IncomingHttpHeaders | undefined;
    const reader = new ResponseReader();
    let done = false;
    // grpc-go cancels the stream (RST_STREAM CANCEL) when it fails a call
    // early; the caller then destroys the session.
    const stop = (message: BodyResult | undefined): void => {
      if (done) return;
      done = true;
      stream.removeAllListeners('data');
      stream.close(http2.constants.NGHTTP2_CANCEL);
      resolve({ headers, trailersOnly, trailers, message, end: { kind: 'closed' } });
    };
    stream.on('response', (h: ResponseHeaders, flags: number) => {
      headers = h;
      reader.setEncoding(typeof h['grpc-encoding'] === 'string' ? h['grpc-encoding'] : undefined);
      trailersOnly = (flags & http2.constants.NGHTTP2_FLAG_END_STREAM) !== 0;
      if (!trailersOnly && !req.acceptsHeaders(h)) stop(undefined);
    });
    stream.on('trailers', (h: http2.IncomingHttpHeaders) => {
      trailers = h;
    });
    stream.on('data', (chunk: Buffer) => {
      const failed = reader.push(chunk);
      if (failed !== undefined) stop(failed);
    });
    stream.on('error', () => undefined); // the close below tells the same story
    // What the connection said before the stream ended: a GOAWAY, a reset socket.
    let goaway: { readonly code: number; readonly lastStreamId: number; readonly debug: Buffer | undefined } | undefined;
    let socketReset = false;
    const onGoaway = (code: number, lastStreamId: number, debug?: Buffer): void => {
      goaway = { code, lastStreamId, debug };
    };
    const onSocketError = (err: unknown): void => {
      if ((err as { code?: unknown }).code === 'ECONNRESET') socketReset = true;
    };
    // The socket reports a reset before the session tears the stream down.
    const socket = session.socket;
    session.on('goaway', onGoaway);
    socket.on('error', onSocketError);
    stream.once('close', () => {
      session.off('goaway', onGoaway);
      // A destroyed session has let go of its socket (the proxy then throws).
      if (!session.destroyed) socket.off('error', onSocketError);
      if (done) return;
      done = true;
      if (signal.aborted) {
        resolve(undefined);
        return;
      }
      const pastDeadline = performance.now() >= req.deadlineAt;
      let end = streamEnd(session, stream.rstCode, pastDeadline);
      if (end.kind !== 'closed' && goaway !== undefined && (stream.id ?? 0) > goaway.lastStreamId) end = { kind: 'drained' };
      else if (end.kind === 'connection-lost') {
        const reason = socketReset ? 'connection reset by peer' : 'EOF';
        end = goaway === undefined ? { kind: 'connection-lost', reason } : { kind: 'connection-lost', reason, goaway: describeGoaway(goaway.code, goaway.debug) };
      }
      resolve({ headers, trailersOnly, trailers, message: reader.finish(), end });
    });
    stream.end(req.body);
  });
}

function streamEnd(session: http2.ClientHttp2Session, rstCode: number | undefined, pastDeadline: boolean): StreamEnd {
  if (session.destroyed) return { kind: 'connection-lost', reason: 'EOF' };
  if (rstCode === undefined || rstCode === http2.constants.NGHTTP2_NO_ERROR) return { kind: 'closed' };
  return { kind: 'reset', http2Code: rstCode, pastDeadline };
}

/** grpc-go's goAwayDebugMessage (setGoAwayReason). */
function describeGoaway(code: number, debug: Buffer | undefined): string {
  const name = http2CodeName(code);
  return debug === undefined || debug.length === 0 ? `code: ${name}` : `code: ${name}, debug data: ${JSON.stringify(debug.toString('latin1'))}`;
}
