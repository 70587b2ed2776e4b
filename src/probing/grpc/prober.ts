import http2 from 'node:http2';
import { errored, failure, success } from '../outcome.ts';
import type { Outcome } from '../outcome.ts';
import type { GrpcProbeRequest } from '../request.ts';
import { joinHostPort } from '../request.ts';
import { decodeResponse, encodeRequest, servingStatus } from './codec.ts';
import { formatGoDuration } from './duration.ts';
import { codeForHttpStatus, codeName, grpcCode } from './status-codes.ts';

export type GrpcProber = (req: GrpcProbeRequest, signal?: AbortSignal) => Promise<Outcome>;

/** Cap on the response body read (a health response is a few bytes). */
const maxBody = 64 * 1024;

interface Rpc {
  readonly httpStatus: number;
  readonly grpcStatus: number | undefined;
  readonly grpcMessage: string;
  readonly body: Buffer;
}

/**
 * The kubelet's gRPC probe (pkg/probe/grpc, kubelet-probes.md §6.2) over a
 * hand-rolled unary call on node:http2: plaintext h2c, one deadline of
 * `timeoutSeconds` for connecting and the RPC, `grpc.health.v1.Health/Check`,
 * only SERVING succeeds, the session closed after every probe. Like grpc-go's
 * blocking dial, a connection that cannot be established (refused, reset,
 * not HTTP/2) is reported when the deadline expires, with the timeout text.
 */
export function createGrpcProber(options: { readonly userAgent: string }): GrpcProber {
  return (req, signal) => {
    if (signal?.aborted === true) return Promise.resolve(errored('probe cancelled'));
    return new Promise<Outcome>((resolve) => {
      const addr = joinHostPort(req.ip, req.port);
      const within = formatGoDuration(req.timeoutMs);
      const deadline = Date.now() + req.timeoutMs;
      let connected = false;
      let settled = false;
      const session = http2.connect(`http://${addr}`, { settings: { enablePush: false } });
      const finish = (outcome: Outcome): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        session.removeAllListeners();
        session.on('error', () => undefined);
        session.destroy();
        resolve(outcome);
      };
      const onAbort = (): void => {
        finish(errored('probe cancelled'));
      };
      const timer = setTimeout(() => {
        finish(
          connected
            ? failure(`timeout: health rpc did not complete within ${within}`)
            : failure(`timeout: failed to connect service ${JSON.stringify(addr)} within ${within}: context deadline exceeded`),
        );
      }, req.timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      // A failed connect is not final for grpc-go's blocking dial: it waits
      // (retrying with backoff) until the deadline, then reports the timeout.
      session.on('error', (err: Error) => {
        if (connected) finish(failure(`error: health rpc probe failed: rpc error: code = Unavailable desc = ${err.message}`));
      });
      session.once('remoteSettings', () => {
        connected = true;
        call(session, req.service, options.userAgent, Math.max(1, deadline - Date.now())).then(
          (rpc) => finish(outcomeOf(rpc, within)),
          (err: unknown) => finish(failure(`error: health rpc probe failed: rpc error: code = Unavailable desc = ${err instanceof Error ? err.message : String(err)}`)),
        );
      });
    });
  };
}

function call(session: http2.ClientHttp2Session, service: string, userAgent: string, remainingMs: number): Promise<Rpc> {
  return new Promise<Rpc>((resolve, reject) => {
    const stream = session.request({
      ':method': 'POST',
      ':path': '/grpc.health.v1.Health/Check',
      'content-type': 'application/grpc',
      te: 'trailers',
      'user-agent': userAgent,
      'grpc-timeout': `${remainingMs}m`,
    });
    let httpStatus = 0;
    let grpcStatus: number | undefined;
    let grpcMessage = '';
    const chunks: Buffer[] = [];
    let size = 0;
    const readStatus = (h: http2.IncomingHttpHeaders): void => {
      const s = h['grpc-status'];
      if (s !== undefined) grpcStatus = Number(s);
      const m = h['grpc-message'];
      if (typeof m === 'string') grpcMessage = decodeURIComponent(m);
    };
    stream.on('response', (headers) => {
      httpStatus = headers[':status'] ?? 0;
      readStatus(headers);
    });
    stream.on('trailers', readStatus);
    stream.on('data', (chunk: Buffer) => {
      if (size < maxBody) chunks.push(chunk);
      size += chunk.length;
    });
    stream.on('error', reject);
    stream.on('close', () => {
      if (httpStatus === 0) {
        reject(new Error(`stream terminated by RST_STREAM with error code: ${stream.rstCode}`));
        return;
      }
      resolve({ httpStatus, grpcStatus, grpcMessage, body: Buffer.concat(chunks) });
    });
    stream.end(encodeRequest(service));
  });
}

function outcomeOf(rpc: Rpc, within: string): Outcome {
  let code = rpc.grpcStatus;
  let message = rpc.grpcMessage;
  if (code === undefined) {
    code = rpc.httpStatus === 200 ? grpcCode.internal : codeForHttpStatus(rpc.httpStatus);
    message = rpc.httpStatus === 200 ? 'server closed the stream without sending trailers' : `unexpected HTTP status code received from server: ${rpc.httpStatus}`;
  }
  if (code === grpcCode.unimplemented) return failure(`error: this server does not implement the grpc health protocol (grpc.health.v1.Health): ${message}`);
  if (code === grpcCode.deadlineExceeded) return failure(`timeout: health rpc did not complete within ${within}`);
  if (code !== grpcCode.ok) return failure(`error: health rpc probe failed: rpc error: code = ${codeName(code)} desc = ${message}`);
  const decoded = decodeResponse(rpc.body);
  if ('error' in decoded) return failure(`error: health rpc probe failed: rpc error: code = Internal desc = ${decoded.error}`);
  if (decoded.status === 1) return success('service healthy');
  const name = servingStatus[decoded.status] ?? String(decoded.status);
  return failure(`service unhealthy (responded with ${JSON.stringify(name)})`);
}
