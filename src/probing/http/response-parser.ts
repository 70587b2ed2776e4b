/**
 * An incremental parser for the one HTTP/1.x response a probe reads, with Go
 * net/http's rules (see response-head.ts and chunked.ts): what Go's client
 * accepts is accepted, what it refuses becomes a ParseError with Go's text.
 * The prober wraps head errors as Go's transport does
 * (`net/http: HTTP/1.x transport connection broken: …`) and reports body
 * errors bare, as the kubelet does for a failed body read.
 */
import { sharedHeadBudget } from '../head-budget/index.ts';
import type { HeadBudget, HeadLease } from '../head-budget/index.ts';
import { ChunkedDecoder } from './chunked.ts';
import { bodyMode, MimeReader, ParseError, parseStatusLine } from './response-head.ts';
import type { BodyMode, StatusLine } from './response-head.ts';

export { ParseError } from './response-head.ts';

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
  /** False once the consumer stopped reading (its body cap was reached): Go's reader is not asked for more. */
  wantsMore?(): boolean;
}

/** Shared by every parser: an empty buffer is never written to. */
const noBytes = Buffer.alloc(0);

/** Go's Transport default MaxResponseHeaderBytes (the kubelet's transport leaves it unset). */
export const maxHeaderBytes = 10 << 20;

/**
 * What a parsed header line costs beyond its bytes (its strings and its slot
 * in the header map), counted against the head budget: 10 MiB of `a:b` lines
 * are 2.6 million lines, far more memory than bytes.
 */
export const headLineCost = 64;

export class ResponseParser {
  readonly #sink: ParserSink;
  #buffer: Buffer = noBytes;
  /** Bytes of a head line still without its LF, kept apart so a long line costs no repeated copies. */
  #partial: Buffer[] = [];
  #partialBytes = 0;
  #state: 'head' | 'body' | 'done' = 'head';
  #status: StatusLine | undefined;
  #mime = new MimeReader();
  /** All head bytes read so far, interim (1xx) heads included, as Go's read limit counts them. */
  #headBytes = 0;
  #body: BodyMode = { kind: 'none' };
  /** Made when a chunked body starts (most probe responses have a Content-Length). */
  #chunked: ChunkedDecoder | undefined;
  /** Head lines parsed so far (their cost counts, headLineCost). */
  #lines = 0;
  readonly #budget: HeadBudget;
  /** Drawn from the shared head budget once the head outgrows a probe's free bytes (ADR 0056). */
  #lease: HeadLease | undefined;

  constructor(sink: ParserSink, budget: HeadBudget = sharedHeadBudget) {
    this.#sink = sink;
    this.#budget = budget;
  }

