/**
 * What grpc-go makes of a unary response: the checks of
 * http2_client.go operateHeaders (HTTP status, content-type, grpc-status)
 * and of the stream's end, then the message itself. The result is either
 * the HealthCheckResponse status or the status error grpc-go would return.
 */
import http from 'node:http';
import type { IncomingHttpHeaders } from 'node:http2';
import type { RawResponse, ResponseHeaders } from './call.ts';
import { decodeGrpcMessage } from './codec.ts';
import { noMessage } from './reader.ts';
import { codeForHttpStatus, grpcCode, rstStreamError } from './status-codes.ts';
import type { RpcError } from './status-codes.ts';

export type RpcResult = { readonly status: number } | RpcError;

/** grpcutil.ContentSubtype: `application/grpc`, optionally followed by `+subtype` or `;params`. */
function isGrpcContentType(value: string | undefined): boolean {
  if (value === undefined || !value.startsWith('application/grpc')) return false;
  const next = value.charAt('application/grpc'.length);
  return next === '' || next === '+' || next === ';';
}

/** Response headers that are not a gRPC answer: a non-200 status or a missing/foreign content-type. */
function headerError(headers: ResponseHeaders): RpcError | undefined {
  const status = headers[':status'] ?? 0;
  const contentType = headers['content-type'];
  const errs: string[] = [];
  if (status !== 200) errs.push(`unexpected HTTP status code received from server: ${status} (${http.STATUS_CODES[status] ?? ''})`);
  if (!isGrpcContentType(contentType)) {
    errs.push(contentType === undefined ? 'malformed header: missing HTTP content-type' : `transport: received unexpected content-type ${JSON.stringify(contentType)}`);
  }
  if (errs.length === 0) return undefined;
  return { code: codeForHttpStatus(status), message: errs.join('; ') };
}

/** Headers grpc-go accepts as the start of a gRPC answer; on any other it fails the call at once. */
export function acceptsHeaders(headers: ResponseHeaders): boolean {
  return headerError(headers) === undefined;
}

/**
 * grpc-status/grpc-message of the final header block; a block without
 * grpc-status means Unknown. A grpc-status that is not an int32 is a
 * transport error in itself (`malformed`).
 */
function statusOf(block: IncomingHttpHeaders): { readonly final: RpcError } | { readonly malformed: RpcError } {
  const raw = block['grpc-status'];
  const rawMessage = block['grpc-message'];
  const message = typeof rawMessage === 'string' ? decodeGrpcMessage(rawMessage) : '';
  if (raw === undefined) return { final: { code: grpcCode.unknown, message } };
  const value = String(raw);
  const numeric = /^[+-]?\d+$/.test(value);
  if (!numeric || Math.abs(Number(value)) > 2 ** 31 - 1) {
    const why = numeric ? 'value out of range' : 'invalid syntax';
    return { malformed: { code: grpcCode.internal, message: `transport: malformed grpc-status: strconv.ParseInt: parsing ${JSON.stringify(value)}: ${why}` } };
  }
  return { final: { code: Number(value), message } };
}

/** The stream ended without trailers: why, in grpc-go's words. */
function endWithoutTrailers(res: RawResponse): RpcError {
  switch (res.end.kind) {
    case 'connection-lost': {
      const read = `error reading from server: ${res.end.reason}`;
      // http2_client.go Close: a GOAWAY received before the loss is named, around the ConnectionError.
      const message = res.end.goaway === undefined ? read : `closing transport due to: connection error: desc = ${JSON.stringify(read)}, received prior goaway: ${res.end.goaway}`;
      return { code: grpcCode.unavailable, message };
    }
    case 'drained':
      return { code: grpcCode.unavailable, message: 'the connection is draining' };
    case 'reset':
      return rstStreamError(res.end.http2Code, res.end.pastDeadline === true);
    case 'closed':
      return res.headers === undefined
        ? rstStreamError(0)
        : { code: grpcCode.internal, message: 'server closed the stream without sending trailers' };
  }
}

/**
 * grpc-go's order: response headers are checked as they arrive; the message
 * is read before the final status is looked at, so a bad or oversized
 * message wins over a missing or non-OK status, and a valid message does
 * not rescue a non-OK status.
 */
export function interpretResponse(res: RawResponse): RpcResult {
  if (res.headers === undefined) return endWithoutTrailers(res);
  const bad = headerError(res.headers);
  if (bad !== undefined) return bad;
  const final = res.trailersOnly ? res.headers : res.trailers;
  const parsed = final === undefined ? undefined : statusOf(final);
  if (parsed !== undefined && 'malformed' in parsed) return parsed.malformed;
  const decoded = res.message;
  if (decoded !== undefined && 'code' in decoded) {
    // A message cut short by a reset or a lost connection reads as that failure.
    const cutShort = decoded.message === 'unexpected EOF' && res.end.kind !== 'closed';
    return cutShort ? endWithoutTrailers(res) : decoded;
  }
  if (parsed === undefined) return endWithoutTrailers(res);
  if (parsed.final.code !== grpcCode.ok) return parsed.final;
  return decoded ?? noMessage();
}
