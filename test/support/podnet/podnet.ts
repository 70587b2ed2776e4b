// createPodNet: claims a slot, builds the topology of ADR 0014, and hands out pod and
// non-pod sandboxes on it; destroy() (or the end of the process) removes all of it.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import path from 'node:path';
import { announce, Attacher, detachSandbox, type AttachRequest } from './attach.ts';
import { buildTopology } from './build.ts';
import { claimSlot, type RecordEntry } from './claim.ts';
import { makeFaults, type Faults } from './faults.ts';
import { onProcessEnd } from './hooks.ts';
import {
  addressPlan, findNode, podIpProblem, podNetnsName, sandboxIps, sandboxNetnsName,
  type AddressPlan, type NodeNet, type NodePlan,
} from './plan.ts';

export type { NodeNet } from './plan.ts';
import { killInNetns } from './procs.ts';
import { podNetSupport } from './support.ts';
import { removeSlot, sweepStaleSync } from './teardown.ts';

export interface PodNetOptions {
  /** Nodes `kwok-node-0`..`kwok-node-<nodes-1>`, 1..12. */
  readonly nodes: number;
  /** Real nodes `real-node-0`.. after them (docs/adr/0047-real-nodes.md), 12 nodes in all. @default 0 */
  readonly realNodes?: number;
  readonly log?: (m: string) => void;
  /**
   * Outlive this process (a detached `cluster:up`): no exit hooks; hand the slot to a
   * process that lives as long as the network with setOwner(), and remove the network
   * with sweepStale() once that process is gone.
   */
  readonly persist?: boolean;
}

export interface Sandbox {
  readonly netns: string;
  /** `/run/netns/<netns>`, for setns(2). */
  readonly netnsPath: string;
  readonly ip: string;
  readonly node: NodeNet;
}

export interface PodNet {
  readonly prefix: string;
  readonly slot: number;
  readonly hostIp: string;
  readonly clusterCidr: string;
  readonly serviceCidr: string;
  readonly nodes: readonly NodeNet[];
  nodeOf(ipOrName: string): NodeNet;
  attachPod(node: string, ip: string): Promise<Sandbox>;
  detachPod(ip: string): Promise<void>;
  sandbox(node: string, label: string): Promise<Sandbox>;
  spawnIn(netns: string, cmd: string, args: string[], opts?: SpawnOptions): ChildProcess;
  readonly faults: Faults;
  /**
   * Records host state a real node makes outside the network namespaces (its cgroup, its
   * directory of mounts) before it is made, so stop(), exit hooks and the next run's
   * sweep remove it with the rest of the slot.
   */
  record(e: RecordEntry): void;
  /** Hands the slot to another process (e.g. a detached etcd) so it stays claimed after we exit. */
  setOwner(pid: number): void;
  destroy(): Promise<void>;
}

class Net {
  readonly plan: AddressPlan;
  readonly attached = new Map<string, AttachRequest>();
  /** Every address attached in this run: one attached again is announced (a pod recreated at a deleted pod's IP). */
  readonly used = new Set<string>();
  readonly children = new Set<ChildProcess>();
  readonly attacher: Attacher;
  constructor(plan: AddressPlan, attacher: Attacher) {
    this.plan = plan;
    this.attacher = attacher;
  }

  node(ipOrName: string): NodePlan {
    const n = findNode(this.plan, ipOrName);
    if (n === undefined) throw new RangeError(`${ipOrName} is no node and no address on a node of ${this.plan.prefix}`);
    return n;
  }

  async attach(req: AttachRequest): Promise<Sandbox> {
    if (this.attached.has(req.ip)) throw new Error(`${req.ip} is already attached (${this.attached.get(req.ip)?.netns ?? ''})`);
    this.attached.set(req.ip, req);
    try {
      await this.attacher.attach(req);
    } catch (err) {
      this.attached.delete(req.ip);
      throw err;
    }
    if (this.used.has(req.ip)) {
      // The non-pod sandboxes of its node (replicas, clients) reach it across the bridge directly; pods hear the gratuitous ARP.
      const probers = [...this.attached.values()].filter((r) => r.node.name === req.node.name && r.ip !== req.ip && r.netns.includes('-sbx-'));
      try {
        await announce(req, probers);
      } catch (err) {
        this.attached.delete(req.ip);
        await detachSandbox(req);
        throw err;
      }
    }
    this.used.add(req.ip);
    return { netns: req.netns, netnsPath: `/run/netns/${req.netns}`, ip: req.ip, node: req.node };
  }

