import net from 'node:net';
import tls from 'node:tls';
import { Dispatcher } from 'undici';
import { joinHostPort } from '../request.ts';
import { headerProblem } from './headers.ts';
import { RecordTap } from './record-tap.ts';
import { ParseError, ResponseParser } from './response-parser.ts';
import type { ResponseHead } from './response-parser.ts';

/**
 * An undici Dispatcher specialised for probes: one fresh connection per
 * request, HTTP/1.1, `Connection: close`, no pooling, no proxy, TLS without
 * verification and without SNI (the target is always an IP), request bytes
 * written in one syscall. It implements only what probes use (GET without a
 * body) and the v2 handler API (onRequestStart, onResponseStart, ...), so the
 * prober code runs unchanged on an undici Agent too (see ADR 0001).
 */
export class ProbeDispatcher extends Dispatcher {
  #closed = false;
  readonly #live = new Set<Exchange>();
  readonly #tlsHandshakeTimeoutMs: number;

  /** @param tlsHandshakeTimeoutMs Go's TLSHandshakeTimeout in the kubelet's transport. @default 10000 */
  constructor(options: { readonly tlsHandshakeTimeoutMs?: number } = {}) {
    super();
    this.#tlsHandshakeTimeoutMs = options.tlsHandshakeTimeoutMs ?? 10_000;
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const exchange = new Exchange(options, handler, this.#tlsHandshakeTimeoutMs, () => this.#live.delete(exchange));
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
  readonly #onDone: () => void;
  #socket: net.Socket | undefined;
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

  constructor(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler, handshakeMs: number, onDone: () => void) {
    this.#options = options;
    this.#handler = handler;
    this.#handshakeMs = handshakeMs;
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
    this.#socket?.pause();
  }
  resume(): void {
    this.#paused = false;
    this.#socket?.resume();
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
    // Never write a header that would split the request (CR/LF) or that Go would refuse.
    const invalid = pairs.map(([name, value]) => headerProblem(name, value)).find((p) => p !== undefined);
    if (invalid !== undefined) {
      this.fail(new Error(invalid));
      return;
    }
    const request = serializeRequest(this.#options.method, this.#options.path, pairs, this.#options.reset === true);
    const raw = net.connect({ host, port });
    const tap = https ? new RecordTap(raw) : undefined;
    const socket = tap !== undefined ? tls.connect({ socket: tap, host, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] }) : raw;
    this.#socket = socket;
    let local = '';
    raw.once('connect', () => (local = joinHostPort(raw.localAddress ?? '', raw.localPort ?? 0)));
    if (https) {
      this.#timer = setTimeout(() => this.fail(new Error('net/http: TLS handshake timeout')), this.#handshakeMs);
    }
    socket.once(https ? 'secureConnect' : 'connect', () => {
      clearTimeout(this.#timer);
      this.#context.connecting = false;
      socket.write(request);
    });
    socket.on('data', (data: Buffer) => this.#guard(() => this.#parser.push(data)));
    socket.on('end', () => this.#guard(() => this.#parser.end()));
    socket.on('error', (err: Error) => this.fail(this.#parser.cutShort() ?? tlsError(this.#context, tap) ?? readError(err, local, joinHostPort(host, port))));
    socket.on('close', () => {
      // Built only when it is news: an Error captures a stack trace, and every
      // completed exchange closes its socket.
      if (!this.#finished) this.fail(new Error('EOF'));
    });
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
    clearTimeout(this.#timer);
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

/** The request head in one string; probes never send a body. */
function serializeRequest(method: string, path: string, headers: readonly (readonly [string, string])[], close: boolean): string {
  let head = `${method} ${path} HTTP/1.1\r\n`;
  for (const [name, value] of headers) head += `${name}: ${value}\r\n`;
  if (close) head += 'connection: close\r\n';
  return `${head}\r\n`;
}
