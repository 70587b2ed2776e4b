/**
 * HealthCheckResponse decoding fed byte by byte, in constant memory: the
 * message can be up to 4 MiB (grpc-go's receive limit) and arrive in any
 * number of DATA frames, yet nothing of it is kept but the parse state and
 * the last `status`. Same rules as decodeHealthCheckResponse: field 1
 * `status` (varint, last occurrence wins), unknown fields of wire types
 * 0/1/2/5 skipped, anything else (groups, field number 0, truncation) invalid.
 */

type Phase = 'tag' | 'value' | 'length' | 'skip';

/** Go's int32 conversion of an enum varint (proto3 enums are open). */
function toInt32(v: number): number {
  const low = v % 2 ** 32;
  return low >= 2 ** 31 ? low - 2 ** 32 : low;
}

export class HealthResponseScanner {
  #phase: Phase = 'tag';
  #invalid = false;
  /** Bytes of the message not yet seen: a length-delimited field may not run past them. */
  #left: number;
  #varint = 0;
  #varintBytes = 0;
  #key = 0;
  #skip = 0;
  #status = 0;

  constructor(messageLength: number) {
    this.#left = messageLength;
  }

  /** Feeds message bytes (never more than the length given to the constructor). */
  push(bytes: Uint8Array): void {
    for (let i = 0; i < bytes.length && !this.#invalid; i++) {
      this.#left--;
      if (this.#phase === 'skip') {
        // Skip a whole run at once: unknown fields cost no per-byte work.
        const n = Math.min(this.#skip, bytes.length - i);
        this.#skip -= n;
        this.#left -= n - 1;
        i += n - 1;
        if (this.#skip === 0) this.#phase = 'tag';
        continue;
      }
      this.#byte(bytes[i] ?? 0);
    }
  }

  /** The decoded message once every byte was pushed, or null if it is not valid protobuf. */
  end(): { readonly status: number } | null {
    return this.#invalid || this.#phase !== 'tag' || this.#varintBytes > 0 ? null : { status: this.#status };
  }

  #byte(b: number): void {
    if (this.#varintBytes === 10) {
      this.#invalid = true; // a varint longer than 10 bytes
      return;
    }
    this.#varint += (b & 0x7f) * 2 ** (7 * this.#varintBytes);
    this.#varintBytes++;
    if ((b & 0x80) !== 0) return;
    const value = this.#varint;
    this.#varint = 0;
    this.#varintBytes = 0;
    if (this.#phase === 'tag') this.#tag(value);
    else if (this.#phase === 'value') this.#value(value);
    else this.#length(value);
  }

  #tag(key: number): void {
    if (key < 8) {
      this.#invalid = true;
      return;
    }
    this.#key = key;
    switch (key % 8) {
      case 0:
        this.#phase = 'value';
        return;
      case 1:
        this.#skipBytes(8);
        return;
      case 2:
        this.#phase = 'length';
        return;
      case 5:
        this.#skipBytes(4);
        return;
      default:
        this.#invalid = true; // groups (deprecated) and invalid wire types
    }
  }

  #value(value: number): void {
    if (Math.floor(this.#key / 8) === 1) this.#status = toInt32(value);
    this.#phase = 'tag';
  }

  #length(length: number): void {
    this.#skipBytes(length);
  }

  #skipBytes(n: number): void {
    if (n > this.#left) {
      this.#invalid = true;
      return;
    }
    this.#skip = n;
    this.#phase = n === 0 ? 'tag' : 'skip';
  }
}
