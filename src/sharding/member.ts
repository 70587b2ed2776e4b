import type { PodJson } from '../kube/index.ts';

/** Annotation on a shard Lease: what the replica declares about its own pod (ADR 0036). Never trusted: checked against the pod. */
export const memberAnnotation = 'outprobe.io/member';

/**
 * A member of the shard as the API server proved it (ADR 0036): the Lease's
 * holder is a Running, Ready pod of outprobe's own Deployment whose UID,
 * node and IP match what the Lease declares. Every field but `identity`
 * comes from the pod object, never from the Lease. Later work (vantage,
 * issue 28) extends it with the node's zone.
 */
export interface Member {
  /** The Lease's holderIdentity (the pod's name when proven). */
  readonly identity: string;
  readonly podName: string;
  readonly podUid: string;
  readonly nodeName: string;
  readonly podIP: string;
  /** `host:port` of the member's peer listener: the pod's IP and its `peer` container port (IPv6 in brackets). */
  readonly peerAddress: string;
  /**
   * The zone the Lease declares (`--zone`): taken only where the member's
   * Node cannot be read (vantage, ADR 0040); its node always comes from the
   * pod. @default undefined
   */
  readonly zone?: string | undefined;
}

/** What a replica declares about itself on its Lease: its pod's UID, node and IP. */
export interface MemberClaim {
  readonly podUid: string;
  readonly nodeName: string;
  readonly podIP: string;
  /**
   * Its peer port: read only where membership is declared
   * (`--membership-proof=none`); a proven member is reached on its pod's
   * `peer` container port. @default undefined
   */
  readonly port?: number | undefined;
  /** Its node's zone as the replica knows it (ADR 0040): a declaration, used only where the Node cannot be read. @default undefined */
  readonly zone?: string | undefined;
}

export function encodeClaim(c: MemberClaim): string {
  return JSON.stringify({ uid: c.podUid, node: c.nodeName, ip: c.podIP, ...(c.port === undefined ? {} : { port: c.port }), ...(c.zone === undefined ? {} : { zone: c.zone }) });
}

const field = (o: Record<string, unknown>, k: string): string | undefined => {
  const v = Object.hasOwn(o, k) ? o[k] : undefined;
  return typeof v === 'string' && v !== '' && v.length <= 253 ? v : undefined;
};

function jsonObject(text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined || text.length > 2048) return undefined;
  try {
    const raw: unknown = JSON.parse(text);
    return typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Undefined when absent or malformed. */
export function decodeClaim(text: string | undefined): MemberClaim | undefined {
  const o = jsonObject(text);
  if (o === undefined) return undefined;
  const podUid = field(o, 'uid');
  const nodeName = field(o, 'node');
  const podIP = field(o, 'ip');
  const port = portNumber(Object.hasOwn(o, 'port') ? o['port'] : undefined);
  const zone = field(o, 'zone');
  return podUid === undefined || nodeName === undefined || podIP === undefined ? undefined : { podUid, nodeName, podIP, ...(port === undefined ? {} : { port }), ...(zone === undefined ? {} : { zone }) };
}

/** A pod of the release namespace as membership needs it (read defensively: a pod's status is hostile input). */
export interface MemberPod {
  readonly name: string;
  readonly uid: string;
  readonly phase: string;
  /** The `Ready` condition is True. */
  readonly ready: boolean;
  readonly terminating: boolean;
  readonly podIP: string | undefined;
  readonly nodeName: string | undefined;
  readonly serviceAccount: string | undefined;
  /** The controller owner reference, when there is exactly one. */
  readonly controller: { readonly kind: string; readonly name: string; readonly uid: string } | undefined;
  /** The `peer` container port, when declared. */
  readonly peerPort: number | undefined;
}

const rec = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** The one controller owner reference, else undefined. */
function controllerOf(meta: Record<string, unknown>): MemberPod['controller'] {
  const controllers = arr(meta['ownerReferences']).map(rec).filter((r) => r['controller'] === true);
  const c = controllers.length === 1 ? controllers[0] : undefined;
  if (c === undefined) return undefined;
  const uid = str(c['uid']);
  return uid === undefined ? undefined : { kind: str(c['kind']) ?? '', name: str(c['name']) ?? '', uid };
}

/** The first container port named `peer`. */
function peerPortOf(spec: Record<string, unknown>): number | undefined {
  for (const container of arr(spec['containers']).map(rec)) {
    for (const p of arr(container['ports']).map(rec)) {
      if (p['name'] === 'peer') return portNumber(p['containerPort']);
    }
  }
  return undefined;
}

const portNumber = (n: unknown): number | undefined => (typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= 65535 ? n : undefined);

export function projectMemberPod(raw: PodJson): MemberPod {
  const o = rec(raw);
  const meta = rec(o['metadata']);
  const spec = rec(o['spec']);
  const status = rec(o['status']);
  return {
    name: str(meta['name']) ?? '',
    uid: str(meta['uid']) ?? '',
    phase: str(status['phase']) ?? '',
    ready: arr(status['conditions']).map(rec).some((x) => x['type'] === 'Ready' && x['status'] === 'True'),
    terminating: meta['deletionTimestamp'] !== undefined && meta['deletionTimestamp'] !== null,
    podIP: str(status['podIP']),
    nodeName: str(spec['nodeName']),
    serviceAccount: str(spec['serviceAccountName']),
    controller: controllerOf(meta),
    peerPort: peerPortOf(spec),
  };
}

/** `ip:port`, an IPv6 address in brackets. */
export function hostPort(ip: string, port: number): string {
  return ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;
}
