/**
 * The wire format of one grpc.health.v1.Health/Check call, by hand: gRPC's
 * 5-byte message framing, the two protobuf messages (one string out, one enum
 * in), and the grpc-timeout / grpc-message header encodings. Decoding errors
 * carry the status grpc-go would report for the same bytes.
 */
import { grpcCode } from './status-codes.ts';
import type { RpcError } from './status-codes.ts';

/** HealthCheckResponse.ServingStatus names, as Go's enum String() prints them. */
export const servingStatus = ['UNKNOWN', 'SERVING', 'NOT_SERVING', 'SERVICE_UNKNOWN'] as const;

/** grpc-go's default MaxCallRecvMsgSize. */
export const maxResponseMessageBytes = 4 * 1024 * 1024;

function varint(n: number): number[] {
  const out: number[] = [];
  let v = n;
  while (v > 0x7f) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return out;
}

/** A framed HealthCheckRequest{service}: flag 0, big-endian length, then field 1 when non-empty (proto3 omits ""). */
export function encodeRequest(service: string): Buffer {
  const bytes = Buffer.from(service, 'utf8');
  const head = bytes.length === 0 ? [] : [0x0a, ...varint(bytes.length)];
  const frame = Buffer.allocUnsafe(5 + head.length + bytes.length);
  frame.writeUInt8(0, 0);
  frame.writeUInt32BE(head.length + bytes.length, 1);
  frame.set(head, 5);
  bytes.copy(frame, 5 + head.length);
  return frame;
}

/** Reads a varint at `at`: [value, next offset], or null when truncated or longer than 10 bytes. */
function readVarint(buf: Uint8Array, at: number): readonly [number, number] | null {
  let value = 0;
  for (let i = at; i < buf.length && i < at + 10; i++) {
    const b = buf[i] ?? 0;
    value += (b & 0x7f) * 2 ** (7 * (i - at));
    if ((b & 0x80) === 0) return [value, i + 1];
  }
  return null;
}

/** Offset just past a field value of `wireType` starting at `at`, or null if the bytes are not valid protobuf. */
function skipValue(msg: Uint8Array, wireType: number, at: number): number | null {
  switch (wireType) {
    case 0:
      return readVarint(msg, at)?.[1] ?? null;
    case 1:
      return at + 8 <= msg.length ? at + 8 : null;
    case 2: {
      const len = readVarint(msg, at);
      return len !== null && len[1] + len[0] <= msg.length ? len[1] + len[0] : null;
    }
    case 5:
      return at + 4 <= msg.length ? at + 4 : null;
    default:
      return null; // groups (deprecated) and invalid wire types
  }
}

/** Go's int32 conversion of an enum varint (proto3 enums are open). */
function toInt32(v: number): number {
  const low = v % 2 ** 32;
  return low >= 2 ** 31 ? low - 2 ** 32 : low;
}

/** HealthCheckResponse: field 1 `status` (varint); unknown fields skipped; last occurrence wins. */
export function decodeHealthCheckResponse(msg: Uint8Array): { readonly status: number } | null {
  let status = 0;
  for (let i = 0; i < msg.length; ) {
    const tag = readVarint(msg, i);
    if (tag === null || tag[0] < 8) return null;
    const [key, at] = tag;
    const wireType = key % 8;
    const next = skipValue(msg, wireType, at);
    if (next === null) return null;
    if (Math.floor(key / 8) === 1 && wireType === 0) status = toInt32(readVarint(msg, at)?.[0] ?? 0);
    i = next;
  }
  return { status };
}

const internal = (message: string): RpcError => ({ code: grpcCode.internal, message });

/**
 * The unary response body: exactly one framed, uncompressed HealthCheckResponse.
 * Errors are grpc-go's (rpc_util.go recv, stream.go cardinality checks).
 */
export function decodeResponseBody(body: Buffer): { readonly status: number } | RpcError {
  if (body.length === 0) return internal('cardinality violation: received no response message from non-server-streaming RPC');
  if (body.length < 5) return internal('unexpected EOF');
  const flag = body.readUInt8(0);
  const length = body.readUInt32BE(1);
  if (length > maxResponseMessageBytes) {
    return { code: grpcCode.resourceExhausted, message: `grpc: received message larger than max (${length} vs. ${maxResponseMessageBytes})` };
  }
  if (body.length < 5 + length) return internal('unexpected EOF');
  if (flag === 1) return internal('grpc: compressed flag set with identity or empty encoding');
  if (flag !== 0) return internal(`grpc: received unexpected payload format ${flag}`);
  const decoded = decodeHealthCheckResponse(body.subarray(5, 5 + length));
  if (decoded === null) return internal('grpc: failed to unmarshal the received message: proto: cannot parse invalid wire-format data');
  if (body.length > 5 + length) return internal('cardinality violation: expected <EOF> for non server-streaming RPCs, but received another message');
  return decoded;
}

const timeoutUnits: readonly (readonly [string, number])[] = [
  ['n', 1], ['u', 1e3], ['m', 1e6], ['S', 1e9], ['M', 6e10], ['H', 3.6e12],
];

/** grpc-go's encodeTimeout: the smallest unit whose (rounded-up) value fits 8 digits. */
export function encodeGrpcTimeout(ms: number): string {
  const ns = Math.ceil(ms * 1e6);
  if (ns <= 0) return '0n';
  for (const [unit, size] of timeoutUnits) {
    const value = Math.ceil(ns / size);
    if (value <= 99_999_999) return `${value}${unit}`;
  }
  return `${Math.ceil(ns / 3.6e12)}H`;
}

/**
 * grpc-go's decodeGrpcMessage: `%XX` becomes that byte; a `%` not followed by
 * two hex digits stays as is; the bytes are then read as UTF-8.
 */
export function decodeGrpcMessage(raw: string): string {
  if (!raw.includes('%')) return raw;
  const src = Buffer.from(raw, 'latin1');
  const out: number[] = [];
  for (let i = 0; i < src.length; i++) {
    const c = src[i] ?? 0;
    const hex = i + 2 < src.length ? src.toString('latin1', i + 1, i + 3) : '';
    if (c === 0x25 && /^[0-9a-fA-F]{2}$/.test(hex)) {
      out.push(Number.parseInt(hex, 16));
      i += 2;
    } else {
      out.push(c);
    }
  }
  return Buffer.from(out).toString('utf8');
}
