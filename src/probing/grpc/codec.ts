/**
 * The two protobuf messages of grpc.health.v1 and gRPC's 5-byte message
 * framing, by hand: the probe needs one string field out and one enum in.
 */

/** HealthCheckResponse.ServingStatus names, as Go's enum String() prints them. */
export const servingStatus = ['UNKNOWN', 'SERVING', 'NOT_SERVING', 'SERVICE_UNKNOWN'] as const;

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

/** A framed HealthCheckRequest{service}: flag 0, big-endian length, then field 1 when non-empty. */
export function encodeRequest(service: string): Buffer {
  const bytes = Buffer.from(service, 'utf8');
  const message = bytes.length === 0 ? Buffer.alloc(0) : Buffer.concat([Buffer.from([0x0a, ...varint(bytes.length)]), bytes]);
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt8(0, 0);
  frame.writeUInt32BE(message.length, 1);
  message.copy(frame, 5);
  return frame;
}

function readVarint(buf: Buffer, at: number): readonly [number, number] | null {
  let value = 0;
  for (let i = at, shift = 0; i < buf.length && shift < 64; i++, shift += 7) {
    const b = buf[i] ?? 0;
    value += (b & 0x7f) * 2 ** shift;
    if ((b & 0x80) === 0) return [value, i + 1];
  }
  return null;
}

const unmarshal = { error: 'grpc: failed to unmarshal the received message' } as const;

/** Reads field 1 (status) of the first framed HealthCheckResponse; an empty message is 0 (UNKNOWN). */
export function decodeResponse(body: Buffer): { readonly status: number } | { readonly error: string } {
  if (body.length < 5) return { error: 'grpc: received a truncated message frame' };
  if (body.readUInt8(0) !== 0) return { error: 'grpc: compressed messages are not supported' };
  const length = body.readUInt32BE(1);
  if (body.length < 5 + length) return { error: 'grpc: received a truncated message frame' };
  const msg = body.subarray(5, 5 + length);
  let status = 0;
  for (let i = 0; i < msg.length; ) {
    const tag = readVarint(msg, i);
    if (tag === null) return unmarshal;
    const [key, afterTag] = tag;
    const field = readVarint(msg, afterTag);
    if (field === null) return unmarshal;
    const [value, next] = field;
    if (key % 8 === 0) {
      if (Math.floor(key / 8) === 1) status = value;
      i = next;
    } else if (key % 8 === 2) {
      i = next + value; // a length-delimited field we do not know: skip it
    } else {
      return unmarshal;
    }
  }
  return { status };
}
