/**
 * The unary response body read the way grpc-go's client reads it: a 5-byte
 * frame header, then the message, then one more header to prove the stream
 * holds nothing else (recvMsg plus the cardinality check of
 * stream.go csAttempt.recvMsg). Fed as DATA arrives, in constant memory, it
 * reports an error at the byte where grpc-go would fail the call, so the
 * caller can stop reading there: a length prefix above the 4 MiB limit fails
 * before any of the body is read, and a second message fails as it completes.
 * The one exception is a gzip-compressed message (grpc-encoding: gzip, flag
 * 1): grpc-go holds it whole (at most 4 MiB, checked first) and decompresses
 * it at its end, and so does this reader.
 */
import { maxResponseMessageBytes } from './codec.ts';
import { gunzipAsGo } from './gunzip.ts';
import { HealthResponseScanner } from './scanner.ts';
import { grpcCode } from './status-codes.ts';
import type { RpcError } from './status-codes.ts';

export type BodyResult = { readonly status: number } | RpcError;

const internal = (message: string): RpcError => ({ code: grpcCode.internal, message });

export const noMessage = (): RpcError => internal('cardinality violation: received no response message from non-server-streaming RPC');
const anotherMessage = (): RpcError => internal('cardinality violation: expected <EOF> for non server-streaming RPCs, but received another message');

/** rpc_util.go recvMsg: the length is checked as soon as the header is read, before the body. */
const tooLarge = (length: number): RpcError => ({
  code: grpcCode.resourceExhausted,
  message: `grpc: received message larger than max (${length} vs. ${maxResponseMessageBytes})`,
});

export class ResponseReader {
  readonly #header = Buffer.alloc(5);
  #headerFill = 0;
  /** Set while inside a message body. */
  #scanner: HealthResponseScanner | undefined;
  #bodyLeft = 0;
  #messages = 0;
  #first: { readonly status: number } | undefined;
  #decided: RpcError | undefined;
  #sawBytes = false;
  /** The response's grpc-encoding ("" when absent), as grpc-go's RecvCompress(). */
  #encoding = '';
  /** The compressed message being received, when it is gzip: its declared length, filled as it arrives. */
  #compressed: Buffer | undefined;

  /** The grpc-encoding of the response headers; call before the first push. */
  setEncoding(encoding: string | undefined): void {
    this.#encoding = encoding ?? '';
  }

  /**
   * Feeds response DATA. Returns the error grpc-go fails the call with once
   * these bytes are read, if any; after that, further bytes are ignored.
   */
  push(chunk: Uint8Array): RpcError | undefined {
    if (chunk.length > 0) this.#sawBytes = true;
    for (let i = 0; i < chunk.length && this.#decided === undefined; ) {
      i = this.#scanner === undefined ? this.#readHeader(chunk, i) : this.#readBody(chunk, i);
    }
    return this.#decided;
  }

  /** The result once the stream has ended; undefined when no DATA arrived at all. */
  finish(): BodyResult | undefined {
    if (this.#decided !== undefined) return this.#decided;
    if (!this.#sawBytes) return undefined;
    if (this.#first === undefined) return internal('unexpected EOF');
    // Part of a second frame, then the end: counted as another message.
    if (this.#headerFill > 0 || this.#scanner !== undefined) return anotherMessage();
    return this.#first;
  }

  #readHeader(chunk: Uint8Array, at: number): number {
    const n = Math.min(5 - this.#headerFill, chunk.length - at);
    this.#header.set(chunk.subarray(at, at + n), this.#headerFill);
    this.#headerFill += n;
    if (this.#headerFill < 5) return at + n;
    this.#headerFill = 0;
    const length = this.#header.readUInt32BE(1);
    if (length > maxResponseMessageBytes) {
      this.#decided = tooLarge(length);
      return at + n;
    }
    this.#scanner = new HealthResponseScanner(length);
    this.#compressed = this.#header.readUInt8(0) === 1 && this.#encoding === 'gzip' ? Buffer.allocUnsafe(length) : undefined;
    this.#bodyLeft = length;
    if (length === 0) this.#complete();
    return at + n;
  }

  #readBody(chunk: Uint8Array, at: number): number {
    const n = Math.min(this.#bodyLeft, chunk.length - at);
    if (this.#compressed !== undefined) this.#compressed.set(chunk.subarray(at, at + n), this.#compressed.length - this.#bodyLeft);
    else this.#scanner?.push(chunk.subarray(at, at + n));
    this.#bodyLeft -= n;
    if (this.#bodyLeft === 0) this.#complete();
    return at + n;
  }

  /**
   * A whole message was read: payload format (checkRecvPayload), then
   * decompression, then unmarshal, then cardinality, as recv() checks them.
   */
  #complete(): void {
    const flag = this.#header.readUInt8(0);
    let decoded = this.#scanner?.end() ?? null;
    this.#scanner = undefined;
    const compressed = this.#compressed;
    this.#compressed = undefined;
    this.#messages++;
    if (flag === 1) {
      if (this.#encoding === '' || this.#encoding === 'identity') {
        this.#decided = internal('grpc: compressed flag set with identity or empty encoding');
        return;
      }
      if (compressed === undefined) {
        // Only gzip is registered in the kubelet binary.
        this.#decided = internal(`grpc: Decompressor is not installed for grpc-encoding ${JSON.stringify(this.#encoding)}`);
        return;
      }
      const inflated = gunzipAsGo(compressed, maxResponseMessageBytes);
      if ('code' in inflated) {
        this.#decided = inflated;
        return;
      }
      const length = inflated.members.reduce((sum, m) => sum + m.length, 0);
      const scanner = new HealthResponseScanner(length);
      for (const member of inflated.members) scanner.push(member);
      decoded = scanner.end();
    }
    if (flag > 1) this.#decided = internal(`grpc: received unexpected payload format ${flag}`);
    else if (decoded === null) this.#decided = internal('grpc: failed to unmarshal the received message: proto: cannot parse invalid wire-format data');
    else if (this.#messages > 1) this.#decided = anotherMessage();
    else this.#first = decoded;
  }
}

/** The whole body at once (tests, and anything that already holds it). */
export function decodeResponseBody(body: Uint8Array): BodyResult {
  const reader = new ResponseReader();
  reader.push(body);
  return reader.finish() ?? noMessage();
}
