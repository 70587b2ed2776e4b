import type { Pod, PodContainer } from '../kube/index.ts';
import type { ProbeSpec } from '../policy/index.ts';
import type { GrpcProbeRequest, HttpProbeRequest, TcpProbeRequest } from '../probing/index.ts';
import type { AddressGuard } from './address.ts';
import { resolvePort } from './port.ts';

export type ProbeRequest =
  | { readonly type: 'httpGet'; readonly request: HttpProbeRequest }
  | { readonly type: 'tcpSocket'; readonly request: TcpProbeRequest }
  | { readonly type: 'grpc'; readonly request: GrpcProbeRequest }
  | { readonly type: 'exec'; readonly command: readonly string[]; readonly timeoutMs: number }
  /** A prober error (kubelet-probes.md §4): the attempt is void. */
  | { readonly type: 'error'; readonly error: string };

/**
 * Kubelet's `$(VAR)` expansion from the container's literal env; `$$` escapes.
 * Names are own keys only: `$(constructor)` must not find Object.prototype's.
 */
export function expandCommand(command: readonly string[], env: Readonly<Record<string, string>>): string[] {
  const lookup = (m: string, name?: string): string => {
    if (name === undefined) return '$';
    return Object.hasOwn(env, name) ? (env[name] ?? m) : m;
  };
  return command.map((arg) => arg.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, lookup));
}

/**
 * A host-network pod's IP is its node's, where the kubelet (10250), the
 * node's own services and other host-network pods listen: only a port the
 * probed container declares (`ports[].containerPort`) is probed there, so a
 * policy cannot reach the node's other ports through such a pod, nor a
 * redirect carry a probe to them.
 */
function hostNetworkPortCheck(pod: Pod, container: PodContainer | undefined): (port: number) => string | undefined {
  if (!pod.hostNetwork) return () => undefined;
  const declared = new Set((container?.ports ?? []).map((p) => p.containerPort));
  return (port) => (declared.has(port) ? undefined : `port ${port} is not a containerPort of container ${JSON.stringify(container?.name ?? '')} in a hostNetwork pod: not probed`);
}

/**
 * Turns a probe and a pod into a concrete executor request at probe time:
 * the target is the pod's IP (never a user host), the port is resolved
 * against the container, and the guard vets the address (and, for an HTTP
 * probe, every redirect hop before it is connected to).
 */
export function buildRequest(probe: ProbeSpec, pod: Pod, containerName: string, guard: AddressGuard): ProbeRequest {
  const timeoutMs = probe.timeoutSeconds * 1000;
  const container = pod.containers.find((c) => c.name === containerName);
  const h = probe.handler;
  if (h.type === 'exec') return { type: 'exec', command: expandCommand(h.command, container?.env ?? {}), timeoutMs };
  const ip = pod.podIP;
  if (ip === undefined) return { type: 'error', error: 'pod has no IP address yet' };
  const refused = guard.check(ip);
  if (refused !== undefined) return { type: 'error', error: refused };
  const port = resolvePort(h.port, container);
  if (!port.ok) return { type: 'error', error: port.error };
  const portCheck = hostNetworkPortCheck(pod, container);
  const undeclared = portCheck(port.port);
  if (undeclared !== undefined) return { type: 'error', error: undeclared };
  switch (h.type) {
    case 'httpGet': {
      const checkHop = (hopIp: string, hopPort: number): string | undefined => guard.check(hopIp) ?? portCheck(hopPort);
      return { type: 'httpGet', request: { scheme: h.scheme, ip, port: port.port, path: h.path, headers: h.httpHeaders, timeoutMs, checkHop } };
    }
    case 'tcpSocket':
      return { type: 'tcpSocket', request: { ip, port: port.port, timeoutMs } };
    case 'grpc':
      return { type: 'grpc', request: { ip, port: port.port, service: h.service, timeoutMs } };
  }
}
