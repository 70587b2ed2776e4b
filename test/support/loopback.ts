import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { claimPort } from './ports/index.ts';

export interface Listening {
  readonly port: number;
  readonly close: () => Promise<void>;
}

const fixtures = new URL('../fixtures/tls/', import.meta.url);

/** Listens on a free port of `host` (loopback only) and tracks sockets so close() never hangs. */
async function listen(server: net.Server, host: string): Promise<Listening> {
  const sockets = new Set<net.Socket>();
  server.on('connection', (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('secureConnection', (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

export function httpServer(handler: http.RequestListener, host = '127.0.0.1'): Promise<Listening> {
  return listen(http.createServer(handler), host);
}

export function httpsServer(handler: http.RequestListener, host = '127.0.0.1'): Promise<Listening> {
  const server = https.createServer({ key: readFileSync(new URL('key.pem', fixtures)), cert: readFileSync(new URL('cert.pem', fixtures)) }, handler);
  return listen(server, host);
}

/** A raw TCP server whose connection handler the test writes (garbage, resets, silence). */
export function tcpServer(onConnection: (socket: net.Socket) => void, host = '127.0.0.1'): Promise<Listening> {
  return listen(net.createServer(onConnection), host);
}

/** A raw TLS server (the test certificate, ALPN as given) whose connection handler the test writes. */
export function tlsServer(onConnection: (socket: tls.TLSSocket) => void, alpn: readonly string[] = ['http/1.1'], host = '127.0.0.1'): Promise<Listening> {
  const server = tls.createServer(
    { key: readFileSync(new URL('key.pem', fixtures)), cert: readFileSync(new URL('cert.pem', fixtures)), ALPNProtocols: [...alpn] },
    onConnection,
  );
  return listen(server, host);
}

/**
 * A port on 127.0.0.1 that nothing listens on: claimed below the ephemeral range with a
 * machine-wide lock (test/support/ports), so no outgoing connection and no other test's
 * component can be bound there, and held until the process ends.
 */
export function closedPort(): Promise<number> {
  return claimPort('127.0.0.1');
}

export interface StalledListener {
  readonly port: number;
  /** Opens connections until the accept queue is full; returns them (destroy them after). */
  fill(): Promise<net.Socket[]>;
  /** Unblocks the listener's event loop: it accepts what is queued, and connects complete again. */
  release(): void;
  readonly close: () => Promise<void>;
}

/**
 * A listener (backlog 1) in a worker thread whose event loop is blocked, so
 * it never accepts: once its accept queue is full, the kernel drops new SYNs
 * and a connect hangs until the prober's timeout.
 */
export async function stalledListener(): Promise<StalledListener> {
  const { Worker } = await import('node:worker_threads');
  const gate = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(
    `const net = require('node:net'); const { parentPort, workerData } = require('node:worker_threads');
     const server = net.createServer((s) => s.on('error', () => {})); server.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => {
       parentPort.postMessage(server.address().port);
       setTimeout(() => Atomics.wait(workerData, 0, 0, 30000), 20);
     });`,
    { eval: true, workerData: gate },
  );
  const port = await new Promise<number>((resolve) => worker.once('message', resolve));
  await new Promise((r) => setTimeout(r, 100));
  return {
    port,
    fill: async () => {
      const sockets: net.Socket[] = [];
      for (let i = 0; i < 8; i++) {
        const s = net.connect({ host: '127.0.0.1', port });
        s.on('error', () => undefined);
        const connected = await new Promise<boolean>((resolve) => {
          const t = setTimeout(() => resolve(false), 200);
          s.once('connect', () => {
            clearTimeout(t);
            resolve(true);
          });
        });
        sockets.push(s);
        if (!connected) break;
      }
      return sockets;
    },
    release: () => {
      Atomics.store(gate, 0, 1);
      Atomics.notify(gate, 0);
    },
    close: async () => {
      Atomics.store(gate, 0, 1);
      Atomics.notify(gate, 0);
      await worker.terminate();
    },
  };
}
