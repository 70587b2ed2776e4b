import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { Server as TlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { AuthDecision } from './metrics-auth.ts';
import { secureContextOptions, tlsServerOptions } from '../servingcert/tls.ts';
import type { ServingPair } from '../servingcert/pair.ts';
import type { TlsMinVersion } from '../servingcert/tls.ts';

/** What `/readyz` asks: a bare boolean, or a verdict with the reason shown on 503. */
export type ReadinessCheck = () => boolean | { readonly ok: boolean; readonly reason: string };

/** The part of `Metrics` the server needs. */
export interface MetricsSource {
  readonly contentType: string;
  text(): Promise<string>;
}

export interface ObservabilityServerOptions {
  /** Address to bind, e.g. `0.0.0.0` in a pod, `127.0.0.1` in tests. */
  readonly host: string;
  /** TCP port; 0 picks a free one (read it back from the result). */
  readonly port: number;
  readonly metrics: MetricsSource;
  /** Ready once the caches have synced. */
  readonly ready: ReadinessCheck;
  /** Liveness of the process itself. @default always live */
  readonly live?: () => boolean;
  /**
   * Decides on `/metrics` requests from their `Authorization` header (a
   * MetricsAuth). @default none: `/metrics` is open to whoever can connect.
   * `/healthz` and `/readyz` are never authenticated (the kubelet probes them).
   */
  readonly authorizeMetrics?: ((authorization: string | undefined) => Promise<AuthDecision>) | undefined;
  /**
   * More endpoints by exact path, each doing its own method checks and
   * authentication (the second opinion, ADR 0018). @default none
   */
  readonly routes?: ReadonlyMap<string, (req: IncomingMessage, res: ServerResponse) => Promise<void>>;
  /**
   * Serve HTTPS with this pair (TLS 1.2 at least; ADR 0068), every endpoint
   * alike: the kubelet's `scheme: HTTPS` probes do not verify the certificate.
   * Swap it with `setCertificate`. @default plain HTTP
   */
  readonly tls?: ServingPair | undefined;
  /** With `tls`: the oldest protocol accepted. @default TLSv1.2 */
  readonly tlsMinVersion?: TlsMinVersion | undefined;
}

export interface ObservabilityServer {
  /** The bound port (the real one when 0 was asked for). */
  readonly port: number;
  /** Whether it serves HTTPS. */
  readonly tls: boolean;
  /** Serves `pair` to new connections from now on (a reloaded certificate); throws without `tls`. */
  setCertificate(pair: ServingPair): void;
  /** Stops listening and ends open connections; resolves when the server is closed. */
  close(): Promise<void>;
}

/**
 * `/metrics`, `/healthz` and `/readyz` on node:http, or node:https with `tls`. The handlers only
 * read state; a failing check answers 503 (or 500 for a broken scrape) and
 * never takes the process down. `/metrics` passes `authorizeMetrics` first;
 * the health endpoints are open and answer only fixed texts (no error
 * details), since anyone who can connect may ask them.
 */
export async function startObservabilityServer(options: ObservabilityServerOptions): Promise<ObservabilityServer> {
  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const route = options.routes?.get((req.url ?? '/').split('?')[0] ?? '/');
    (route === undefined ? handle(options, req, res) : route(req, res)).catch(() => {
      send(res, 500, 'internal error\n');
    });
  };
  const tls: TlsServer | undefined = options.tls === undefined ? undefined : createTlsServer(tlsServerOptions(options.tls, options.tlsMinVersion), onRequest);
  const server = tls ?? createServer(onRequest);
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  let closed: Promise<void> | undefined;
  return {
    port,
    tls: tls !== undefined,
    setCertificate: (pair) => {
      if (tls === undefined) throw new Error('the observability server serves plain HTTP: no certificate to swap');
      tls.setSecureContext(secureContextOptions(pair, options.tlsMinVersion));
    },
    close: () =>
      (closed ??= new Promise<void>((resolve, reject) => {
        server.close((err) => {
          if (err === undefined) resolve();
          else reject(err);
        });
        // The responses are small and synchronous to build, so ending
        // keep-alive sockets (a scraper's) at once loses nothing.
        server.closeAllConnections();
      })),
  };
}

async function handle(options: ObservabilityServerOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? '/').split('?')[0];
  if (path !== '/metrics' && path !== '/healthz' && path !== '/readyz') {
    send(res, 404, 'not found\n');
    return;
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('allow', 'GET, HEAD');
    send(res, 405, 'method not allowed\n');
    return;
  }
  if (path === '/metrics') {
    const decision = await (options.authorizeMetrics?.(req.headers.authorization) ?? { status: 200, message: '' });
    if (decision.status !== 200) {
      if (decision.status === 401) res.setHeader('www-authenticate', 'Bearer realm="outprobe"');
      send(res, decision.status, `${decision.message}\n`);
      return;
    }
    send(res, 200, await options.metrics.text(), options.metrics.contentType);
    return;
  }
  const verdict = path === '/healthz' ? liveness(options.live) : readiness(options.ready);
  send(res, verdict.ok ? 200 : 503, verdict.ok ? 'ok\n' : `${verdict.reason}\n`);
}

function liveness(live: (() => boolean) | undefined): { ok: boolean; reason: string } {
  try {
    const ok = live?.() ?? true;
    return { ok, reason: ok ? '' : 'not live' };
  } catch {
    // an unauthenticated endpoint: an exception's text is not shown
    return { ok: false, reason: 'liveness check failed' };
  }
}

function readiness(check: ReadinessCheck): { ok: boolean; reason: string } {
  try {
    const v = check();
    if (typeof v === 'boolean') return { ok: v, reason: v ? '' : 'not ready: caches not synced' };
    return { ok: v.ok, reason: `not ready: ${v.reason}` };
  } catch {
    return { ok: false, reason: 'not ready: readiness check failed' };
  }
}

function send(res: ServerResponse, status: number, body: string, contentType = 'text/plain; charset=utf-8'): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}
