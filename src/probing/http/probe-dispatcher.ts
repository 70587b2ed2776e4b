import net from 'node:net';
import tls from 'node:tls';
import { Dispatcher } from 'undici';
import { h2Exchange } from './h2.ts';
import type { H2Exchange } from './h2.ts';
import { joinHostPort } from '../request.ts';
import { headerProblem } from './headers.ts';
import { http1HostLine, validHostHeader } from './host-header.ts';
import { RecordTap } from './record-tap.ts';
import { ParseError, ResponseParser } from './response-parser.ts';
import type { ResponseHead } from './response-parser.ts';

/**
 * An undici Dispatcher specialised for probes: one fresh connection per
 * request, HTTP/1.1, the caller's request line and header lines written as
 * given (byte strings: Latin-1), no pooling, no proxy, TLS without verification and without SNI (the target is always an IP), request bytes
 * written in one syscall. It implements only what probes use (GET without a
 * body) and the v2 handler API (onRequestStart, onResponseStart, ...), so the
 * prober code runs unchanged on an undici Agent too (see ADR 0001).
 */
export class ProbeDispatcher extends Dispatcher {
  #closed = false;
  readonly #live = new Set<Exchange>();
  readonly #tlsHandshakeTimeoutMs: number;
  readonly #alpn: string[];

