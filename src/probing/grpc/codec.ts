/**
 * The wire format of one grpc.health.v1.Health/Check call, by hand: gRPC's
 * 5-byte message framing, the two protobuf messages (one string out, one enum
 * in), and the grpc-timeout / grpc-message header encodings. The response
 * body itself is read incrementally by reader.ts.
 */
import { HealthResponseScanner } from './scanner.ts';

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

/** HealthCheckResponse: field 1 `status` (varint); unknown fields skipped; last occurrence wins. */
export function decodeHealthCheckResponse(msg: Uint8Array): { readonly status: number } | null {
  const scanner = new HealthResponseScanner(msg.length);
  scanner.push(msg);
  return scanner.end();
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
