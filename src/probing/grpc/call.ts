/**
 * One unary call on a READY session: send the framed request, collect what
 * the server sent back and how the stream ended. Interpretation (statuses,
 * kubelet messages) happens elsewhere; this file only observes the stream.
 */
import http2 from 'node:http2';
import { maxResponseMessageBytes } from './codec.ts';

export interface CallRequest {
  /** `host:port`, IPv6 bracketed, as grpc-go sends it in `:authority`. */
  readonly authority: string;
  readonly path: string;
  readonly userAgent: string;
  /** Encoded grpc-timeout value (the time left of the probe's deadline). */
  readonly timeout: string;
  readonly body: Buffer;
}

/** How the stream ended, beyond the frames received. */
export type StreamEnd =
  | { readonly kind: 'closed' } // END_STREAM, or RST_STREAM(NO_ERROR)
  | { readonly kind: 'reset'; readonly http2Code: number }
  | { readonly kind: 'connection-lost' };

export type ResponseHeaders = http2.IncomingHttpHeaders & http2.IncomingHttpStatusHeader;

export interface RawResponse {
  readonly headers: ResponseHeaders | undefined;
  /** The response headers carried END_STREAM ("trailers-only", usual for errors). */
  readonly trailersOnly: boolean;
  readonly trailers: http2.IncomingHttpHeaders | undefined;
  /** Response DATA, kept up to one maximal message plus its frame header. */
  readonly body: Buffer;
  readonly end: StreamEnd;
}

const bodyCap = 5 + maxResponseMessageBytes + 1;

/** Resolves when the stream closes; undefined if `signal` aborted first (the caller destroys the session). */
export function unaryCall(session: http2.ClientHttp2Session, req: CallRequest, signal: AbortSignal): Promise<RawResponse | undefined> {
  return new Promise((resolve) => {
    const stream = session.request({
      ':method': 'POST',
      ':scheme': 'http',
      ':path': req.path,
      ':authority': req.authority,
      'content-type': 'application/grpc',
      'user-agent': req.userAgent,
      te: 'trailers',
      'grpc-timeout': req.timeout,
    }, { endStream: false, signal });
    let headers: ResponseHeaders | undefined;
    let trailersOnly = false;
    let trailers: http2.IncomingHttpHeaders | undefined;
    const chunks: Buffer[] = [];
    let kept = 0;
    stream.on('response', (h: ResponseHeaders, flags: number) => {
      headers = h;
      trailersOnly = (flags & http2.constants.NGHTTP2_FLAG_END_STREAM) !== 0;
    });
    stream.on('trailers', (h: http2.IncomingHttpHeaders) => {
      trailers = h;
    });
    stream.on('data', (chunk: Buffer) => {
      if (kept >= bodyCap) return;
      chunks.push(chunk);
      kept += chunk.length;
    });
    stream.on('error', () => undefined); // the close below tells the same story
    stream.once('close', () => {
      if (signal.aborted) {
        resolve(undefined);
        return;
      }
      resolve({ headers, trailersOnly, trailers, body: Buffer.concat(chunks), end: streamEnd(session, stream.rstCode) });
    });
    stream.end(req.body);
  });
}

function streamEnd(session: http2.ClientHttp2Session, rstCode: number | undefined): StreamEnd {
  if (session.destroyed) return { kind: 'connection-lost' };
  if (rstCode === undefined || rstCode === http2.constants.NGHTTP2_NO_ERROR) return { kind: 'closed' };
  return { kind: 'reset', http2Code: rstCode };
}
