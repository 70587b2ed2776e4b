// nftables rule text for the faults of ADR 0014, pure. Each fault is one table per
// namespace it touches, named `<prefix>-f<n>`, so healing is `delete table`.
//
// Where each fault sits (br_netfilter is on in node namespaces, so bridged IPv4 also
// passes the inet forward hook with iif = oif = the node bridge):
// - isolatePod: node forward, pod <-> uplink dropped; the node's own traffic (input/
//   output) and same-bridge traffic (iif = oif = bridge) are untouched.
// - isolateFromPods: node forward (routed) plus a bridge-family forward chain (same
//   bridge), sandbox -> every podCIDR dropped; other addresses (the API server) pass.
// - blackholeNode: netdev ingress + egress on the node's uplink: not even ARP passes.
// - degrade: applied once per packet, where it originates: node forward for packets
//   entering from the node's bridge (pods, sandboxes), node output (the node itself),
//   root output (the host). `to` is matched after kube-proxy's DNAT (pod addresses).
import { NODE_BRIDGE, NODE_UPLINK } from './plan.ts';

export type Family = 'inet' | 'bridge' | 'netdev';

export interface TableText { readonly family: Family; readonly name: string; readonly text: string }

function table(family: Family, name: string, chains: readonly string[]): TableText {
  return { family, name, text: `table ${family} ${name} {\n${chains.join('\n')}\n}\n` };
}

function chain(name: string, hook: string, rules: readonly string[], device?: string): string {
  const dev = device === undefined ? '' : ` device "${device}"`;
  return `  chain ${name} {\n    type filter hook ${hook}${dev} priority -10; policy accept;\n${rules.map((r) => `    ${r}\n`).join('')}  }`;
}

export function isolatePodTables(name: string, podIp: string): TableText[] {
  return [table('inet', name, [chain('forward', 'forward', [
    `iifname "${NODE_UPLINK}" ip daddr ${podIp} drop`,
    `oifname "${NODE_UPLINK}" ip saddr ${podIp} drop`,
  ])])];
}

export function isolateFromPodsTables(name: string, sandboxIp: string, podCidrs: readonly string[]): TableText[] {
  const rule = `ip saddr ${sandboxIp} ip daddr { ${podCidrs.join(', ')} } drop`;
  return [
    table('inet', name, [chain('forward', 'forward', [rule])]),
    table('bridge', name, [chain('forward', 'forward', [rule])]),
  ];
}

export function blackholeTables(name: string): TableText[] {
  return [table('netdev', name, [
    chain('in', 'ingress', ['drop'], NODE_UPLINK),
    chain('out', 'egress', ['drop'], NODE_UPLINK),
  ])];
}

export interface Degrade {
  readonly from?: string;
  readonly to: string;
  /** Share of matching packets hit, 1-100. @default 100 */
  readonly lossPercent?: number;
  /** Answer hit TCP packets with a reset (others with ICMP port unreachable) instead of dropping them. @default false */
  readonly reset?: boolean;
}

/** The statements (match + verdict) of a degrade, without the hook-specific prefix. */
export function degradeStatements(d: Degrade): string[] {
  const pct = d.lossPercent ?? 100;
  if (!Number.isInteger(pct) || pct < 1 || pct > 100) throw new RangeError(`lossPercent ${pct} is not an integer in 1..100`);
  const from = d.from === undefined ? '' : `ip saddr ${d.from} `;
  const chance = pct === 100 ? '' : `numgen random mod 100 < ${pct} `;
  const match = `${from}ip daddr ${d.to} ${chance}`;
  if (d.reset !== true) return [`${match}drop`];
  return [`meta l4proto tcp ${match}reject with tcp reset`, `meta l4proto != tcp ${match}reject`];
}

/** In a node namespace: packets from the node's bridge, and the node's own. */
export function degradeNodeTables(name: string, d: Degrade): TableText[] {
  const st = degradeStatements(d);
  return [table('inet', name, [
    chain('forward', 'forward', st.map((s) => `iifname "${NODE_BRIDGE}" ${s}`)),
    chain('output', 'output', st),
  ])];
}

/** In the root namespace: the host's own packets. */
export function degradeHostTables(name: string, d: Degrade): TableText[] {
  return [table('inet', name, [chain('output', 'output', degradeStatements(d))])];
}
