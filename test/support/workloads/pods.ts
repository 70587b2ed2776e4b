// Which pods the simulated workloads serve and how: pod IPs they accept (127.x
// on the loopback plane, 198.18.0.0/15 on the pod network of ADR 0014) and the
// kind of each declared TCP containerPort, by port name: gRPC health (name
// starts with "grpc"), a bare TCP listener ("tcp") or HTTP (anything else).
import net from 'node:net';
import type { ServedPort, ServedPortKind } from '../podserve/index.ts';

export type PortKind = ServedPortKind;
export type PodPort = ServedPort;

export interface PodObject {
  metadata?: { name?: string; uid?: string; resourceVersion?: string };
  spec?: { nodeName?: string; containers?: { ports?: { containerPort: number; name?: string; protocol?: string }[] }[] };
  status?: { phase?: string; podIP?: string };
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

const podNetwork = new net.BlockList();
podNetwork.addSubnet('198.18.0.0', 15, 'ipv4');

/** True for IPv4 addresses of the local pod network, 198.18.0.0/15 (RFC 2544). */
export function isPodNetworkIp(ip: unknown): ip is string {
  return typeof ip === 'string' && net.isIPv4(ip) && podNetwork.check(ip, 'ipv4');
}

export function podPorts(pod: PodObject): PodPort[] {
  const out: PodPort[] = [];
  for (const c of pod.spec?.containers ?? []) {
    for (const p of c.ports ?? []) {
      if ((p.protocol ?? 'TCP') === 'TCP') out.push({ port: p.containerPort, name: p.name ?? '', kind: portKind(p.name ?? '') });
    }
  }
  return out;
}
