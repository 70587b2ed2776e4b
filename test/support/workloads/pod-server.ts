// Real endpoints for one simulated pod: on the pod's loopback IP and each declared
// TCP containerPort it serves, by port name, gRPC health (name starts with "grpc"),
// a bare TCP listener (name starts with "tcp") or HTTP (anything else). Health is
// flippable: HTTP answers 200/503 on every path, gRPC reports SERVING/NOT_SERVING,
// and the TCP port listens only while healthy.
import http from 'node:http';
import net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';

export type PortKind = 'http' | 'tcp' | 'grpc';

export interface PodPort {
  readonly port: number;
  readonly name: string;
  readonly kind: PortKind;
}

export function portKind(name: string): PortKind {
  if (name.startsWith('grpc')) return 'grpc';
  if (name.startsWith('tcp')) return 'tcp';
  return 'http';
}

/** Refuses anything outside 127.0.0.0/8 and the control plane's own 127.0.0.1. */
export function isSimulatedPodIp(ip: unknown): ip is string {
  return typeof ip === 'string' && net.isIPv4(ip) && ip.startsWith('127.') && ip !== '127.0.0.1';
}

function listen(server: net.Server, ip: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, ip, () => { server.removeListener('error', reject); resolve(); });
  });
}

function close(server: net.Server): Promise<void> {
  return new Promise((resolve) => { server.close(() => { resolve(); }); });
}

export class PodServer {
  readonly ip: string;
  readonly ports: readonly PodPort[];
  #healthy: boolean;
  #http: http.Server[] = [];
  #tcp = new Map<number, net.Server>();
  #grpc: grpc.Server[] = [];
  #health: HealthImplementation[] = [];
  httpRequests = 0;

  constructor(ip: string, ports: readonly PodPort[], healthy: boolean) {
    if (!isSimulatedPodIp(ip)) throw new Error(`refusing to serve on ${String(ip)}: not a 127.x pod IP`);
    this.ip = ip;
    this.ports = ports;
    this.#healthy = healthy;
  }

  get healthy(): boolean { return this.#healthy; }

  async start(): Promise<void> {
    for (const p of this.ports) {
      if (p.kind === 'http') await this.#startHttp(p.port);
      else if (p.kind === 'grpc') await this.#startGrpc(p.port);
      else if (this.#healthy) await this.#startTcp(p.port);
    }
  }

  async #startHttp(port: number): Promise<void> {
    const srv = http.createServer((_req, res) => {
      this.httpRequests++;
      res.writeHead(this.#healthy ? 200 : 503, { 'content-type': 'text/plain' });
      res.end(this.#healthy ? 'ok\n' : 'unhealthy\n');
    });
    srv.keepAliveTimeout = 1000;
    await listen(srv, this.ip, port);
    this.#http.push(srv);
  }

  async #startTcp(port: number): Promise<void> {
    const srv = net.createServer((sock) => {
      sock.on('error', () => undefined);
      sock.setTimeout(2000, () => { sock.destroy(); });
    });
    await listen(srv, this.ip, port);
    this.#tcp.set(port, srv);
  }

  async #startGrpc(port: number): Promise<void> {
    const health = new HealthImplementation({ '': this.#healthy ? 'SERVING' : 'NOT_SERVING' });
    const srv = new grpc.Server();
    health.addToServer(srv);
    await new Promise<void>((resolve, reject) => {
      srv.bindAsync(`${this.ip}:${port}`, grpc.ServerCredentials.createInsecure(), (err) => {
        if (err === null) resolve(); else reject(err);
      });
    });
    this.#grpc.push(srv);
    this.#health.push(health);
  }

  async setHealthy(healthy: boolean): Promise<void> {
    this.#healthy = healthy;
    for (const h of this.#health) h.setStatus('', healthy ? 'SERVING' : 'NOT_SERVING');
    for (const p of this.ports.filter((x) => x.kind === 'tcp')) {
      const srv = this.#tcp.get(p.port);
      if (healthy && srv === undefined) await this.#startTcp(p.port);
      if (!healthy && srv !== undefined) {
        this.#tcp.delete(p.port);
        await close(srv);
      }
    }
  }

  async stop(): Promise<void> {
    for (const s of this.#http) s.closeAllConnections();
    await Promise.all([...this.#http, ...this.#tcp.values()].map(close));
    for (const g of this.#grpc) g.forceShutdown();
    this.#http = [];
    this.#tcp.clear();
    this.#grpc = [];
    this.#health = [];
  }
}
