/**
 * A gzip-compressed gRPC message decompressed the way the kubelet's grpc-go
 * does it (rpc_util.go decompress with encoding/gzip, i.e. Go's
 * compress/gzip Reader): members are read one after another (multistream),
 * the output is cut at `limit + 1` bytes so a small "zip bomb" never grows
 * past it, and each failure carries Go's text. The first member's header is
 * read when the decompressor is created (`failed to decompress the
 * message`), everything after it while reading (`failed to read
 * decompressed data`).
 *
 * The deflate data itself goes through zlib (inflateRaw); only its
 * corrupt-input message differs from Go's (Go names a byte offset zlib does
 * not report).
 */
import zlib from 'node:zlib';
import { grpcCode } from './status-codes.ts';
import type { RpcError } from './status-codes.ts';

const flagHeaderCrc = 1 << 1;
const flagExtra = 1 << 2;
const flagName = 1 << 3;
const flagComment = 1 << 4;

/** Go's compress/gzip Reader buffer: a name or comment of 512 bytes or more is an invalid header. */
const maxHeaderString = 512;

const unexpectedEof = 'unexpected EOF';
const invalidHeader = 'gzip: invalid header';

/** Why a member's header cannot be read; 'EOF' only when not one byte of it was there. */
type HeaderRead = { readonly dataAt: number } | { readonly error: string };

/** The 10 fixed bytes: magic, method 8 (deflate). */
function fixedHeader(src: Uint8Array, at: number): string | undefined {
  const left = src.length - at;
  if (left === 0) return 'EOF';
  if (left < 10) return unexpectedEof;
  if (src[at] !== 0x1f || src[at + 1] !== 0x8b || src[at + 2] !== 8) return invalidHeader;
  return undefined;
}

const u16 = (src: Uint8Array, at: number): number => (src[at] ?? 0) | ((src[at + 1] ?? 0) << 8);

/** FEXTRA: a 2-byte length, then that many bytes. */
function skipExtra(src: Uint8Array, at: number): HeaderRead {
  if (src.length - at < 2) return { error: unexpectedEof };
  const end = at + 2 + u16(src, at);
  return end > src.length ? { error: unexpectedEof } : { dataAt: end };
}

/** FNAME / FCOMMENT: NUL-terminated, shorter than Go's 512-byte buffer. */
function skipString(src: Uint8Array, at: number): HeaderRead {
  const end = src.indexOf(0, at);
  if ((end === -1 ? src.length : end) - at >= maxHeaderString) return { error: invalidHeader };
  return end === -1 ? { error: unexpectedEof } : { dataAt: end + 1 };
}

/** FHCRC: the low 16 bits of the CRC-32 of the header so far. */
function checkHeaderCrc(src: Uint8Array, start: number, at: number): HeaderRead {
  if (src.length - at < 2) return { error: unexpectedEof };
  return u16(src, at) === (zlib.crc32(src.subarray(start, at)) & 0xffff) ? { dataAt: at + 2 } : { error: invalidHeader };
}

function readHeader(src: Uint8Array, start: number): HeaderRead {
  const fixed = fixedHeader(src, start);
  if (fixed !== undefined) return { error: fixed };
  const flags = src[start + 3] ?? 0;
  const steps: readonly (readonly [number, (at: number) => HeaderRead])[] = [
    [flagExtra, (at) => skipExtra(src, at)],
    [flagName, (at) => skipString(src, at)],
    [flagComment, (at) => skipString(src, at)],
    [flagHeaderCrc, (at) => checkHeaderCrc(src, start, at)],
  ];
  let read: HeaderRead = { dataAt: start + 10 };
  for (const [flag, step] of steps) {
    if ((flags & flag) !== 0 && 'dataAt' in read) read = step(read.dataAt);
  }
  return read;
}

const failed = (message: string): RpcError => ({ code: grpcCode.internal, message });

/** The decompressed message (one buffer per gzip member), or the status error grpc-go fails the call with. */
export function gunzipAsGo(src: Uint8Array, limit: number): { readonly members: readonly Buffer[] } | RpcError {
  const first = readHeader(src, 0);
  if ('error' in first) return failed(`grpc: failed to decompress the message: ${first.error}`);
  const readError = (message: string): RpcError => failed(`grpc: failed to read decompressed data: ${message}`);
  const out: Buffer[] = [];
  let produced = 0;
  let at = first.dataAt;
  for (;;) {
    let inflated: { buffer: Buffer; engine: zlib.InflateRaw };
    try {
      inflated = zlib.inflateRawSync(src.subarray(at), { info: true, maxOutputLength: limit + 1 - produced }) as unknown as typeof inflated;
    } catch (err: unknown) {
      const code = (err as { code?: unknown }).code;
      if (code === 'ERR_BUFFER_TOO_LARGE') return tooLarge(limit);
      if (code === 'Z_BUF_ERROR') return readError(unexpectedEof);
      return readError(`flate: corrupt input (${err instanceof Error ? err.message : String(err)})`);
    }
    out.push(inflated.buffer);
    produced += inflated.buffer.length;
    if (produced > limit) return tooLarge(limit);
    at += inflated.engine.bytesWritten;
    // The trailer: CRC-32 and size (mod 2^32) of this member's output.
    if (src.length - at < 8) return readError(unexpectedEof);
    const view = Buffer.from(src.buffer, src.byteOffset + at, 8);
    const crc = zlib.crc32(inflated.buffer);
    if (view.readUInt32LE(0) !== crc || view.readUInt32LE(4) !== inflated.buffer.length % 2 ** 32) return readError('gzip: invalid checksum');
    at += 8;
    const next = readHeader(src, at);
    if ('error' in next) return next.error === 'EOF' ? { members: out } : readError(next.error);
    at = next.dataAt;
  }
}

function tooLarge(limit: number): RpcError {
  return { code: grpcCode.resourceExhausted, message: `grpc: received message after decompression larger than max ${limit}` };
}
