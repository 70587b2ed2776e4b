/**
 * The response head as Go's net/http reads it (ReadResponse, textproto's
 * ReadMIMEHeader, transfer.go's readTransfer): the same lines accepted, the
 * same rejected, the same error strings. Lines are latin1 strings (one char
 * per byte) without their line end: Go's bufio ReadLine ends a line at LF and
 * drops one CR before it, so bare-LF heads are accepted.
 */
import { goQuote, goQuoteList } from './go-text.ts';

export class ParseError extends Error {
  override readonly name = 'ParseError';
}

export interface StatusLine {
  readonly statusCode: number;
  readonly statusMessage: string;
  readonly protoMajor: number;
  readonly protoMinor: number;
}

/** net/http ReadResponse's first line. */
export function parseStatusLine(line: string): StatusLine {
  const space = line.indexOf(' ');
  if (space < 0) throw new ParseError(`malformed HTTP response ${goQuote(line)}`);
  const proto = line.slice(0, space);
  const status = line.slice(space + 1).replace(/^ +/, '');
  const code = status.split(' ', 1)[0] ?? '';
  // strconv.Atoi: an optional sign then decimal digits; a negative code is refused.
  if (code.length !== 3 || !/^[+-]?\d+$/.test(code) || code.startsWith('-')) {
    throw new ParseError(`malformed HTTP status code ${goQuote(code)}`);
  }
  const version = parseHttpVersion(proto);
  if (version === undefined) throw new ParseError(`malformed HTTP version ${goQuote(proto)}`);
  const reason = status.slice(code.length + 1);
  return { statusCode: Number(code), statusMessage: reason, protoMajor: version[0], protoMinor: version[1] };
}

/** net/http ParseHTTPVersion: `HTTP/X.Y` with one digit each (so HTTP/2.0 and HTTP/0.9 pass). */
function parseHttpVersion(proto: string): readonly [number, number] | undefined {
  const m = /^HTTP\/(\d)\.(\d)$/.exec(proto);
  return m === null ? undefined : [Number(m[1]), Number(m[2])];
}

/** textproto's trim: spaces and tabs at both ends. */
function trimOws(s: string): string {
  const first = s.charCodeAt(0);
  const last = s.charCodeAt(s.length - 1);
  if (first !== 0x20 && first !== 0x09 && last !== 0x20 && last !== 0x09) return s;
  return s.replace(/^[ \t]+|[ \t]+$/g, '');
}

/** textproto canonicalMIMEHeaderKey's validity check: token bytes, spaces allowed (the key is then kept as is). */
const validKey = /^[!#$%&'*+\-.^_`|~0-9A-Za-z ]+$/;

/** textproto validHeaderValueByte: any byte but the controls other than HTAB (bytes >= 0x80 pass). */
function validValue(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09) || c === 0x7f) return false;
  }
  return true;
}

/**
 * textproto's ReadMIMEHeader fed one line at a time: continuation lines
 * (starting with a space or tab) are joined with one space, each header is
 * checked once it is complete, and the block ends at an empty line. Header
 * names are lower-cased; a name with a space in it stays unmatched by any
 * lookup, as Go leaves it uncanonicalised.
 */
export class MimeReader {
  readonly headers = Object.create(null) as Record<string, string | string[]>;
  #pending: string | undefined;
  #first = true;

  /** Takes one line; true when it was the empty line that ends the block. */
  line(line: string): boolean {
    const folded = line.startsWith(' ') || line.startsWith('\t');
    if (this.#first && folded) {
      // Go reads this line with an 80-byte limit to quote it.
      throw new ParseError(line.length > 80 ? 'message too large' : `malformed MIME header initial line: ${goQuote(line)}`);
    }
    this.#first = false;
    if (folded && this.#pending !== undefined) {
      this.#pending += ` ${trimOws(line)}`;
      return false;
    }
    this.flush();
    if (line === '') return true;
    if (!line.includes(':')) throw new ParseError(`malformed MIME header: missing colon: ${goQuote(line)}`);
    this.#pending = trimOws(line);
    return false;
  }

  /** Checks and stores the header being read, if any (also what Go does before hitting EOF). */
  flush(): void {
    const kv = this.#pending;
    if (kv === undefined) return;
    this.#pending = undefined;
    const colon = kv.indexOf(':');
    const key = kv.slice(0, colon);
    const value = kv.slice(colon + 1);
    if (!validKey.test(key) || !validValue(value)) throw new ParseError(`malformed MIME header line: ${goQuote(kv)}`);
    const name = key.toLowerCase();
    const v = value.replace(/^[ \t]+/, '');
    const prior = this.headers[name];
    if (prior === undefined) this.headers[name] = v;
    else if (Array.isArray(prior)) prior.push(v); // in place: a copy per repeat is quadratic in a hostile head's lines
    else this.headers[name] = [prior, v];
  }
}

export type BodyMode = { readonly kind: 'none' } | { readonly kind: 'length'; left: number } | { readonly kind: 'chunked' } | { readonly kind: 'close' };

function values(headers: Record<string, string | string[]>, name: string): readonly string[] | undefined {
  const v = headers[name];
  return v === undefined ? undefined : Array.isArray(v) ? v : [v];
}

/** textproto.TrimString: ASCII whitespace at both ends. */
function trimAscii(s: string): string {
  return s.replace(/^[ \t\n\r]+|[ \t\n\r]+$/g, '');
}

/** transfer.go parseContentLength: ParseUint(…, 10, 63) of the trimmed value. */
function contentLength(raw: string): number {
  const cl = trimAscii(raw);
  if (cl === '') throw new ParseError(`invalid empty Content-Length ${goQuote(cl)}`);
  if (!/^\d+$/.test(cl) || BigInt(cl) >= 2n ** 63n) throw new ParseError(`bad Content-Length ${goQuote(cl)}`);
  return Number(cl);
}

/** transfer.go parseTransferEncoding: HTTP/1.1 and later only; exactly one value, `chunked` in any case. */
function isChunked(status: StatusLine, headers: Record<string, string | string[]>): boolean {
  const te = values(headers, 'transfer-encoding');
  if (te === undefined) return false;
  delete headers['transfer-encoding'];
  if (status.protoMajor < 1 || (status.protoMajor === 1 && status.protoMinor < 1)) return false;
  if (te.length !== 1) throw new ParseError(`too many transfer encodings: ${goQuoteList(te)}`);
  const only = te[0] ?? '';
  if (only.toLowerCase() !== 'chunked') throw new ParseError(`unsupported transfer encoding: ${goQuote(only)}`);
  return true;
}

/** transfer.go readTransfer and fixLength for a response to GET: how the body is framed. */
export function bodyMode(status: StatusLine, headers: Record<string, string | string[]>): BodyMode {
  const chunked = isChunked(status, headers);
  const lengths = values(headers, 'content-length');
  let length = -1;
  if (lengths !== undefined) {
    const first = trimAscii(lengths[0] ?? '');
    if (lengths.some((v) => trimAscii(v) !== first)) {
      throw new ParseError(`http: message cannot contain multiple Content-Length headers; got ${goQuoteList(lengths)}`);
    }
    length = contentLength(first);
  }
  const code = status.statusCode;
  if ((code >= 100 && code < 200) || code === 204 || code === 304) return { kind: 'none' };
  if (chunked) return { kind: 'chunked' };
  if (length === 0) return { kind: 'none' };
  if (length > 0) return { kind: 'length', left: length };
  return { kind: 'close' };
}
