/**
 * Room for more than 250 kwok nodes: the plane's loopback pod network
 * 127.X.0.0/16 gives nodes 0–249 a /24 each; every further 250 nodes get a
 * /24 of one more claimed 127.Y.0.0/16 (test/support/cluster/podnet.ts, so
 * no other plane on the machine hands out the same addresses). The claims
 * are owned by the plane's etcd and released at the end.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ControlPlane } from '../../test/support/cluster/index.ts';
import { fakeNode, nodesReady } from '../../test/support/cluster/nodes.ts';
import { claimPodNetwork } from '../../test/support/cluster/podnet.ts';
import type { PodNetwork } from '../../test/support/cluster/podnet.ts';

/** Nodes the plane itself creates on its own network. */
export const nodesPerNetwork = 250;

export interface ExtraNetworks {
  /** The pod networks, the plane's first: `127.X.0.0/16`. */
  readonly cidrs: readonly string[];
  /** `127.X.` of each. */
  readonly prefixes: readonly string[];
  release(): void;
}

/** Creates nodes `nodesPerNetwork` … `total - 1` on newly claimed networks and waits (bounded) until kwok has them Ready. */
export async function addNodes(cp: ControlPlane, total: number, log: (m: string) => void): Promise<ExtraNetworks> {
  const first = cp.podNetwork ?? '';
  const claims: PodNetwork[] = [];
  const release = (): void => { for (const c of claims) c.release(); };
  try {
    const etcd = cp.components.find((c) => c.name === 'etcd')?.pid;
    const names: string[] = [];
    for (let i = nodesPerNetwork; i < total; i++) {
      const k = Math.floor(i / nodesPerNetwork) - 1;
      let net = claims[k];
      if (net === undefined) {
        net = claimPodNetwork();
        if (etcd !== undefined) net.setOwner(etcd);
        claims.push(net);
      }
      await cp.kube.create('/api/v1/nodes', fakeNode(i, net.nodeCidr(i % nodesPerNetwork)));
      names.push(`kwok-node-${i}`);
    }
    if (names.length > 0) {
      const deadline = Date.now() + 180_000;
      while (!(await nodesReady(cp.kube, names))) {
        if (Date.now() > deadline) throw new Error(`kwok did not make ${names.length} extra nodes Ready within 180 s`);
        await sleep(1000);
      }
      log(`${names.length} more kwok nodes Ready on ${claims.map((c) => `127.${c.octet}.0.0/16`).join(', ')}`);
    }
    const cidrs = [first, ...claims.map((c) => `127.${c.octet}.0.0/16`)];
    return { cidrs, prefixes: cidrs.map((c) => c.replace(/0\.0\/16$/, '')), release };
  } catch (err) {
    release();
    throw err;
  }
}
