/**
 * An incremental parser for the one HTTP/1.1 response a probe reads: status
 * line, headers, then a body framed by Content-Length, chunked encoding or
 * the end of the connection. It accepts exactly what a probe needs and turns
 * anything else into a ParseError (which the prober reports as a transport
 * failure, like Go's `malformed HTTP response`).
 */

export class ParseError extends Error {
  override readonly name = 'ParseError';
}

export interface ResponseHead {
  readonly statusCode: number;
  readonly statusMessage: string;
  /** Lower-cased names; repeated headers become arrays, as in node:http. */
  readonly headers: Record<string, string | string[]>;
}

export interface ParserSink {
  onHead(head: ResponseHead): void;
  onBody(chunk: Buffer): void;
  onEnd(): void;
}

/** Go's Transport rejects response headers past 10 MiB; a probe needs far less. */
const maxHeaderBytes = 64 * 1024;
const crlfcrlf = Buffer.from('\r\n\r\n');
const statusLine = /^HTTP\/1\.[01] (\d{3})(?: (.*))?$/;

type BodyMode = { readonly kind: 'none' } | { readonly kind: 'length'; left: number } | { readonly kind: 'chunked' } | { readonly kind: 'close' };

export class ResponseParser {
  readonly #sink: ParserSink;
  #buffer: Buffer = Buffer.alloc(0);
  #state: 'head' | 'body' | 'done' = 'head';
  #body: BodyMode = { kind: 'none' };
  #chunkLeft = -1; // -1: expecting a chunk-size line; -2: expecting the CRLF after a chunk

  constructor(sink: ParserSink) {
    this.#sink = sink;
  }

  get done(): boolean {
    return this.#state === 'done';
  }

  /** True once a complete head was parsed (the body may still be pending). */
  get sawHead(): boolean {
    return this.#state !== 'head';
  }

  push(data: Buffer): void {
    if (this.#state === 'done') return;
    this.#buffer = this.#buffer.length === 0 ? data : Buffer.concat([this.#buffer, data]);
    if (this.#state === 'head') this.#parseHeads();
    if (this.#state === 'body') this.#parseBody();
  }

  /** The peer closed the connection. */
  end(): void {
    if (this.#state === 'done') return;
    if (this.#state === 'body' && this.#body.kind === 'close') {
      this.#finish();
      return;
    }
    throw new ParseError(this.#state === 'head' ? 'EOF' : 'unexpected EOF');
  }

  #parseHeads(): void {
    // Loops to skip 1xx interim responses (100 Continue, 103 Early Hints).
    while (this.#state === 'head') {
      const end = this.#buffer.indexOf(crlfcrlf);
      if (end < 0) {
        if (this.#buffer.length > maxHeaderBytes) throw new ParseError('server response headers exceeded 65536 bytes; aborted');
        return;
      }
      const head = parseHead(this.#buffer.toString('latin1', 0, end));
      this.#buffer = this.#buffer.subarray(end + 4);
      if (head.statusCode >= 100 && head.statusCode < 200 && head.statusCode !== 101) continue;
      this.#body = bodyMode(head);
      this.#state = 'body';
      this.#sink.onHead(head);
    }
  }

  #parseBody(): void {
    const mode = this.#body;
    if (mode.kind === 'none') {
      this.#finish();
    } else if (mode.kind === 'close') {
      this.#emit(this.#buffer);
    } else if (mode.kind === 'length') {
      const take = Math.min(mode.left, this.#buffer.length);
      mode.left -= take;
      this.#emit(this.#buffer.subarray(0, take));
      if (mode.left === 0) this.#finish();
    } else {
      this.#parseChunks();
    }
  }

  #emit(chunk: Buffer): void {
    this.#buffer = this.#buffer.subarray(chunk.length);
    if (chunk.length > 0) this.#sink.onBody(chunk);
  }

  #parseChunks(): void {
    while (this.#state === 'body') {
      if (this.#chunkLeft > 0) {
        const take = Math.min(this.#chunkLeft, this.#buffer.length);
        if (take === 0) return;
        this.#chunkLeft -= take;
        this.#emit(this.#buffer.subarray(0, take));
        if (this.#chunkLeft === 0) this.#chunkLeft = -2;
        continue;
      }
      const eol = this.#buffer.indexOf('\r\n');
      if (eol < 0) {
        if (this.#buffer.length > 4096) throw new ParseError('malformed chunked encoding');
        return;
      }
      const line = this.#buffer.toString('latin1', 0, eol);
      this.#buffer = this.#buffer.subarray(eol + 2);
      if (this.#chunkLeft === -2) {
        if (line !== '') throw new ParseError('malformed chunked encoding');
        this.#chunkLeft = -1;
      } else if (this.#chunkLeft === -1) {
        this.#chunkLeft = parseChunkSize(line);
      } else if (line === '') {
        this.#finish(); // the empty line after the last chunk and any trailers
      }
      // chunkLeft === 0: a trailer line, ignored
    }
  }

  #finish(): void {
    this.#state = 'done';
    this.#sink.onEnd();
  }
}

function parseHead(text: string): ResponseHead {
  const lines = text.split('\r\n');
  const match = statusLine.exec(lines[0] ?? '');
  if (match === null) throw new ParseError(`malformed HTTP response ${JSON.stringify(lines[0] ?? '')}`);
  // Names come from the pod: no prototype, so `constructor` or `__proto__`
  // are ordinary keys (a plain {} would merge with or replace its prototype).
  const headers = Object.create(null) as Record<string, string | string[]>;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const colon = line.indexOf(':');
    if (colon <= 0) throw new ParseError(`malformed MIME header line: ${line}`);
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    const prior = headers[name];
    headers[name] = prior === undefined ? value : Array.isArray(prior) ? [...prior, value] : [prior, value];
  }
  return { statusCode: Number(match[1]), statusMessage: match[2] ?? '', headers };
}

function bodyMode(head: ResponseHead): BodyMode {
  const code = head.statusCode;
  if (code === 204 || code === 304) return { kind: 'none' };
  const te = head.headers['transfer-encoding'];
  if (te !== undefined) {
    const last = (Array.isArray(te) ? te.join(',') : te).split(',').pop()?.trim().toLowerCase();
    if (last === 'chunked') return { kind: 'chunked' };
    return { kind: 'close' };
  }
  const cl = head.headers['content-length'];
  if (cl !== undefined) {
    const values = new Set(Array.isArray(cl) ? cl : [cl]);
    const [value] = values;
    if (values.size !== 1 || value === undefined || !/^\d+$/.test(value)) throw new ParseError(`bad Content-Length ${JSON.stringify(cl)}`);
    const left = Number(value);
    return left === 0 ? { kind: 'none' } : { kind: 'length', left };
  }
  return { kind: 'close' };
}

function parseChunkSize(line: string): number {
  const size = line.split(';', 1)[0]?.trim() ?? '';
  if (!/^[0-9a-fA-F]{1,15}$/.test(size)) throw new ParseError('malformed chunked encoding');
  return Number.parseInt(size, 16);
}
