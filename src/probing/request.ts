/**
 * Fully resolved probe requests, as the executors receive them: the target
 * is always the pod IP and a numeric port (named ports are resolved before a
 * request is built; `host` is never accepted from users).
 */

export interface HttpHeader {
  readonly name: string;
  readonly value: string;
}

export interface HttpProbeRequest {
  readonly scheme: 'HTTP' | 'HTTPS';
  /** Pod IP, IPv4 or IPv6 (unbracketed). */
  readonly ip: string;
  readonly port: number;
  /** `httpGet.path` as the user wrote it (may carry a query; default `/`). */
  readonly path: string;
  /** `httpGet.httpHeaders`, duplicates allowed, in order. */
  readonly headers: readonly HttpHeader[];
  readonly timeoutMs: number;
  /**
   * Vets every address the probe would connect to, the first request and
   * each followed redirect, before connecting: a reason means the hop is
   * not made and the attempt is a prober error (void, never counted), as
   * for a pod IP the address guard refuses. @default every hop allowed
   */
  readonly checkHop?: (ip: string, port: number) => string | undefined;
}

export interface TcpProbeRequest {
  readonly ip: string;
  readonly port: number;
  readonly timeoutMs: number;
}

export interface GrpcProbeRequest {
  readonly ip: string;
  readonly port: number;
  /** `grpc.service`; empty means the server's overall health. */
  readonly service: string;
  readonly timeoutMs: number;
}

/** JoinHostPort: IPv6 literals are bracketed. */
export function joinHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
