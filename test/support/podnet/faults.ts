// Fault injection: each fault installs nftables tables (see rules.ts) in the namespaces
// it needs and returns a handle whose heal() deletes them. Tables in node namespaces go
// with the namespace; a table in the root namespace is recorded for clean-up.
//
// Delay is not available: this kernel has no sch_netem, and nft's `queue` verdict (which
// a user-space delayer would need) fails with ENOENT (CONFIG_NFT_QUEUE is not set).
import type { RecordEntry } from './claim.ts';
import { nft } from './exec.ts';
import { cidrContains, cidrsOverlap, cidrWithin, parseCidr } from './ip.ts';
import { findNode, type AddressPlan, type NodePlan } from './plan.ts';
import {
  blackholeTables, degradeHostTables, degradeNodeTables, isolateFromPodsTables, isolatePodTables,
  type Degrade, type TableText,
} from './rules.ts';

export interface FaultHandle { heal(): Promise<void> }

export interface Faults {
  /** Cuts a pod off from every other node (their pods, sandboxes, the host); its own node and bridge still reach it. */
  isolatePod(podIp: string): Promise<FaultHandle>;
  /** A sandbox reaches no pod on any node (its own bridge included) but still reaches the API server. */
  isolateFromPods(sandboxIp: string): Promise<FaultHandle>;
  /**
   * A sandbox reaches nothing on any node's subnet: no pod and no other sandbox (.200-.250, where
   * the other controller replicas run), as a replica whose node lost its route to the pod network
   * (replicas are pods there). The host, and so the API server, still answers.
   */
  isolateFromPodNetwork(sandboxIp: string): Promise<FaultHandle>;
  /** Nothing in or out of the node's uplink (not even ARP). */
  blackholeNode(node: string): Promise<FaultHandle>;
  /** Loss (`lossPercent`, default 100) or resets on packets to `to` (from `from`, default anywhere). Addresses/CIDRs inside the cluster CIDR. */
  degrade(o: Degrade): Promise<FaultHandle>;
  healAll(): Promise<void>;
}

interface Placed { readonly netns: string | undefined; readonly tables: readonly TableText[] }

function deleteText(tables: readonly TableText[]): string {
  return tables.map((t) => `delete table ${t.family} ${t.name}\n`).join('');
}

export function makeFaults(plan: AddressPlan, record: (e: RecordEntry) => void): Faults {
  let seq = 0;
  const active = new Set<FaultHandle>();
  const nextName = (): string => `${plan.prefix}-f${++seq}`;

  async function install(placed: readonly Placed[]): Promise<FaultHandle> {
    const done: Placed[] = [];
    const handle: FaultHandle = {
      heal: async () => {
        active.delete(handle);
        await Promise.all(done.splice(0).map((p) => nft(deleteText(p.tables), p.netns).catch(() => undefined)));
      },
    };
    active.add(handle);
    try {
      for (const p of placed) {
        if (p.netns === undefined) for (const t of p.tables) record({ kind: 'table', family: t.family, name: t.name });
        await nft(p.tables.map((t) => t.text).join(''), p.netns);
        done.push(p);
      }
    } catch (err) {
      await handle.heal();
      throw err;
    }
    return handle;
  }

  function nodeOf(ipOrName: string): NodePlan {
    const n = findNode(plan, ipOrName);
    if (n === undefined) throw new RangeError(`${ipOrName} is no node and no address on a node of ${plan.prefix}`);
    return n;
  }

  function inCluster(cidr: string): string {
    if (!cidrWithin(plan.clusterCidr, cidr)) throw new RangeError(`${cidr} is not inside the cluster CIDR ${plan.clusterCidr}`);
    return parseCidr(cidr).text;
  }

  return {
    isolatePod: (ip) => install([{ netns: nodeOf(ip).netns, tables: isolatePodTables(nextName(), ip) }]),
    isolateFromPods: (ip) => install([{
      netns: nodeOf(ip).netns,
      tables: isolateFromPodsTables(nextName(), ip, plan.nodes.map((n) => n.podCidr)),
    }]),
    isolateFromPodNetwork: (ip) => install([{
      netns: nodeOf(ip).netns,
      tables: isolateFromPodsTables(nextName(), ip, plan.nodes.map((n) => n.subnet)),
    }]),
    blackholeNode: (node) => install([{ netns: nodeOf(node).netns, tables: blackholeTables(nextName()) }]),
    degrade: async (o) => {
      const d: Degrade = { ...o, to: inCluster(o.to), ...(o.from === undefined ? {} : { from: inCluster(o.from) }) };
      const name = nextName();
      const from = d.from;
      const nodes = plan.nodes.filter((n) => from === undefined || cidrsOverlap(from, n.subnet) || cidrContains(from, n.ip));
      const placed: Placed[] = nodes.map((n) => ({ netns: n.netns, tables: degradeNodeTables(name, d) }));
      if (from === undefined || cidrContains(from, plan.hostIp)) placed.push({ netns: undefined, tables: degradeHostTables(name, d) });
      return await install(placed);
    },
    healAll: async () => { await Promise.all([...active].map((h) => h.heal())); },
  };
}
