// Attaching sandboxes (pods and others) to a node's bridge. Requests made while a flush
// runs are coalesced: one root batch creates all their namespaces, one batch per node
// creates their veths, then one batch per sandbox sets its address and route, so N
// attaches cost 1 + nodes + N spawns instead of about 4N.
import { spawn, spawnSync } from 'node:child_process';
import type { RecordEntry } from './claim.ts';
import { CommandError, ipBatch, run } from './exec.ts';
import { NODE_BRIDGE, hostVethName, type NodePlan } from './plan.ts';

export interface AttachRequest {
  readonly node: NodePlan;
  readonly ip: string;
  readonly netns: string;
}

/** Lines run inside the sandbox's own namespace. */
export function sandboxLines(r: AttachRequest): string[] {
  return [
    'link set lo up',
    `addr add ${r.ip}/24 dev eth0`,
    'link set eth0 up',
    `route add 198.18.0.0/15 via ${r.node.gateway}`,
  ];
}

/** Lines run in the node namespace: the veth pair, its sandbox end named eth0. */
export function vethLines(r: AttachRequest): string[] {
  const veth = hostVethName(r.ip);
  return [`link add ${veth} type veth peer name eth0 netns ${r.netns}`, `link set ${veth} master ${NODE_BRIDGE} up`];
}

async function attachGroup(group: readonly AttachRequest[]): Promise<void> {
  await ipBatch(group.map((r) => `netns add ${r.netns}`));
  const byNode = Map.groupBy(group, (r) => r.node.netns);
  await Promise.all([...byNode].map(([netns, rs]) => ipBatch(rs.flatMap(vethLines), { netns })));
}

interface Pending { readonly req: AttachRequest; readonly resolve: () => void; readonly reject: (e: unknown) => void }

const MAX_GROUP = 256;

export class Attacher {
  readonly #record: (e: RecordEntry) => void;
  #pending: Pending[] = [];
  #flushing = false;

  constructor(record: (e: RecordEntry) => void) {
    this.#record = record;
  }

  attach(req: AttachRequest): Promise<void> {
    this.#record({ kind: 'netns', name: req.netns });
    return new Promise<void>((resolve, reject) => {
      this.#pending.push({ req, resolve, reject });
      if (!this.#flushing) { this.#flushing = true; void this.#flush(); }
    });
  }

  async #flush(): Promise<void> {
    await Promise.resolve(); // let callers in the same tick join the group
    while (this.#pending.length > 0) {
      const group = this.#pending.splice(0, MAX_GROUP);
      await this.#attachAll(group);
    }
    this.#flushing = false;
  }

  async #attachAll(group: readonly Pending[]): Promise<void> {
    try {
      await attachGroup(group.map((p) => p.req));
    } catch (err) {
      // A batch stops at its first bad line: fall back to one by one, so each caller gets its own error.
      if (group.length === 1 || !(err instanceof CommandError)) {
        await Promise.all(group.map((p) => detachSandbox(p.req)));
        for (const p of group) p.reject(err);
        return;
      }
      await Promise.all(group.map((p) => detachSandbox(p.req)));
      await Promise.all(group.map((p) => this.#attachAll([p])));
      return;
    }
    await Promise.all(group.map(async (p) => {
      try {
        await ipBatch(sandboxLines(p.req), { netns: p.req.netns });
        p.resolve();
      } catch (err) {
        await detachSandbox(p.req);
        p.reject(err);
      }
    }));
  }
}

let arping: boolean | undefined;
/** True when `arping` (Debian's iputils-arping) is installed. */
function hasArping(): boolean {
  arping ??= spawnSync('arping', ['-V'], { stdio: 'ignore' }).error === undefined;
  return arping;
}

/**
 * Announces a sandbox that took over an address another sandbox had in this run (a pod
 * recreated at a deleted pod's IP), as a CNI plugin does, so nothing keeps sending to the old
 * MAC: a stale neighbour entry goes on sending to the deleted veth until the kernel finds out
 * (tens of seconds, never for a permanent entry), and probes of the new pod time out meanwhile.
 * - Its node's entry (the path from other nodes and the host) is replaced with the new MAC,
 *   permanent if it was pinned (test/e2e/support/net-pods.ts pinNeighbours) so it stays pinned.
 * - The entries of `bridgeNeighbours` (the other sandboxes on its node's bridge, which reach
 *   it directly: replicas, clients) are removed, so their next packet resolves it afresh.
 * - A gratuitous ARP from its own interface (`arping -U`, when installed) updates any other
 *   entry on the bridge. Its reply wait (1 s) is not waited for.
 */
export async function announce(r: AttachRequest, bridgeNeighbours: readonly AttachRequest[]): Promise<void> {
  const links = JSON.parse(await run('ip', ['-j', '-n', r.netns, 'link', 'show', 'dev', 'eth0'])) as { address?: string }[];
  const mac = links[0]?.address;
  if (mac === undefined) throw new Error(`no MAC address on eth0 of ${r.netns}`);
  const held = JSON.parse(await run('ip', ['-j', '-n', r.node.netns, 'neigh', 'show', r.ip, 'dev', NODE_BRIDGE])) as { state?: string[] }[];
  const pinned = held.some((e) => e.state?.includes('PERMANENT') === true);
  await ipBatch([`neigh replace ${r.ip} lladdr ${mac} dev ${NODE_BRIDGE} nud ${pinned ? 'permanent' : 'reachable'}`], { netns: r.node.netns });
  await Promise.all(bridgeNeighbours.map((n) => ipBatch([`neigh del ${r.ip} dev eth0`], { netns: n.netns, force: true })));
  if (hasArping()) {
    const child = spawn('ip', ['netns', 'exec', r.netns, 'arping', '-U', '-c', '1', '-I', 'eth0', r.ip], { stdio: 'ignore' });
    child.once('error', () => undefined);
    child.unref();
  }
}

/** Removes a sandbox: its veth (which would outlive a namespace still held by a socket) and its namespace. */
export async function detachSandbox(r: AttachRequest): Promise<void> {
  await ipBatch([`link del ${hostVethName(r.ip)}`, `netns del ${r.netns}`], { netns: r.node.netns, force: true });
}
