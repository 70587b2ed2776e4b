/**
 * Scenario servers of the differential tier, on loopback only (127.0.0.1,
 * 127.0.0.2 and ::1). HTTP servers are raw TCP (or raw TLS) so any response
 * bytes can be scripted, including malformed ones; every request head is
 * recorded byte for byte. gRPC servers are node:http2 (h2c) with scripted
 * replies; their request headers are recorded in arrival order.
 */
import { readFileSync } from 'node:fs';
import http2 from 'node:http2';
import net from 'node:net';
import tls from 'node:tls';
import type { AddressInfo } from 'node:net';

/** One step of a scripted reply: bytes, a pause, or how the connection ends. */
export type Step = string | Buffer | { readonly delayMs: number } | { readonly then: 'reset' | 'hang' };
/** Ends the connection with RST. */
export const reset: Step = { then: 'reset' };
/** Keeps the connection open, silent, until the client gives up. */
export const hang: Step = { then: 'hang' };

/** Placeholder ports of one scenario's servers: T target, O other port, V other host, S TLS. */
export interface Ports {
  readonly T: number;
  readonly O: number;
  readonly V: number;
  readonly S: number;
}

export type RawReply = (head: string, ports: Ports) => readonly Step[];

const fixtures = new URL('../fixtures/tls/', import.meta.url);
const cert = readFileSync(new URL('cert.pem', fixtures));
const key = readFileSync(new URL('key.pem', fixtures));

export interface Recorder {
  readonly heads: string[];
}

export interface Closable {
  readonly port: number;
  readonly close: () => void;
}

function track(server: net.Server | http2.Http2Server | http2.Http2SecureServer, host: string): Promise<Closable> {
  const sockets = new Set<net.Socket>();
  server.on('connection', (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        port,
        close: () => {
          for (const s of sockets) s.destroy();
          server.close();
        },
      });
    });
  });
}

/**
 * A TLS ClientHello or an HTTP/2 connection preface reaching a raw server is
 * recorded by name only: its bytes (random, cipher lists, SETTINGS) come from
 * the TLS or HTTP/2 library and must differ between Go and Node.
 */
function summarise(buf: Buffer, head: string): string {
  if (buf[0] === 0x16 && buf[1] === 0x03) return '<TLS ClientHello>';
  if (head.startsWith('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n')) return '<HTTP/2 preface>';
  return head;
}

async function play(socket: net.Socket, steps: readonly Step[]): Promise<void> {
  for (const step of steps) {
    if (socket.destroyed) return;
    if (typeof step === 'string' || Buffer.isBuffer(step)) socket.write(step);
    else if ('delayMs' in step) await new Promise((r) => setTimeout(r, step.delayMs));
    else if (step.then === 'hang') return;
    else {
      socket.resetAndDestroy();
      return;
    }
  }
  socket.end();
}

/**
 * A raw HTTP/1 server: reads a request head (up to the blank line, or
 * whatever arrived when the client stops sending), records it with `tag`,
 * then plays the scripted reply.
 */
export function rawServer(opts: { host: string; tls: boolean; tag: string; rec: Recorder; ports: () => Ports; reply: RawReply }): Promise<Closable> {
  const onSocket = (socket: net.Socket): void => {
    let buf = Buffer.alloc(0);
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      socket.removeListener('data', onData);
      const head = buf.toString('latin1');
      opts.rec.heads.push(`${opts.tag} ${buf.length === 0 ? '<closed by client>' : summarise(buf, head)}`);
      void play(socket, opts.reply(head, opts.ports()));
    };
    const onData = (chunk: Buffer): void => {
      buf = Buffer.concat([buf, chunk]);
      // A head ends at the blank line; a TLS ClientHello's first record or an HTTP/2
      // preface is complete enough to answer (a plain server answers it with HTTP/1).
      if (buf.includes('\r\n\r\n') || buf.includes('\n\n') || (buf[0] === 0x16 && buf.length >= 5) || buf.includes('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n')) finish();
    };
    socket.on('data', onData);
    socket.on('end', finish);
    // A client that sends nothing: record how it left (FIN or RST), which differs between clients.
    socket.on('error', () => {
      if (!done && buf.length === 0) opts.rec.heads.push(`${opts.tag} <reset by client>`);
      done = true;
    });
  };
  const server = opts.tls ? tls.createServer({ cert, key, ALPNProtocols: ['http/1.1'] }, onSocket) : net.createServer(onSocket);
  return track(server, opts.host);
}

/** A TLS server that offers HTTP/2 by ALPN (as Go's and most servers do), answering 200 "h2 ok". */
export function h2TlsServer(host: string, tag: string, rec: Recorder): Promise<Closable> {
  const server = http2.createSecureServer({ cert, key, allowHTTP1: true }, (req, res) => {
    const lines: string[] = [];
    for (let i = 0; i < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
    rec.heads.push(`${tag} HTTP/${req.httpVersion} ${req.method} ${req.url}\n${lines.join('\n')}`);
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(`h${req.httpVersion} ok`);
  });
  return track(server, host);
}

/** What a scripted gRPC server does with each Health/Check stream (the Nth, from 0). */
export type GrpcReply = (stream: http2.ServerHttp2Stream, index: number) => void;

export function grpcServer(host: string, tag: string, rec: Recorder, reply: GrpcReply, onSession?: (s: http2.ServerHttp2Session) => void): Promise<Closable> {
  const server = http2.createServer();
  let index = 0;
  server.on('session', (s) => {
    s.on('error', () => undefined);
    onSession?.(s);
  });
  server.on('stream', (stream, _headers, _flags, rawHeaders) => {
    stream.on('error', () => undefined);
    const lines: string[] = [];
    for (let i = 0; i < rawHeaders.length; i += 2) lines.push(`${rawHeaders[i]}: ${rawHeaders[i + 1]}`);
    rec.heads.push(`${tag} ${lines.join('\n')}`);
    reply(stream, index++);
  });
  return track(server, host);
}

/** gRPC length-prefixed message. */
export function grpcFrame(message: Buffer, compressed = false): Buffer {
  const head = Buffer.alloc(5);
  head[0] = compressed ? 1 : 0;
  head.writeUInt32BE(message.length, 1);
  return Buffer.concat([head, message]);
}
