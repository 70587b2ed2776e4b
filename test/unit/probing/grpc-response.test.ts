import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RawResponse, ResponseHeaders } from '../../../src/probing/grpc/call.ts';
import { connectError, connectTimeout, rpcOutcome } from '../../../src/probing/grpc/outputs.ts';
import { ResponseReader } from '../../../src/probing/grpc/reader.ts';
import { interpretResponse } from '../../../src/probing/grpc/response.ts';

/** Node types `:status` as a number next to a string index signature; build header blocks loosely. */
const hdr = (h: Record<string, string | number>): ResponseHeaders => h as unknown as ResponseHeaders;
const ok = { ':status': 200, 'content-type': 'application/grpc' };
const serving = Buffer.from([0, 0, 0, 0, 2, 0x08, 1]);
/** The body as the call would have read it, to its end. */
const read = (body: Buffer): RawResponse['message'] => {
  const reader = new ResponseReader();
  reader.push(body);
  return reader.finish();
};
const raw = ({ body = serving, ...over }: Partial<RawResponse> & { readonly body?: Buffer }): RawResponse => ({
  headers: hdr(ok), trailersOnly: false, trailers: { 'grpc-status': '0' }, message: read(body), end: { kind: 'closed' }, ...over,
});

describe('interpretResponse (grpc-go client semantics)', () => {
  it('reads the message of an OK call', () => {
    assert.deepEqual(interpretResponse(raw({})), { status: 1 });
    assert.deepEqual(interpretResponse(raw({ headers: hdr({ ...ok, 'content-type': 'application/grpc+proto' }) })), { status: 1 });
  });

  it('takes the status from trailers-only headers and percent-decodes grpc-message', () => {
    const headers = hdr({ ...ok, 'grpc-status': '5', 'grpc-message': 'Health%20status%20unknown' });
    assert.deepEqual(interpretResponse(raw({ headers, trailersOnly: true, trailers: undefined, body: Buffer.alloc(0) })), { code: 5, message: 'Health status unknown' });
  });

  it('maps a non-200 HTTP status as grpc-go does (404 is Unimplemented, 503 Unavailable, others Unknown)', () => {
    const r = (status: number, contentType?: string): RawResponse =>
      raw({ headers: hdr(contentType === undefined ? { ':status': status } : { ':status': status, 'content-type': contentType }), trailers: undefined, body: Buffer.alloc(0) });
    assert.deepEqual(interpretResponse(r(404)), {
      code: 12,
      message: 'unexpected HTTP status code received from server: 404 (Not Found); malformed header: missing HTTP content-type',
    });
    assert.deepEqual(interpretResponse(r(503, 'application/grpc')), { code: 14, message: 'unexpected HTTP status code received from server: 503 (Service Unavailable)' });
    assert.deepEqual(interpretResponse(r(500, 'text/plain')), {
      code: 2,
      message: 'unexpected HTTP status code received from server: 500 (Internal Server Error); transport: received unexpected content-type "text/plain"',
    });
    assert.deepEqual(interpretResponse(r(200, 'text/html')), { code: 2, message: 'transport: received unexpected content-type "text/html"' });
    assert.deepEqual(interpretResponse(r(200, 'application/grpcweb')), { code: 2, message: 'transport: received unexpected content-type "application/grpcweb"' });
  });

  it('treats trailers without grpc-status as Unknown and a malformed grpc-status as Internal', () => {
    assert.deepEqual(interpretResponse(raw({ trailers: {} })), { code: 2, message: '' }); // a valid message does not rescue a non-OK status
    assert.deepEqual(interpretResponse(raw({ trailers: {}, body: Buffer.alloc(0) })), { code: 2, message: '' });
    assert.deepEqual(interpretResponse(raw({ trailers: { 'grpc-status': 'zero' } })), {
      code: 13,
      message: 'transport: malformed grpc-status: strconv.ParseInt: parsing "zero": invalid syntax',
    });
  });

  it('a CANCEL reset that arrives once the deadline has passed is DeadlineExceeded, as grpc-go handleRSTStream reads it', () => {
    assert.deepEqual(interpretResponse(raw({ headers: undefined, trailers: undefined, end: { kind: 'reset', http2Code: 8, pastDeadline: true } })), {
      code: 4,
      message: 'stream terminated by RST_STREAM with error code: CANCEL',
    });
    assert.deepEqual(interpretResponse(raw({ trailers: undefined, end: { kind: 'reset', http2Code: 8, pastDeadline: false } })), {
      code: 1,
      message: 'stream terminated by RST_STREAM with error code: CANCEL',
    });
    // Only CANCEL: other codes keep their own mapping after the deadline.
    assert.deepEqual(interpretResponse(raw({ headers: undefined, trailers: undefined, end: { kind: 'reset', http2Code: 2, pastDeadline: true } })), {
      code: 13,
      message: 'stream terminated by RST_STREAM with error code: INTERNAL_ERROR',
    });
  });

  it('reports how a stream ended without trailers', () => {
    assert.deepEqual(interpretResponse(raw({ trailers: undefined })), { code: 13, message: 'server closed the stream without sending trailers' });
    assert.deepEqual(interpretResponse(raw({ headers: undefined, trailers: undefined, end: { kind: 'reset', http2Code: 1 } })), {
      code: 13,
      message: 'stream terminated by RST_STREAM with error code: PROTOCOL_ERROR',
    });
    assert.deepEqual(interpretResponse(raw({ headers: undefined, trailers: undefined, end: { kind: 'reset', http2Code: 7 } })), {
      code: 14,
      message: 'stream terminated by RST_STREAM with error code: REFUSED_STREAM',
    });
    assert.deepEqual(interpretResponse(raw({ headers: undefined, trailers: undefined, end: { kind: 'reset', http2Code: 0x99 } })), {
      code: 2,
      message: 'stream terminated by RST_STREAM with error code: unknown error code 0x99',
    });
    assert.deepEqual(interpretResponse(raw({ headers: undefined, trailers: undefined, end: { kind: 'closed' } })), {
      code: 13,
      message: 'stream terminated by RST_STREAM with error code: NO_ERROR',
    });
    assert.deepEqual(interpretResponse(raw({ trailers: undefined, end: { kind: 'connection-lost', reason: 'EOF' } })), { code: 14, message: 'error reading from server: EOF' });
  });

  it('reads the message before the final status, as grpc-go does', () => {
    assert.deepEqual(interpretResponse(raw({ trailers: { 'grpc-status': '14', 'grpc-message': 'draining' }, body: Buffer.alloc(0) })), { code: 14, message: 'draining' });
    assert.deepEqual(interpretResponse(raw({ trailers: { 'grpc-status': '14', 'grpc-message': 'draining' } })), { code: 14, message: 'draining' });
    assert.deepEqual(interpretResponse(raw({ trailers: { 'grpc-status': '14' }, body: Buffer.from([0, 0, 0, 0, 9]) })), { code: 13, message: 'unexpected EOF' });
    assert.deepEqual(interpretResponse(raw({ trailers: undefined, body: Buffer.from([0, 0, 0x7f, 0, 0]) })), {
      code: 8,
      message: 'grpc: received message larger than max (8323072 vs. 4194304)',
    });
    // a message cut short by a reset reports the reset
    assert.deepEqual(interpretResponse(raw({ trailers: undefined, body: Buffer.from([0, 0, 0, 0, 9]), end: { kind: 'reset', http2Code: 2 } })), {
      code: 13,
      message: 'stream terminated by RST_STREAM with error code: INTERNAL_ERROR',
    });
  });
});

