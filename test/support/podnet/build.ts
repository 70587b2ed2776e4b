// Builds the fixed part of the topology: the fabric bridge in the root namespace (host
// address, a route to each node's pod subnet) and one namespace per node (uplink on
// the fabric, pod bridge, routes to the other nodes, forwarding on). One root batch,
// then one batch and one sysctl call per node.
import type { RecordEntry } from './claim.ts';
import { ipBatch, run } from './exec.ts';
import { NODE_BRIDGE, NODE_UPLINK, type AddressPlan, type NodePlan } from './plan.ts';

/** The root namespace's part: netns for the nodes, the fabric, the uplink root ends, routes. */
export function rootLines(plan: AddressPlan): string[] {
  const br = plan.fabricBridge;
  return [
    ...plan.nodes.map((n) => `netns add ${n.netns}`),
    `link add ${br} type bridge`,
    `link set ${br} address ${plan.fabricMac}`,
    `addr add ${plan.hostIp}/24 dev ${br}`,
    `link set ${br} up`,
    ...plan.nodes.flatMap((n) => [
      `link add ${n.rootLink} type veth peer name ${NODE_UPLINK} netns ${n.netns}`,
      `link set ${n.rootLink} master ${br} up`,
      `route add ${n.subnet} via ${n.ip}`,
    ]),
  ];
}

/** A node namespace's part. The Service range goes out the uplink like a default route would; kube-proxy DNATs it first. */
export function nodeLines(plan: AddressPlan, node: NodePlan): string[] {
  const gwLen = node.subnet.split('/')[1] ?? '24';
  return [
    'link set lo up',
    `addr add ${node.ip}/24 dev ${NODE_UPLINK}`,
    `link set ${NODE_UPLINK} up`,
    `link add ${NODE_BRIDGE} type bridge`,
    `link set ${NODE_BRIDGE} address ${node.bridgeMac}`,
    `addr add ${node.gateway}/${gwLen} dev ${NODE_BRIDGE}`,
    `link set ${NODE_BRIDGE} up`,
    ...plan.nodes.filter((o) => o.index !== node.index).map((o) => `route add ${o.subnet} via ${o.ip}`),
    `route add ${plan.serviceCidr} dev ${NODE_UPLINK}`,
  ];
}

/**
 * Forwarding only in node namespaces; rp_filter off so asymmetric paths pass; bridged
 * IPv4 through the ip hooks (br_netfilter, per namespace) so faults and kube-proxy see
 * same-bridge traffic too.
 */
export const NODE_SYSCTLS: readonly string[] = [
  'net.ipv4.ip_forward=1',
  'net.ipv4.conf.all.rp_filter=0',
  'net.ipv4.conf.default.rp_filter=0',
  `net.ipv4.conf.${NODE_UPLINK}.rp_filter=0`,
  `net.ipv4.conf.${NODE_BRIDGE}.rp_filter=0`,
  'net.bridge.bridge-nf-call-iptables=1',
];

export async function buildTopology(plan: AddressPlan, record: (e: RecordEntry) => void): Promise<void> {
  record({ kind: 'link', name: plan.fabricBridge });
  for (const n of plan.nodes) {
    record({ kind: 'link', name: n.rootLink });
    record({ kind: 'netns', name: n.netns });
  }
  await ipBatch(rootLines(plan));
  await Promise.all(plan.nodes.map(async (n) => {
    await ipBatch(nodeLines(plan, n), { netns: n.netns });
    await run('ip', ['netns', 'exec', n.netns, 'sysctl', '-q', '-w', ...NODE_SYSCTLS]);
  }));
}
