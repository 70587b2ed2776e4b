import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type PeerHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

export interface PeerServer {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * The peer listener (`--peer-addr`, ADR 0037): what replicas ask each other,
 * on a port of its own that the chart's NetworkPolicy opens to the replicas
 * only. `GET /healthz` answers `ok` (the peer checks of ADR 0017, nothing
 * else said); every other path is a route that authenticates on its own.
 * Requests must arrive whole within 10 s (headers within 5 s), so idle or
 * slow connections cannot pile up.
 */
export async function startPeerServer(options: { readonly host: string; readonly port: number; readonly routes: ReadonlyMap<string, PeerHandler> }): Promise<PeerServer> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (path === '/healthz' && (req.method === 'GET' || req.method === 'HEAD')) {
      send(res, 200, 'ok\n');
      return;
    }
    const route = options.routes.get(path);
    if (route === undefined) {
      send(res, 404, 'not found\n');
      return;
    }
    route(req, res).catch(() => send(res, 500, 'internal error\n'));
  });
  server.keepAliveTimeout = 5_000;
  server.headersTimeout = 5_000;
  server.requestTimeout = 10_000;
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
    close: () =>
      (closed ??= new Promise<void>((resolve, reject) => {
        server.close((err) => (err === undefined ? resolve() : reject(err)));
        server.closeAllConnections();
      })),
  };
}

function send(res: ServerResponse, status: number, body: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}
