// The address plan of ADR 0014, pure: a slot s (0..31) owns the /20
// B = 198.18.0.0 + s·4096; the fabric is B+0.0/24 (host .1, node i .(10+i)), node i's
// pod bridge is B+(1+i).0/24 with gateway .254, spec.podCIDR B+(1+i).0/25, non-pod
// sandboxes .200-.250, Services B+15.0/24. Names carry the run prefix `opn<slot>` so
// everything a run creates can be found again (and nothing else matches it).
import { checkLabel, cidrContains, intToIp, ipToInt, parseCidr } from './ip.ts';

export const SLOTS = 32;
export const MAX_NODES = 12;
/** Every name a run creates starts with `opn<slot>-`; nothing else on the machine may. */
export const FAMILY = 'opn';
const FAMILY_RE = /^opn(\d{1,2})-/;
const NET_BASE = ipToInt('198.18.0.0');
export const SANDBOX_FIRST = 200;
export const SANDBOX_LAST = 250;
/** Interface names inside a node namespace (only the root ones need the prefix). */
export const NODE_UPLINK = 'uplink';
export const NODE_BRIDGE = 'cbr0';

/** A node as the pod network's users see it. */
export interface NodeNet {
  readonly index: number;
  /**
   * 'kwok': a fake node (kwok and a node agent); 'real': a node run by a real kubelet
   * with containerd and runc (docs/adr/0047-real-nodes.md). Real nodes come after the kwok ones.
   */
  readonly kind: 'kwok' | 'real';
  /** `kwok-node-<i>`, or `real-node-<j>` for the j-th real node. */
  readonly name: string;
  readonly netns: string;
  /** The node's address on the fabric. */
  readonly ip: string;
  /** `/25` for spec.podCIDR. */
  readonly podCidr: string;
  /** The node bridge's `/24`. */
  readonly subnet: string;
  /** The bridge address (`.254`), the sandboxes' gateway. */
  readonly gateway: string;
}

/** A node as the network builds it: what users see, plus its links. */
export interface NodePlan extends NodeNet {
  /** The uplink veth's end in the root namespace, enslaved to the fabric bridge. */
  readonly rootLink: string;
  /** Fixed MAC of the node bridge, so it does not change as pods join (stale ARP). */
  readonly bridgeMac: string;
}

export interface AddressPlan {
  readonly slot: number;
  readonly prefix: string;
  readonly hostIp: string;
  readonly fabricCidr: string;
  readonly clusterCidr: string;
  readonly serviceCidr: string;
  readonly fabricBridge: string;
  readonly fabricMac: string;
  readonly nodes: readonly NodePlan[];
}

const hex = (n: number): string => n.toString(16).padStart(2, '0');

function octet3(base: number, third: number, fourth: number): string {
  return intToIp(base + third * 256 + fourth);
}

function nodePlan(slot: number, base: number, i: number, kwokNodes: number): NodePlan {
  const prefix = `${FAMILY}${slot}`;
  const real = i >= kwokNodes;
  return {
    index: i,
    kind: real ? 'real' : 'kwok',
    name: real ? `real-node-${i - kwokNodes}` : `kwok-node-${i}`,
    netns: `${prefix}-node-${i}`,
    ip: octet3(base, 0, 10 + i),
    podCidr: `${octet3(base, 1 + i, 0)}/25`,
    subnet: `${octet3(base, 1 + i, 0)}/24`,
    gateway: octet3(base, 1 + i, 254),
    rootLink: `${prefix}-n${i}`,
    bridgeMac: `02:6f:70:${hex(slot)}:${hex(i)}:fe`,
  };
}

/**
 * The plan of slot `slot` with `nodes` kwok nodes and `realNodes` real ones after them;
 * throws on a slot or node count out of range.
 */
export function addressPlan(slot: number, nodes: number, realNodes = 0): AddressPlan {
  if (!Number.isInteger(slot) || slot < 0 || slot >= SLOTS) throw new RangeError(`slot ${slot} is not in 0..${SLOTS - 1}`);
  if (!Number.isInteger(nodes) || nodes < 1 || nodes > MAX_NODES) throw new RangeError(`nodes ${nodes} is not in 1..${MAX_NODES}`);
  if (!Number.isInteger(realNodes) || realNodes < 0 || nodes + realNodes > MAX_NODES) throw new RangeError(`${nodes} kwok and ${realNodes} real nodes: at most ${MAX_NODES} in all`);
  const base = NET_BASE + slot * 4096;
  const prefix = `${FAMILY}${slot}`;
  return {
    slot,
    prefix,
    hostIp: octet3(base, 0, 1),
    fabricCidr: `${intToIp(base)}/24`,
    clusterCidr: `${intToIp(base)}/20`,
    serviceCidr: `${octet3(base, 15, 0)}/24`,
    fabricBridge: `${prefix}-fab`,
    fabricMac: `02:6f:70:${hex(slot)}:ff:fe`,
    nodes: Array.from({ length: nodes + realNodes }, (_, i) => nodePlan(slot, base, i, nodes)),
  };
}

/** The node by name (`kwok-node-<i>`), fabric address, or any address of its /24. */
export function findNode(plan: AddressPlan, ipOrName: string): NodePlan | undefined {
  const byName = plan.nodes.find((n) => n.name === ipOrName || n.netns === ipOrName);
  if (byName !== undefined || !/^\d+\.\d+\.\d+\.\d+$/.test(ipOrName)) return byName;
  return plan.nodes.find((n) => n.ip === ipOrName || cidrContains(n.subnet, ipOrName));
}

/** Why `ip` cannot be a pod IP of `node` (undefined when it can). */
export function podIpProblem(node: NodePlan, ip: string): string | undefined {
  if (!cidrContains(node.podCidr, ip)) return `${ip} is not in ${node.name}'s podCIDR ${node.podCidr}`;
  const last = ipToInt(ip) - parseCidr(node.podCidr).start;
  if (last === 0) return `${ip} is the network address of ${node.podCidr}`;
  return undefined;
}

/** The non-pod sandbox addresses of a node, lowest first. */
export function sandboxIps(node: NodePlan): string[] {
  const start = parseCidr(node.subnet).start;
  return Array.from({ length: SANDBOX_LAST - SANDBOX_FIRST + 1 }, (_, k) => intToIp(start + SANDBOX_FIRST + k));
}

export function podNetnsName(prefix: string, ip: string): string {
  return `${prefix}-pod-${ip}`;
}

export function sandboxNetnsName(prefix: string, ip: string, label: string): string {
  return `${prefix}-sbx-${ip}-${checkLabel(label)}`;
}

/** The host-side veth of an address on its node's bridge (unique per node: the last octet). */
export function hostVethName(ip: string): string {
  return `veth${ipToInt(ip) & 255}`;
}

/** The slot encoded in a name of our family, or undefined for anything else. */
export function slotOfName(name: string): number | undefined {
  const m = FAMILY_RE.exec(name);
  if (m?.[1] === undefined) return undefined;
  const slot = Number(m[1]);
  return slot < SLOTS && String(slot) === m[1] ? slot : undefined;
}
