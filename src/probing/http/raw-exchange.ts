/**
 * One plain-HTTP/1.1 request and response on Node's TCP handle (ADR 0025):
 * what ProbeDispatcher's Exchange and `exchange()` do together for an
 * `http://` hop, without net.Socket, streams, the undici handler protocol or
 * a per-request URL parse. Same bytes on the wire, same parser, same
 * results and error values; `http-prober.test.ts` runs every case on both.
 *
 * Reads land in one shared buffer (`useUserBuffer`) and are copied out once,
 * so a read allocates only the bytes it got. The deadline and cancellation
 * belong to the probe (it spans redirects); it calls `abort()`.
 */
import { joinHostPort } from '../request.ts';
import { errnoError, hostPortError } from '../rawtcp/index.ts';
import type { ConnectReq, RawTcp, TcpHandle, WriteReq } from '../rawtcp/index.ts';
import type { HopResult } from './exchange.ts';
import { ResponseParser } from './response-parser.ts';
import type { ResponseHead } from './response-parser.ts';

export interface RawHop {
  /** The address connected to: an IP literal (unbracketed) and port. */
  readonly hostname: string;
  readonly port: number;
  /** The whole request head, byte string (one char per byte). */
  readonly head: string;
  readonly bodyLimit: number;
  /** Decides at head time whether the body is read (false: the hop ends at once). */
  readonly wantBody: (statusCode: number, location: string | undefined) => boolean;
}

/** Where every raw read lands before it is copied out (node:net reads up to 64 KiB at a time too). */
const readBuffer = Buffer.allocUnsafe(64 * 1024);
const emptyBody = Buffer.alloc(0);

export class RawHttpExchange {
  readonly #raw: RawTcp;
  readonly #hop: RawHop;
  readonly #resolve: (result: HopResult) => void;
  readonly #parser: ResponseParser;
  #handle: TcpHandle | undefined;
  #connected = false;
  #settled = false;
  #statusCode = 0;
  #location: string | undefined;
  #chunks: Buffer[] = [];
  #size = 0;

  constructor(raw: RawTcp, hop: RawHop, resolve: (result: HopResult) => void) {
    this.#raw = raw;
    this.#hop = hop;
    this.#resolve = resolve;
    this.#parser = new ResponseParser(this);
  }

  start(): void {
    const { hostname, port } = this.#hop;
    const handle = this.#raw.newHandle();
    this.#handle = handle;
    handle.owner = this;
    const connect = this.#raw.newConnectReq();
    connect.owner = this;
    connect.oncomplete = onConnect;
    const err = hostname.includes(':') ? handle.connect6(connect, hostname, port) : handle.connect(connect, hostname, port);
    if (err !== 0) this.#fail(hostPortError(err, 'connect', hostname, port, this.#localAddress() || undefined));
  }

