/**
 * Target process: HTTP, TCP and gRPC health endpoints on loopback, many
 * ports spread over several 127.0.0.x addresses (port 0, so nothing clashes
 * with other work on the machine). Started by run.ts / memory.ts; prints one
 * JSON line with its listeners, then serves until its parent goes away. Each
 * `count` line on stdin is answered with one JSON line of the connections
 * accepted so far (`TargetsCount`): how a phase is counted from the targets'
 * side, whoever the prober is.
 */
import * as grpc from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { childConfig, exitWhenParentGoes } from './children.ts';

export interface TargetsConfig {
  readonly ips: readonly string[];
  readonly http: number;
  readonly tcp: number;
  readonly grpc: number;
}

export interface Listener {
  readonly ip: string;
  readonly port: number;
}

/** Connections accepted so far, by kind of listener (gRPC: HTTP/2 connections, not calls). */
export interface TargetsCount {
  readonly accepted: { readonly http: number; readonly tcp: number };
  /** The longest event-loop delay since the previous count (ms, 10 ms resolution): a target that answers late makes probes time out. */
  readonly loopDelayMaxMs: number;
}

export interface TargetsReady {
  readonly pid: number;
  readonly http: readonly Listener[];
  readonly tcp: readonly Listener[];
  readonly grpc: readonly Listener[];
}

const body = Buffer.from('ok\n');
const accepted = { http: 0, tcp: 0 };

function onHttp(_req: http.IncomingMessage, res: http.ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'content-length': body.length });
  res.end(body);
}

function onTcp(socket: net.Socket): void {
  accepted.tcp++;
  // Accept and wait for the prober to close (FIN from blackbox, RST from outprobe).
  socket.on('error', () => undefined);
  socket.setTimeout(10_000, () => socket.destroy());
  socket.resume();
}

async function listen(server: net.Server, ip: string): Promise<Listener> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: ip, port: 0, backlog: 4096 }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return { ip, port: (server.address() as AddressInfo).port };
}

async function bindGrpc(server: grpc.Server, ip: string): Promise<Listener> {
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${ip}:0`, grpc.ServerCredentials.createInsecure(), (err, bound) => {
      if (err === null) resolve(bound);
      else reject(err);
    });
  });
  return { ip, port };
}

async function main(): Promise<void> {
  const config = childConfig<TargetsConfig>();
  exitWhenParentGoes();
  const ipAt = (i: number): string => config.ips[i % config.ips.length]!;

  const httpListeners: Listener[] = [];
  for (let i = 0; i < config.http; i++) {
    const server = http.createServer(onHttp);
    server.on('connection', () => accepted.http++);
    server.on('clientError', (_err, socket) => socket.destroy());
    httpListeners.push(await listen(server, ipAt(i)));
  }
  const tcpListeners: Listener[] = [];
  for (let i = 0; i < config.tcp; i++) tcpListeners.push(await listen(net.createServer(onTcp), ipAt(i)));

  const grpcListeners: Listener[] = [];
  if (config.grpc > 0) {
    const server = new grpc.Server({ 'grpc.enable_channelz': 0 });
    new HealthImplementation({ '': 'SERVING' }).addToServer(server);
    for (let i = 0; i < config.grpc; i++) grpcListeners.push(await bindGrpc(server, ipAt(i)));
  }

  const ready: TargetsReady = { pid: process.pid, http: httpListeners, tcp: tcpListeners, grpc: grpcListeners };
  process.stdout.write(`${JSON.stringify(ready)}\n`);
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  createInterface({ input: process.stdin }).on('line', (line) => {
    if (line.trim() !== 'count') return;
    const count: TargetsCount = { accepted: { ...accepted }, loopDelayMaxMs: Math.round(delay.max / 1e6) };
    delay.reset();
    process.stdout.write(`${JSON.stringify(count)}\n`);
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`targets: ${String(error)}\n`);
  process.exit(1);
});
