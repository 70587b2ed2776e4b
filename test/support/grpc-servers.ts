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
