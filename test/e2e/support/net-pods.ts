// Fake pods on the pod network (docs/adr/0014-pod-network.md), for e2e tests that play the
// kubelet without kwok: each pod is a Pod object bound to a podnet node, with an IP from that
// node's podCIDR, its own network namespace on the node's bridge, and its `http` port served by
// the one shared podserve. The test plays the kubelet as fake-kubelet.ts does on loopback
// (same Pod object and status), with the node's fabric address as hostIP.
//
// What fake-kubelet's pod did, here: `healthy = x` is `podserve.setHealthy(name, x)` (the HTTP
// port keeps listening and answers 503, so a tcpSocket probe still passes); `close()` is
// `podserve.remove(name)` (the listener and its connections close while the pod's namespace and
// address stay, so a connect is refused, as with a closed loopback server).
//
// pinNeighbours: the kernel's ARP table is one table for all network namespaces, and by
// default (net.ipv4.neigh.default.gc_thresh3 = 1024) it holds 1024 entries that it may evict
// in all of them together. 900 pods need about 1800 (each pod its gateway, each node its pods):
// past the limit, new entries fail ("neighbour table overflow", `table_fulls` in
// /proc/net/stat/arp_cache) and probes time out at random. Permanent entries are exempt from
// that count, so the helper pins both ends of every pod's link instead of raising a host-wide
// limit; they go away with the pods' namespaces.
import { execFile } from 'node:child_process';
import type { KubeClient } from '../../support/cluster/index.ts';
import { NODE_BRIDGE } from '../../support/podnet/index.ts';
import type { NodeNet, PodNet } from '../../support/podnet/index.ts';
import type { Podserve } from '../../support/podserve/index.ts';
import { fakePodManifest, startedAgo, statusBody, strategicPatch } from '../../integration/support/fake-kubelet.ts';
import type { FakePodOptions } from '../../integration/support/fake-kubelet.ts';

export interface NetPod {
  readonly namespace: string;
  /** Also the pod's key in podserve. */
  readonly name: string;
  readonly uid: string;
  readonly ip: string;
  readonly node: string;
  /** The pod's network namespace. */
  readonly netns: string;
}

/**
 * The `n`-th pod address of a node (0-based): `.1` upward in its podCIDR, as kwok hands them
 * out, short of the CIDR's broadcast address (a /25 holds 126 pods).
 */
export function podIpOf(node: NodeNet, n: number): string {
  const [base, bits] = node.podCidr.split('/');
  const size = 2 ** (32 - Number(bits));
  if (!Number.isInteger(n) || n < 0 || n + 1 > size - 2) throw new RangeError(`pod #${n} does not fit ${node.name}'s podCIDR ${node.podCidr}`);
  const o = (base ?? '').split('.').map(Number);
  const int = (((o[0] ?? 0) << 24) >>> 0) + ((o[1] ?? 0) << 16) + ((o[2] ?? 0) << 8) + (o[3] ?? 0) + 1 + n;
  return [int >>> 24, (int >>> 16) & 255, (int >>> 8) & 255, int & 255].join('.');
}

/**
 * Creates the Pod bound to `node`, attaches its namespace with `ip`, serves its `http` port
 * (healthy) from `podserve`, then writes its status: Running, Ready, `podIP` `ip`. With
 * `serve.accessLog`, podserve keeps the pod's access log (`podserve.access()`).
 */
export async function createNetPod(
  env: { readonly kube: KubeClient; readonly net: PodNet; readonly podserve: Podserve },
  where: { readonly namespace: string; readonly name: string; readonly node: NodeNet; readonly ip: string },
  o: FakePodOptions = {},
  serve: { readonly accessLog?: boolean } = {},
): Promise<NetPod> {
  const { namespace, name, node, ip } = where;
  const created = await env.kube.create(`/api/v1/namespaces/${namespace}/pods`, fakePodManifest(namespace, name, o, node.name));
  const uid = (created['metadata'] as { uid: string }).uid;
  const sandbox = await env.net.attachPod(node.name, ip);
  await env.podserve.add({ pod: name, ip, netns: sandbox.netnsPath, ports: [{ port: o.port ?? 8080, name: 'http', kind: 'http' }], healthy: true, ...(serve.accessLog === true ? { accessLog: true } : {}) });
  await strategicPatch(env.kube, `/api/v1/namespaces/${namespace}/pods/${name}/status`, statusBody(uid, ip, 0, startedAgo(60_000), node.ip));
  return { namespace, name, uid, ip, node: node.name, netns: sandbox.netns };
}

const MAX_SPAWNS = 8;

/** Runs `ip` with `args`, the lines of `input` as a batch; resolves with its stdout. */
function ip(args: readonly string[], input: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile('ip', [...args, '-batch', '-'], { encoding: 'utf8' }, (err, out, stderr) => {
      if (err === null) resolve(out);
      else reject(new Error(`ip ${args.join(' ')} -batch: ${err.message} ${stderr.trim()}`));
    });
    child.stdin?.on('error', () => undefined); // EPIPE if ip exits first: its exit status reports it
    child.stdin?.end(input.map((l) => `${l}\n`).join(''));
  });
}

function macOf(json: string, what: string): string {
  const links = JSON.parse(json) as { ifname: string; address?: string }[];
  const mac = links[0]?.address;
  if (mac === undefined) throw new Error(`no MAC address for ${what}`);
  return mac;
}

/** Runs `f` over `items`, at most MAX_SPAWNS at once. */
async function pool<T>(items: readonly T[], f: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await f(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(MAX_SPAWNS, items.length) }, worker));
}

/**
 * Permanent ARP entries on both ends of every pod's link: in the pod, its gateway (the node's
 * bridge); in the node, the pod. One `ip` per pod and one per node.
 */
export async function pinNeighbours(net: PodNet, pods: readonly NetPod[]): Promise<void> {
  const bridgeMac = new Map<string, string>();
  for (const n of net.nodes) bridgeMac.set(n.name, macOf(await ip(['-j', '-n', n.netns], [`link show dev ${NODE_BRIDGE}`]), `${n.name} ${NODE_BRIDGE}`));
  const podMac = new Map<string, string>();
  await pool(pods, async (p) => {
    const node = net.nodeOf(p.node);
    const out = await ip(['-j', '-n', p.netns], [`neigh replace ${node.gateway} lladdr ${bridgeMac.get(node.name) ?? ''} dev eth0 nud permanent`, 'link show dev eth0']);
    podMac.set(p.name, macOf(out, `${p.name} eth0`));
  });
  await pool(net.nodes, async (n) => {
    const lines = pods.filter((p) => p.node === n.name).map((p) => `neigh replace ${p.ip} lladdr ${podMac.get(p.name) ?? ''} dev ${NODE_BRIDGE} nud permanent`);
    if (lines.length > 0) await ip(['-n', n.netns], lines);
  });
}
