import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { HealthImplementation, service as healthService } from 'grpc-health-check';
import type { ServingStatusMap } from 'grpc-health-check';

export interface GrpcTarget {
  readonly port: number;
  readonly health: HealthImplementation | undefined;
  /** Metadata (user-agent etc.) and service names the server saw, in order. */
  readonly seen: { userAgent: string; service: string }[];
  readonly close: () => Promise<void>;
}

type CheckHandler = (service: string, reply: (err: grpc.ServiceError | null, res?: { status: string }) => void) => void;

async function bind(server: grpc.Server, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.bindAsync(`${host.includes(':') ? `[${host}]` : host}:0`, grpc.ServerCredentials.createInsecure(), (err, port) => {
      if (err === null) resolve(port);
      else reject(err);
    });
  });
}

function closer(server: grpc.Server): () => Promise<void> {
  return () =>
    new Promise((resolve) => {
      server.forceShutdown();
      resolve();
    });
}

/** A real grpc-js server with grpc-health-check's HealthImplementation. */
export async function healthServer(statuses: ServingStatusMap, host = '127.0.0.1'): Promise<GrpcTarget> {
  const server = new grpc.Server();
  const health = new HealthImplementation(statuses);
  health.addToServer(server);
  const port = await bind(server, host);
  return { port, health, seen: [], close: closer(server) };
}

/** A grpc-js server whose Check handler the test writes (SERVICE_UNKNOWN, hangs, records metadata). */
export async function customHealthServer(check: CheckHandler, host = '127.0.0.1'): Promise<GrpcTarget> {
  const server = new grpc.Server();
  const seen: { userAgent: string; service: string }[] = [];
  server.addService(healthService, {
    check: (call: grpc.ServerUnaryCall<{ service: string }, { status: string }>, callback: grpc.sendUnaryData<{ status: string }>) => {
      seen.push({ userAgent: String(call.metadata.get('user-agent')[0] ?? ''), service: call.request.service });
      check(call.request.service, (err, res) => callback(err, res));
    },
    watch: () => undefined,
  });
  const port = await bind(server, host);
  return { port, health: undefined, seen, close: closer(server) };
}

/** A grpc-js server with no health service at all (Unimplemented). */
export async function emptyGrpcServer(): Promise<GrpcTarget> {
  const server = new grpc.Server();
  const port = await bind(server, '127.0.0.1');
  return { port, health: undefined, seen: [], close: closer(server) };
}

export interface RawH2Server {
  readonly port: number;
  /** HTTP/2 sessions the server accepted and saw closed. */
  readonly sessions: { opened: number; closed: number };
  readonly close: () => Promise<void>;
}

/**
 * A plain node:http2 (h2c) server whose stream handler the test writes, for
 * answers no gRPC library would give: bad HTTP status, missing grpc-status,
 * garbage or truncated bodies, RST_STREAM, GOAWAY, a dropped connection.
 */
export async function rawH2Server(
  onStream: (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, body: Buffer) => void,
  host = '127.0.0.1',
): Promise<RawH2Server> {
  const server = http2.createServer();
  const live = new Set<http2.ServerHttp2Session>();
  const sessions = { opened: 0, closed: 0 };
  server.on('session', (session) => {
    sessions.opened++;
    live.add(session);
    session.on('error', () => undefined);
    session.on('close', () => {
      sessions.closed++;
      live.delete(session);
    });
  });
  server.on('stream', (stream, headers) => {
    stream.on('error', () => undefined);
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => onStream(stream, headers, Buffer.concat(chunks)));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    sessions,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of live) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** gRPC response headers, a framed message and OK trailers: what a well-behaved server sends. */
export function respondGrpc(stream: http2.ServerHttp2Stream, message: Buffer, trailers: http2.OutgoingHttpHeaders = { 'grpc-status': '0' }): void {
  stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
  stream.on('wantTrailers', () => stream.sendTrailers(trailers));
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  message.copy(frame, 5);
  stream.end(frame);
}