  async detach(ip: string): Promise<void> {
    const req = this.attached.get(ip);
    if (req === undefined) return;
    this.attached.delete(ip);
    killInNetns([req.netns]);
    await detachSandbox(req);
  }

  spawnIn(netns: string, cmd: string, args: string[], opts: SpawnOptions = {}): ChildProcess {
    if (!netns.startsWith(`${this.plan.prefix}-`)) throw new RangeError(`${netns} is not a namespace of ${this.plan.prefix}`);
    const env = { ...(opts.env ?? process.env) };
    env['PATH'] = `${path.dirname(process.execPath)}:${env['PATH'] ?? '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'}`;
    const child = spawn('ip', ['netns', 'exec', netns, cmd, ...args], { ...opts, env });
    this.children.add(child);
    child.once('exit', () => this.children.delete(child));
    return child;
  }

  killChildren(): void {
    for (const c of this.children) c.kill('SIGKILL');
    this.children.clear();
  }
}

function nextSandboxIp(net: Net, node: NodePlan): string {
  const ip = sandboxIps(node).find((a) => !net.attached.has(a));
  if (ip === undefined) throw new Error(`no free sandbox address left on ${node.name} (.200-.250 all in use)`);
  return ip;
}

export async function createPodNet(o: PodNetOptions): Promise<PodNet> {
  const support = podNetSupport();
  if (!support.ok) throw new Error(support.why);
  const log = o.log ?? ((): void => undefined);
  addressPlan(0, o.nodes, o.realNodes ?? 0); // validates the node count before anything is claimed
  sweepStaleSync(log);
  const claim = claimSlot((slot) => { removeSlot(slot); });
  const plan = addressPlan(claim.slot, o.nodes, o.realNodes ?? 0);
  const net = new Net(plan, new Attacher(claim.record));
  let destroyed = false;
  const destroySync = (): void => {
    if (destroyed) return;
    destroyed = true;
    net.killChildren();
    removeSlot(plan.slot);
    claim.release();
  };
  const unhook = o.persist === true ? (): void => undefined : onProcessEnd(destroySync);
  const t0 = performance.now();
  try {
    await buildTopology(plan, claim.record);
  } catch (err) {
    destroySync();
    unhook();
    throw err;
  }
  log(`podnet ${plan.prefix}: ${plan.nodes.length} nodes on ${plan.clusterCidr}, host ${plan.hostIp}, built in ${Math.round(performance.now() - t0)} ms`);
  return {
    prefix: plan.prefix,
    slot: plan.slot,
    hostIp: plan.hostIp,
    clusterCidr: plan.clusterCidr,
    serviceCidr: plan.serviceCidr,
    nodes: plan.nodes,
    nodeOf: (ipOrName) => net.node(ipOrName),
    attachPod: (node, ip) => {
      const n = net.node(node);
      const problem = podIpProblem(n, ip);
      if (problem !== undefined) return Promise.reject(new RangeError(problem));
      return net.attach({ node: n, ip, netns: podNetnsName(plan.prefix, ip) });
    },
    detachPod: (ip) => net.detach(ip),
    sandbox: async (node, label) => {
      const n = net.node(node);
      const ip = nextSandboxIp(net, n);
      return net.attach({ node: n, ip, netns: sandboxNetnsName(plan.prefix, ip, label) });
    },
    spawnIn: (netns, cmd, args, opts) => net.spawnIn(netns, cmd, args, opts),
    faults: makeFaults(plan, claim.record),
    record: (e) => { claim.record(e); },
    setOwner: (pid) => { claim.setOwner(pid); },
    destroy: async () => {
      destroySync();
      unhook();
      await Promise.resolve();
    },
  };
}

/** Removes what dead runs left (their namespaces, root links and root nft tables); returns what it removed. */
export async function sweepStale(log?: (m: string) => void): Promise<string[]> {
  await Promise.resolve();
  return sweepStaleSync(log);
}
