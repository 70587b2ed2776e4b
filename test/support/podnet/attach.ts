// Attaching sandboxes (pods and others) to a node's bridge. Requests made while a flush
// runs are coalesced: one root batch creates all their namespaces, one batch per node
// creates their veths, then one batch per sandbox sets its address and route, so N
// attaches cost 1 + nodes + N spawns instead of about 4N.
import type { RecordEntry } from './claim.ts';
import { CommandError, ipBatch } from './exec.ts';
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

/** Removes a sandbox: its veth (which would outlive a namespace still held by a socket) and its namespace. */
export async function detachSandbox(r: AttachRequest): Promise<void> {
  await ipBatch([`link del ${hostVethName(r.ip)}`, `netns del ${r.netns}`], { netns: r.node.netns, force: true });
}