describe('kubelet outputs', () => {
  it('prints each row of the kubelet table', () => {
    assert.deepEqual(rpcOutcome({ status: 1 }, '1s'), { kind: 'success', output: 'service healthy' });
    assert.deepEqual(rpcOutcome({ status: 0 }, '1s'), { kind: 'failure', output: 'service unhealthy (responded with "UNKNOWN")' });
    assert.deepEqual(rpcOutcome({ status: 2 }, '1s'), { kind: 'failure', output: 'service unhealthy (responded with "NOT_SERVING")' });
    assert.deepEqual(rpcOutcome({ status: 3 }, '1s'), { kind: 'failure', output: 'service unhealthy (responded with "SERVICE_UNKNOWN")' });
    assert.deepEqual(rpcOutcome({ status: 9 }, '1s'), { kind: 'failure', output: 'service unhealthy (responded with "9")' });
    assert.deepEqual(rpcOutcome({ code: 12, message: 'unknown service grpc.health.v1.Health' }, '1s'), {
      kind: 'failure',
      output: 'error: this server does not implement the grpc health protocol (grpc.health.v1.Health): unknown service grpc.health.v1.Health',
    });
    assert.deepEqual(rpcOutcome({ code: 4, message: 'Deadline exceeded' }, '1.5s'), { kind: 'failure', output: 'timeout: health rpc did not complete within 1.5s' });
    assert.deepEqual(rpcOutcome({ code: 5, message: 'unknown service' }, '1s'), { kind: 'failure', output: 'error: health rpc probe failed: rpc error: code = NotFound desc = unknown service' });
    assert.deepEqual(rpcOutcome({ code: 42, message: 'x' }, '1s'), { kind: 'failure', output: 'error: health rpc probe failed: rpc error: code = Code(42) desc = x' });
    assert.deepEqual(connectTimeout('[fd00::1]:9090', '2m0s'), {
      kind: 'failure',
      output: 'timeout: failed to connect service "[fd00::1]:9090" within 2m0s: context deadline exceeded',
    });
    assert.deepEqual(connectError('10.0.0.1:1', 'boom'), { kind: 'failure', output: 'error: failed to connect service at "10.0.0.1:1": boom' });
  });
});
