import { createServer } from 'node:http';
import type { ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isIP } from 'node:net';

/** What the debug endpoint answers; each returns a JSON-serialisable document. */
export interface DebugSource {
  pod(namespace: string, name: string): unknown;
  fleet(): unknown;
}

export interface DebugServerOptions {
  /** A loopback address: the endpoint is reached through `kubectl port-forward` only (ADR 0067). */
  readonly host: string;
  /** 0 picks a free port (read it back). */
  readonly port: number;
  readonly source: DebugSource;
}

export interface DebugServer {
  readonly port: number;
  close(): Promise<void>;
}

/** Is the address one of the loopback ranges (127.0.0.0/8, ::1)? */
export function isLoopback(host: string): boolean {
  if (host === 'localhost' || host === '::1') return true;
  return isIP(host) === 4 && host.startsWith('127.');
}

const namePart = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/**
 * The replica's debug endpoint (ADR 0067), bound to loopback only, so the
 * only way in from outside the pod is the API server's port-forward, which
 * the caller's own RBAC (`create pods/portforward` in outprobe's namespace)
 * authorises: no token of the caller ever reaches the replica, and nothing
 * on the pod network can ask it. GET only, two routes:
 * `/debug/pods/<namespace>/<name>` and `/debug/fleet`.
 */
export async function startDebugServer(o: DebugServerOptions): Promise<DebugServer> {
  if (!isLoopback(o.host)) throw new Error(`the debug endpoint binds loopback only (127.0.0.0/8 or ::1), not ${o.host}: it is reached through kubectl port-forward`);
  const server = createServer((req, res) => {
    const { status, body } = answer(o.source, req.method, req.url);
    send(res, status, body);
  });
  server.requestTimeout = 10_000;
  server.headersTimeout = 5_000;
  server.maxConnections = 16;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The route's answer: status and JSON body. */
function answer(source: DebugSource, method: string | undefined, url: string | undefined): { readonly status: number; readonly body: unknown } {
  if (method !== 'GET') return { status: 405, body: { error: 'GET only' } };
  const path = (url ?? '/').split('?')[0] ?? '/';
  if (path === '/debug/fleet') return { status: 200, body: source.fleet() };
  const m = /^\/debug\/pods\/([^/]+)\/([^/]+)$/.exec(path);
  if (m === null) return { status: 404, body: { error: 'not found: GET /debug/pods/<namespace>/<name> or /debug/fleet' } };
  const ns = decodeURIComponent(m[1] ?? '');
  const name = decodeURIComponent(m[2] ?? '');
  if (!namePart.test(ns) || !namePart.test(name)) return { status: 400, body: { error: 'not a namespace and pod name' } };
  return { status: 200, body: source.pod(ns, name) };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = `${JSON.stringify(body, null, 2)}\n`;
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
  res.end(text);
}