  /**
   * Gives the head's bytes back to the shared budget: the exchange calls it
   * when it ends, however it ends (the parsed headers live until then).
   */
  release(): void {
    this.#lease?.release();
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
    if (this.#state === 'head' && !data.includes(0x0a)) {
      this.#partial.push(data);
      this.#partialBytes += data.length;
      this.#checkHeadLimit(0);
      this.#checkBudget();
      return;
    }
    this.#append(data);
    if (this.#state === 'head') {
      this.#parseHeads(false);
      this.#checkBudget();
    }
    if (this.#state === 'body') this.#parseBody();
  }

  /** The peer closed the connection. */
  end(): void {
    if (this.#state === 'done') return;
    this.#append(noBytes);
    if (this.#state === 'head') {
      if (this.#status === undefined && this.#headBytes === 0 && this.#buffer.length === 0) throw new ParseError('EOF');
      // Go's ReadLine hands out a last line without its LF at EOF.
      this.#parseHeads(true);
      this.#mime.flush();
      throw new ParseError('unexpected EOF');
    }
    if (this.#body.kind === 'close') {
      this.#finish();
      return;
    }
    if (this.#body.kind === 'chunked') throw this.#decoder().eof(this.#buffer);
    throw new ParseError('unexpected EOF');
  }

  /**
   * The connection failed (reset): the error Go reports instead, if any. Go's
   * ReadLine hands out the bytes of an unfinished head line before the read
   * error, and the next read sees only an end of file.
   */
  cutShort(): ParseError | undefined {
    if (this.#state !== 'head' || this.#buffer.length + this.#partialBytes === 0) return undefined;
    try {
      this.end();
    } catch (err: unknown) {
      if (err instanceof ParseError) return err;
    }
    return undefined;
  }

  #append(data: Buffer): void {
    if (this.#partialBytes > 0) {
      this.#partial.push(data);
      data = Buffer.concat([this.#buffer, ...this.#partial]);
      this.#partial = [];
      this.#partialBytes = 0;
    } else if (this.#buffer.length > 0) {
      data = Buffer.concat([this.#buffer, data]);
    }
    this.#buffer = data;
  }

  #checkHeadLimit(extra: number): void {
    if (this.#headBytes + this.#buffer.length + this.#partialBytes + extra > maxHeaderBytes) {
      throw new ParseError(`net/http: server response headers exceeded ${maxHeaderBytes} bytes; aborted`);
    }
  }

  /**
   * The head held so far (bytes read, and what its parsed lines cost) must fit
   * in a probe's free bytes plus what the shared budget can give; otherwise
   * the probe fails as a head over Go's limit does, with the limit it had.
   */
  #checkBudget(): void {
    const held = this.#headBytes + this.#buffer.length + this.#partialBytes + this.#lines * headLineCost;
    if (held <= this.#budget.freeBytesPerProbe) return;
    this.#lease ??= this.#budget.lease();
    if (this.#lease.hold(held)) return;
    const limit = this.#budget.freeBytesPerProbe + this.#lease.charged + this.#budget.capacityBytes - this.#budget.heldBytes;
    this.#lease.release();
    throw new ParseError(`net/http: server response headers exceeded ${limit} bytes; aborted (outprobe's response-head budget of ${this.#budget.capacityBytes} bytes for probes in flight is spent)`);
  }

  #parseHeads(atEof: boolean): void {
    while (this.#state === 'head') {
      const eol = this.#buffer.indexOf(0x0a);
      if (eol < 0 && !(atEof && this.#buffer.length > 0)) {
        this.#checkHeadLimit(0);
        return;
      }
      const used = eol < 0 ? this.#buffer.length : eol + 1;
      if (this.#headBytes + used > maxHeaderBytes) this.#checkHeadLimit(used);
      let line = this.#buffer.toString('latin1', 0, eol < 0 ? used : eol);
      if (eol >= 0 && line.endsWith('\r')) line = line.slice(0, -1);
      this.#buffer = this.#buffer.subarray(used);
      this.#headBytes += used;
      this.#lines++;
      // Per line, not per read: a 64 KiB read of tiny lines is thousands of them to parse.
      if (this.#headBytes + this.#lines * headLineCost > this.#budget.freeBytesPerProbe) this.#checkBudget();
      this.#headLine(line);
    }
  }

  #headLine(line: string): void {
    if (this.#status === undefined) {
      this.#status = parseStatusLine(line);
      return;
    }
    if (!this.#mime.line(line)) return;
    const status = this.#status;
    const headers = this.#mime.headers;
    this.#status = undefined;
    this.#mime = new MimeReader();
    const mode = bodyMode(status, headers);
    // Interim responses (1xx but 101) are skipped; the final one follows.
    if (status.statusCode >= 100 && status.statusCode < 200 && status.statusCode !== 101) return;
    this.#body = mode;
    this.#state = 'body';
    this.#sink.onHead({ statusCode: status.statusCode, statusMessage: status.statusMessage, headers });
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

  #decoder(): ChunkedDecoder {
    this.#chunked ??= new ChunkedDecoder();
    return this.#chunked;
  }

  #emit(chunk: Buffer): void {
    this.#buffer = this.#buffer.subarray(chunk.length);
    if (chunk.length > 0) this.#sink.onBody(chunk);
  }

  /**
   * Go's chunkedReader.Read goes on, in the same call, past the end of a chunk
   * to the CRLF and the next chunk header when they are already buffered, and
   * an error there is returned with (and wins over) the chunk's data; but it
   * never reads past what its caller asked for (the kubelet's 10 KiB cap). So
   * the last byte of a chunk is handed out only once what follows it in the
   * buffer was checked, and only if the sink still wants data after the rest
   * of the chunk: a bad chunk header right at the cap is an error, one just
   * past the cap is not, as for the kubelet.
   */
  #parseChunks(): void {
    let held: Buffer | undefined;
    while (this.#state === 'body') {
      const step = this.#decoder().step(this.#buffer);
      this.#buffer = step.rest;
      if (held !== undefined && !this.#deliver(held)) return;
      held = undefined;
      if (step.kind === 'more') return;
      if (step.kind === 'end') {
        this.#finish();
        return;
      }
      const chunk = step.chunk;
      const cut = step.chunkEnded ? chunk.length - 1 : chunk.length;
      if (cut > 0 && !this.#deliver(chunk.subarray(0, cut))) return;
      if (step.chunkEnded) held = chunk.subarray(cut);
    }
  }

  /** Hands a body chunk to the sink; false once the sink wants no more. */
  #deliver(chunk: Buffer): boolean {
    this.#sink.onBody(chunk);
    return this.#sink.wantsMore?.() !== false;
  }

  #finish(): void {
    this.#state = 'done';
    this.#lease?.release();
    this.#sink.onEnd();
  }
}
