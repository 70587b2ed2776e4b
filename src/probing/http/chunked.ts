/**
 * A chunked body decoded as Go's net/http/internal chunkedReader and
 * body.readTrailer do, with their error strings. Go reads through a 4096-byte
 * bufio.Reader, which bounds a chunk-size line and the trailer look-ahead.
 */
import { MimeReader, ParseError } from './response-head.ts';

const bufSize = 4096;
const crlfcrlf = Buffer.from('\r\n\r\n');

/** internal/chunked.go parseHexUint. */
function parseHex(v: string): number {
  if (v.length === 0) throw new ParseError('empty hex number for chunk length');
  let n = 0n;
  for (let i = 0; i < v.length; i++) {
    const digit = Number.parseInt(v.charAt(i), 16);
    if (Number.isNaN(digit)) throw new ParseError('invalid byte in chunk length');
    if (i === 16) throw new ParseError('http chunk length too large');
    n = (n << 4n) | BigInt(digit);
  }
  return Number(n);
}

export type ChunkStep =
  | { readonly kind: 'data'; readonly chunk: Buffer; readonly rest: Buffer; readonly chunkEnded: boolean }
  | { readonly kind: 'more'; readonly rest: Buffer } // needs more bytes
  | { readonly kind: 'end'; readonly rest: Buffer };

export class ChunkedDecoder {
  #state: 'size' | 'data' | 'crlf' | 'trailer' = 'size';
  #left = 0;
  #excess = 0;

  /** Consumes what it can of `buf`; throws a ParseError on malformed input. */
  step(buf: Buffer): ChunkStep {
    for (;;) {
      if (this.#state === 'data') {
        if (buf.length === 0) return { kind: 'more', rest: buf };
        const take = Math.min(this.#left, buf.length);
        this.#left -= take;
        if (this.#left === 0) this.#state = 'crlf';
        return { kind: 'data', chunk: buf.subarray(0, take), rest: buf.subarray(take), chunkEnded: this.#left === 0 };
      }
      if (this.#state === 'crlf') {
        if (buf.length < 2) return { kind: 'more', rest: buf };
        if (buf[0] !== 0x0d || buf[1] !== 0x0a) throw new ParseError('malformed chunked encoding');
        buf = buf.subarray(2);
        this.#state = 'size';
        continue;
      }
      if (this.#state === 'trailer') return this.#trailer(buf);
      const eol = buf.indexOf(0x0a);
      if (eol < 0) {
        if (buf.length >= bufSize) throw new ParseError('header line too long');
        return { kind: 'more', rest: buf };
      }
      if (eol >= bufSize) throw new ParseError('header line too long');
      this.#beginChunk(buf.toString('latin1', 0, eol + 1));
      buf = buf.subarray(eol + 1);
    }
  }

  /** The connection ended: what Go reports for a body cut short here. */
  eof(buf: Buffer): ParseError {
    if (this.#state === 'trailer' && buf.length < 2) return new ParseError('http: unexpected EOF reading trailer');
    if (this.#state === 'trailer') return new ParseError('http: suspiciously long trailer after chunked body');
    return new ParseError('unexpected EOF');
  }

  /** chunkedReader.beginChunk for one line that ends in LF. */
  #beginChunk(raw: string): void {
    const cr = raw.indexOf('\r');
    if (cr < 0) throw new ParseError('chunked line ends with bare LF');
    if (cr !== raw.length - 2) throw new ParseError('invalid CR in chunked line');
    const line = raw.slice(0, -2);
    if (line.length >= bufSize) throw new ParseError('header line too long');
    this.#excess += line.length + 2;
    const size = parseHex(line.replace(/[ \t]+$/, '').split(';', 1)[0] ?? '');
    this.#excess = Math.max(this.#excess - 16 - 2 * size, 0);
    if (this.#excess > 16 * 1024) throw new ParseError('chunked encoding contains too much non-data');
    this.#left = size;
    this.#state = size === 0 ? 'trailer' : 'data';
  }

  /** body.readTrailer: a bare CRLF, or a MIME block that must be in sight (4096 bytes). */
  #trailer(buf: Buffer): ChunkStep {
    if (buf.length < 2) return { kind: 'more', rest: buf };
    if (buf[0] === 0x0d && buf[1] === 0x0a) return { kind: 'end', rest: buf.subarray(2) };
    const end = buf.indexOf(crlfcrlf);
    if (end < 0 || end + 4 > bufSize) {
      if (buf.length >= bufSize) throw new ParseError('http: suspiciously long trailer after chunked body');
      return { kind: 'more', rest: buf };
    }
    const reader = new MimeReader();
    const lines = buf.toString('latin1', 0, end + 2).split('\n');
    for (const line of lines) reader.line(line.endsWith('\r') ? line.slice(0, -1) : line);
    return { kind: 'end', rest: buf.subarray(end + 4) };
  }
}