  /**
   * @param options.tlsHandshakeTimeoutMs Go's TLSHandshakeTimeout in the kubelet's transport. @default 10000
   * @param options.http2 Offer `h2` before `http/1.1` in TLS ALPN and speak HTTP/2 when the
   *   server picks it, as the kubelet's transport does unless DISABLE_HTTP2 is set (ADR 0010). @default true
   */
  constructor(options: { readonly tlsHandshakeTimeoutMs?: number; readonly http2?: boolean } = {}) {
    super();
    this.#tlsHandshakeTimeoutMs = options.tlsHandshakeTimeoutMs ?? 10_000;
    this.#alpn = options.http2 === false ? ['http/1.1'] : ['h2', 'http/1.1'];
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const exchange = new Exchange(options, handler, { handshakeMs: this.#tlsHandshakeTimeoutMs, alpn: this.#alpn }, () => this.#live.delete(exchange));
    if (this.#closed) {
      exchange.fail(new Error('dispatcher is closed'));
      return false;
    }
    this.#live.add(exchange);
    exchange.start();
    return true;
  }

  override close(callback: () => void): void;
  override close(): Promise<void>;
  override close(callback?: () => void): Promise<void> | undefined {
    this.#closed = true;
    if (callback) {
      callback();
      return undefined;
    }
    return Promise.resolve();
  }

  override destroy(err: Error | null, callback: () => void): void;
  override destroy(callback: () => void): void;
  // eslint-disable-next-line @typescript-eslint/unified-signatures -- mirrors undici's overloads
  override destroy(err: Error | null): Promise<void>;
  override destroy(): Promise<void>;
  override destroy(a?: Error | null | (() => void), b?: () => void): Promise<void> | undefined {
    this.#closed = true;
    const reason = a instanceof Error ? a : new Error('dispatcher destroyed');
    for (const exchange of this.#live) exchange.fail(reason);
    const callback = typeof a === 'function' ? a : b;
    if (callback) {
      callback();
      return undefined;
    }
    return Promise.resolve();
  }
}

class Exchange implements Dispatcher.DispatchController {
  readonly #options: Dispatcher.DispatchOptions;
  readonly #handler: Dispatcher.DispatchHandler;
  readonly #handshakeMs: number;
  readonly #alpn: string[];
  readonly #onDone: () => void;
  #socket: net.Socket | undefined;
  #h2: H2Exchange | undefined;
  #timer: NodeJS.Timeout | undefined;
  #finished = false;
  #paused = false;
  #reason: Error | null = null;
  /** Handed to onRequestStart: `connecting` is true until the request can be written. */
  readonly #context = { connecting: true };
  readonly #parser = new ResponseParser({
    onHead: (head: ResponseHead) => this.#handler.onResponseStart?.(this, head.statusCode, head.headers, head.statusMessage),
    onBody: (chunk: Buffer) => this.#handler.onResponseData?.(this, chunk),
    wantsMore: () => !this.#finished,
    onEnd: () => {
      this.#settle();
      this.#handler.onResponseEnd?.(this, {});
    },
  });

  constructor(
    options: Dispatcher.DispatchOptions,
    handler: Dispatcher.DispatchHandler,
    transport: { readonly handshakeMs: number; readonly alpn: string[] },
    onDone: () => void,
  ) {
    this.#options = options;
    this.#handler = handler;
    this.#handshakeMs = transport.handshakeMs;
    this.#alpn = transport.alpn;
    this.#onDone = onDone;
  }

  get aborted(): boolean {
    return this.#reason !== null;
  }
  get paused(): boolean {
    return this.#paused;
  }
  get reason(): Error | null {
    return this.#reason;
  }

  abort(reason: Error): void {
    if (this.#finished) return;
    this.#reason = reason;
    this.fail(reason);
  }
  pause(): void {
    this.#paused = true;
    if (this.#h2) this.#h2.pause();
    else this.#socket?.pause();
  }
  resume(): void {
    this.#paused = false;
    if (this.#h2) this.#h2.resume();
    else this.#socket?.resume();
  }

  start(): void {
    this.#handler.onRequestStart?.(this, this.#context);
    if (this.#finished) return;
    let url: URL;
    try {
      url = new URL(String(this.#options.origin));
    } catch (err: unknown) {
      this.fail(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    const https = url.protocol === 'https:';
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    const port = Number(url.port || (https ? 443 : 80));
    const pairs = headerPairs(this.#options.headers);
    const head = requestHead(this.#options.method, this.#options.path, pairs);
    if (head instanceof Error) {
      this.fail(head);
      return;
    }
    const request = Buffer.from(head, 'latin1');
    const raw = net.connect({ host, port });
    const tap = https ? new RecordTap(raw) : undefined;
    const socket = tap !== undefined ? tls.connect({ socket: tap, host, rejectUnauthorized: false, ALPNProtocols: this.#alpn }) : raw;
    this.#socket = socket;
    let local = '';
    raw.once('connect', () => (local = joinHostPort(raw.localAddress ?? '', raw.localPort ?? 0)));
    if (https) {
      this.#timer = setTimeout(() => this.fail(new Error('net/http: TLS handshake timeout')), this.#handshakeMs);
    }
    socket.once(https ? 'secureConnect' : 'connect', () => {
      clearTimeout(this.#timer);
      this.#context.connecting = false;
      if (socket instanceof tls.TLSSocket && socket.alpnProtocol === 'h2') {
        this.#startH2(socket, String(this.#options.origin), pairs);
        return;
      }
      // HTTP/1: the parser reads the socket (an HTTP/2 session owns it instead).
      socket.on('data', (data: Buffer) => this.#guard(() => this.#parser.push(data)));
      socket.on('end', () => this.#guard(() => this.#parser.end()));
      socket.write(request);
    });
    socket.on('error', (err: Error) => this.fail(this.#parser.cutShort() ?? tlsError(this.#context, tap) ?? readError(err, local, joinHostPort(host, port))));
    socket.on('close', () => {
      // Built only when it is news: an Error captures a stack trace, and every
      // completed exchange closes its socket.
      if (!this.#finished) this.fail(new Error(this.#h2 === undefined ? 'EOF' : 'unexpected EOF'));
    });
  }

  /** The server chose h2: the same request over HTTP/2 (Host becomes :authority). */
  #startH2(socket: tls.TLSSocket, origin: string, pairs: readonly (readonly [string, string])[]): void {
    const host = pairs.find(([name]) => name.toLowerCase() === 'host')?.[1] ?? '';
    // Go's http2 transport refuses the Host that HTTP/1 would blank, and keeps an IPv6 zone.
    if (!validHostHeader(host)) {
      this.fail(new Error('http2: invalid Host header'));
      return;
    }
    this.#h2 = h2Exchange(
      socket,
      { origin, method: this.#options.method, path: this.#options.path, authority: host, headers: pairs },
      {
        onHead: (status, headers) => this.#handler.onResponseStart?.(this, status, headers, ''),
        onBody: (chunk) => this.#handler.onResponseData?.(this, chunk),
        onEnd: () => {
          this.#settle();
          this.#handler.onResponseEnd?.(this, {});
        },
        onError: (err) => this.fail(err),
      },
    );
    if (this.#paused) this.#h2.pause();
  }

  /** Ends the exchange with an error unless it already ended. */
  fail(err: Error): void {
    if (this.#finished) return;
    this.#settle();
    this.#handler.onResponseError?.(this, err);
  }

  #guard(step: () => void): void {
    try {
      step();
    } catch (err: unknown) {
      this.fail(err instanceof ParseError ? err : err instanceof Error ? err : new Error(String(err)));
    }
  }

  #settle(): void {
    this.#finished = true;
    this.#parser.release();
    clearTimeout(this.#timer);
    this.#h2?.close();
    this.#socket?.destroy();
    this.#onDone();
  }
}

/** Go's net.OpError text for a reset seen on read: `read tcp <local>-><remote>: read: connection reset by peer`. */
function readError(err: Error, local: string, remote: string): Error {
  if ((err as NodeJS.ErrnoException).code !== 'ECONNRESET' || local === '') return err;
  return new Error(`read tcp ${local}->${remote}: read: connection reset by peer`);
}

/** A TLS handshake that failed on a non-TLS record: Go's words for it, not OpenSSL's. */
function tlsError(context: { readonly connecting: boolean }, tap: RecordTap | undefined): Error | undefined {
  if (!context.connecting || tap === undefined) return undefined;
  const text = tap.recordHeaderError();
  return text === undefined ? undefined : new Error(text);
}

/** The dispatch options' headers (flat array or object) as [name, value] pairs, in order. */
function headerPairs(headers: Dispatcher.DispatchOptions['headers']): [string, string][] {
  const pairs: [string, string][] = [];
  if (Array.isArray(headers)) {
    for (let i = 0; i + 1 < headers.length; i += 2) pairs.push([String(headers[i]), String(headers[i + 1])]);
  } else if (headers !== null && headers !== undefined) {
    for (const [name, value] of Object.entries(headers)) {
      for (const v of Array.isArray(value) ? value : [value]) if (v !== undefined) pairs.push([name, String(v)]);
    }
  }
  return pairs;
}

/**
 * The request head as one byte string (one char per byte); probes never send
 * a body. Path and headers are written as given, in order: the caller owns
 * every line, `Connection: close` included, and Host is written as Go's
 * HTTP/1 Request.write does (http1HostLine). Or the error for a request that
 * is refused before connecting: a header that would split the request
 * (CR/LF) or that Go would refuse, or a path with a line break (the path
 * otherwise goes out raw: Go sends a query's spaces as written).
 */
export function requestHead(method: string, path: string, pairs: readonly (readonly [string, string])[]): string | Error {
  const lines = headerText(pairs);
  if (lines instanceof Error) return lines;
  if (/[\r\n\0]/.test(path)) return new Error('net/http: invalid request path');
  return `${method} ${path} HTTP/1.1\r\n${lines}\r\n`;
}

/** The header lines of a request head, or the error for the first header Go would refuse. */
function headerText(pairs: readonly (readonly [string, string])[]): string | Error {
  let text = '';
  for (const [name, value] of pairs) {
    const invalid = headerProblem(name, value);
    if (invalid !== undefined) return new Error(invalid);
    text += `${name}: ${name.toLowerCase() === 'host' ? http1HostLine(value) : value}\r\n`;
  }
  return text;
}

/**
 * `requestHead('GET', path, [['Host', host], ...lines])`, the same string or
 * error, with the part from `lines` checked and written once per lines array:
 * a policy's header lines are one shared array for every pass of its
 * targets (headers.ts `headerLines`), so a probe checks only its Host and
 * path.
 */
export function getRequestHead(path: string, host: string, lines: readonly (readonly [string, string])[]): string | Error {
  const hostLine = headerText([['Host', host]]);
  if (hostLine instanceof Error) return hostLine;
  let rest = linesText.get(lines);
  if (rest === undefined) {
    rest = headerText(lines);
    linesText.set(lines, rest);
  }
  if (rest instanceof Error) return rest;
  if (/[\r\n\0]/.test(path)) return new Error('net/http: invalid request path');
  return `GET ${path} HTTP/1.1\r\n${hostLine}${rest}\r\n`;
}

const linesText = new WeakMap<readonly (readonly [string, string])[], string | Error>();