  /** Ends the hop with `reason` (the probe's deadline or cancellation) unless it already ended. */
  abort(reason: Error): void {
    if (this.#settled) return;
    this.#settle({ kind: 'error', phase: this.#statusCode === 0 ? 'headers' : 'body', connecting: !this.#connected, error: reason });
  }

  connected(status: number): void {
    const handle = this.#handle;
    if (this.#settled || handle === undefined) return; // closed first: the connect was cancelled
    if (status !== 0) {
      this.#fail(hostPortError(status, 'connect', this.#hop.hostname, this.#hop.port));
      return;
    }
    this.#connected = true;
    handle.useUserBuffer(readBuffer);
    handle.onread = onRead;
    let err = handle.readStart();
    if (err === 0) {
      const write = this.#raw.newWriteReq();
      write.handle = handle;
      write.owner = this;
      write.oncomplete = onWritten;
      // A write the kernel did not take at once completes later (onWritten); Node holds the request until then.
      err = handle.writeLatin1String(write, this.#hop.head);
      if (err !== 0) this.#fail(errnoError(err, 'write'));
      return;
    }
    this.#fail(errnoError(err, 'read'));
  }

  written(status: number): void {
    if (status !== 0) this.#fail(errnoError(status, 'write'));
  }

  read(): void {
    if (this.#settled) return;
    const n = this.#raw.readResult();
    try {
      if (n > 0) {
        const data = Buffer.allocUnsafe(n);
        readBuffer.copy(data, 0, 0, n);
        this.#parser.push(data);
      } else if (n === this.#raw.eof) {
        this.#parser.end();
      } else if (n < 0) {
        this.#fail(errnoError(n, 'read'));
      }
    } catch (err: unknown) {
      this.#refused(err instanceof Error ? err : new Error(String(err)));
    }
  }

  /** The parser refused what it read (or the end of it): its error as is, as the Exchange's guard reports it. */
  #refused(err: Error): void {
    if (this.#settled) return;
    this.#settle({ kind: 'error', phase: this.#statusCode === 0 ? 'headers' : 'body', error: err });
  }

  // ParserSink: the parser calls these while it reads.
  onHead(head: ResponseHead): void {
    const code = head.statusCode;
    if (code >= 100 && code < 200 && code !== 101) return; // an interim 1xx: the final response follows
    this.#statusCode = code;
    const loc = head.headers['location'];
    this.#location = Array.isArray(loc) ? loc[0] : loc;
    if (!this.#hop.wantBody(code, this.#location)) this.#respond();
  }

  onBody(chunk: Buffer): void {
    if (this.#settled) return;
    const room = this.#hop.bodyLimit - this.#size;
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.#chunks.push(part);
    this.#size += part.length;
    if (this.#size >= this.#hop.bodyLimit) this.#respond();
  }

  onEnd(): void {
    this.#respond();
  }

  wantsMore(): boolean {
    return !this.#settled;
  }

  #respond(): void {
    if (this.#settled) return;
    const body = this.#size === 0 ? emptyBody : this.#chunks.length === 1 ? (this.#chunks[0] ?? emptyBody) : Buffer.concat(this.#chunks, this.#size);
    this.#settle({ kind: 'response', statusCode: this.#statusCode, location: this.#location, body });
  }

  /**
   * A socket error, as the Exchange reports it: a head cut short is the
   * parser's error; a reset after the connect names both ends, as Go does.
   */
  #fail(err: Error): void {
    if (this.#settled) return;
    const cut = this.#parser.cutShort();
    this.#settle({ kind: 'error', phase: this.#statusCode === 0 ? 'headers' : 'body', error: cut ?? this.#readError(err) });
  }

  #readError(err: Error): Error {
    if ((err as NodeJS.ErrnoException).code !== 'ECONNRESET' || !this.#connected) return err;
    const local = this.#localAddress();
    if (local === '') return err;
    return new Error(`read tcp ${local}->${joinHostPort(this.#hop.hostname, this.#hop.port)}: read: connection reset by peer`);
  }

  /** The local address, asked of the kernel only when an error message needs it (node:net asks on every connect). */
  #localAddress(): string {
    const out: { address?: string; port?: number } = {};
    if (this.#handle === undefined || this.#handle.getsockname(out) !== 0 || out.address === undefined) return '';
    return joinHostPort(out.address, out.port ?? 0);
  }

  #settle(result: HopResult): void {
    this.#settled = true;
    this.#parser.release();
    const handle = this.#handle;
    if (handle !== undefined) {
      this.#handle = undefined;
      // Node's onread setter takes functions only (it aborts the process on null).
      handle.onread = ignoreRead;
      handle.close();
    }
    this.#chunks = [];
    this.#resolve(result);
  }
}

function onConnect(this: ConnectReq, status: number): void {
  (this.owner as RawHttpExchange).connected(status);
}

function onRead(this: TcpHandle): void {
  (this.owner as RawHttpExchange | undefined)?.read();
}

function ignoreRead(): void {
  // a read racing the close
}

function onWritten(this: WriteReq, status: number): void {
  (this.owner as RawHttpExchange).written(status);
}

