// Minimal clients for checking simulated pod endpoints in tests: they send only
// to loopback (127.0.0.0/8) and the local pod network (198.18.0.0/15, RFC 2544,
// docs/adr/0014-pod-network.md), never anywhere else.
import net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { service } from 'grpc-health-check';
import { request } from 'undici';

const allowed = new net.BlockList();
allowed.addSubnet('127.0.0.0', 8, 'ipv4');
allowed.addSubnet('198.18.0.0', 15, 'ipv4');

function assertTestAddress(ip: string): void {
  if (!net.isIPv4(ip) || !allowed.check(ip, 'ipv4')) throw new Error(`refusing to send test traffic to ${ip}`);
}

/** HTTP GET status code. */
export async function httpStatus(ip: string, port: number, path = '/healthz'): Promise<number> {
  assertTestAddress(ip);
  const res = await request(`http://${ip}:${port}${path}`, { reset: true, signal: AbortSignal.timeout(2000) });
  await res.body.dump();
  return res.statusCode;
}

/** True when a TCP connection is accepted. */
export function tcpConnects(ip: string, port: number): Promise<boolean> {
  assertTestAddress(ip);
  return new Promise((resolve) => {
    const sock = net.connect({ host: ip, port, timeout: 2000 });
    sock.once('connect', () => { sock.destroy(); resolve(true); });
    sock.once('error', () => { resolve(false); });
    sock.once('timeout', () => { sock.destroy(); resolve(false); });
  });
}

interface HealthClient extends grpc.Client {
  check(req: { service: string }, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res?: { status: unknown }) => void): void;
}

/** grpc.health.v1 Check status as a string (SERVING, NOT_SERVING, ...). */
export function grpcHealth(ip: string, port: number): Promise<string> {
  assertTestAddress(ip);
  const Ctor = grpc.makeGenericClientConstructor(service, 'Health');
  const client = new Ctor(`${ip}:${port}`, grpc.credentials.createInsecure()) as unknown as HealthClient;
  return new Promise((resolve, reject) => {
    client.check({ service: '' }, { deadline: Date.now() + 2000 }, (err, res) => {
      client.close();
      if (err !== null) reject(err);
      else resolve(String(res?.status));
    });
  });
}
