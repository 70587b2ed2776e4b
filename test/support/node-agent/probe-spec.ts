/**
 * A container's core/v1 probe (already defaulted by the API server) as
 * outprobe's ProbeSpec, so the agent can reuse outprobe's request builder,
 * executors and kubelet state machine unchanged.
 */
import type { HttpHeader, PortRef, ProbeHandler, ProbeSpec } from '../../../src/policy/index.ts';
import type { Raw } from './pod.ts';

const rec = (v: unknown): Raw => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Raw) : {});
const int = (v: unknown, fallback: number): number => (typeof v === 'number' && Number.isInteger(v) ? v : fallback);
const port = (v: unknown): PortRef => (typeof v === 'number' || typeof v === 'string' ? v : 0);

function handler(p: Raw): ProbeHandler | undefined {
  if (p['exec'] !== undefined) {
    const command = rec(p['exec'])['command'];
    return { type: 'exec', command: Array.isArray(command) ? command.map(String) : [] };
  }
  if (p['httpGet'] !== undefined) {
    const h = rec(p['httpGet']);
    const headers: HttpHeader[] = (Array.isArray(h['httpHeaders']) ? h['httpHeaders'] : []).map((x) => {
      const r = rec(x);
      return { name: typeof r['name'] === 'string' ? r['name'] : '', value: typeof r['value'] === 'string' ? r['value'] : '' };
    });
    return { type: 'httpGet', path: typeof h['path'] === 'string' ? h['path'] : '/', port: port(h['port']), scheme: h['scheme'] === 'HTTPS' ? 'HTTPS' : 'HTTP', httpHeaders: headers };
  }
  if (p['tcpSocket'] !== undefined) return { type: 'tcpSocket', port: port(rec(p['tcpSocket'])['port']) };
  if (p['grpc'] !== undefined) {
    const g = rec(p['grpc']);
    return { type: 'grpc', port: int(g['port'], 0), service: typeof g['service'] === 'string' ? g['service'] : '' };
  }
  return undefined;
}

/** The probe with core/v1 defaults for anything missing; undefined when it has no handler. */
export function toProbeSpec(p: Raw): ProbeSpec | undefined {
  const h = handler(p);
  if (h === undefined) return undefined;
  return {
    handler: h,
    initialDelaySeconds: int(p['initialDelaySeconds'], 0),
    timeoutSeconds: int(p['timeoutSeconds'], 1),
    periodSeconds: int(p['periodSeconds'], 10),
    successThreshold: int(p['successThreshold'], 1),
    failureThreshold: int(p['failureThreshold'], 3),
    terminationGracePeriodSeconds: null,
  };
}
