// The smallest network the kube-proxy test needs, laid out as ADR 0014 lays out a
// node (addresses of slot 31, 198.19.240.0/20): a fabric bridge in the root
// namespace holding the API server's address, one node namespace on it, and two pod
// namespaces on the node's bridge. Every name starts with the run's prefix; destroy()
// removes exactly what create() made, also after a partial create.
import { execFileSync } from 'node:child_process';

export const FABRIC_HOST = '198.19.240.1'; // root namespace; kube-apiserver binds here
export const NODE_IP = '198.19.240.2';
export const NODE_BRIDGE_IP = '198.19.241.254';
export const POD_IPS = ['198.19.241.1', '198.19.241.2'] as const;
export const CLUSTER_CIDR = '198.19.240.0/20';
export const SERVICE_CIDR = '198.19.255.0/24';

export interface TestNet {
  readonly prefix: string;
  readonly bridge: string;
  readonly nodeNs: string;
  readonly podNs: readonly string[];
  destroy(): void;
}

function ip(args: readonly string[]): string {
  return execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Why the test cannot run here, or undefined when it can. */
export function unsupportedReason(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root (network namespaces, veth, nftables)';
  try {
    ip(['netns', 'list']);
    execFileSync('nft', ['--version'], { stdio: 'ignore' });
  } catch (err) {
    return `ip netns / nft unavailable: ${err instanceof Error ? err.message : String(err)}`;
  }
  const used = ip(['-o', '-4', 'addr', 'show']) + ip(['-4', 'route', 'show']);
  if (/\b198\.19\.(24\d|25[0-5])\./.test(used)) return '198.19.240.0/20 is in use in the root namespace (another run?)';
  return undefined;
}

/** Creates the network; throws (after removing what it made) when a name already exists. */
export function createTestNet(prefix: string): TestNet {
  const bridge = `${prefix}fb`;
  const uplink = `${prefix}n0`;
  const nodeNs = `${prefix}-node`;
  const podNs = POD_IPS.map((_, i) => `${prefix}-p${i}`);
  const made = { bridge: false, ns: [] as string[] };
  const destroy = (): void => {
    for (const ns of [...made.ns].reverse()) {
      try { ip(['netns', 'del', ns]); } catch { /* already gone */ }
    }
    made.ns.length = 0;
    if (made.bridge) {
      try { ip(['link', 'del', bridge]); } catch { /* already gone */ }
      made.bridge = false;
    }
  };
  const addNs = (ns: string): void => { ip(['netns', 'add', ns]); made.ns.push(ns); };
  try {
    ip(['link', 'add', bridge, 'type', 'bridge']);
    made.bridge = true;
    ip(['addr', 'add', `${FABRIC_HOST}/24`, 'dev', bridge]);
    ip(['link', 'set', bridge, 'up']);
    addNs(nodeNs);
    ip(['link', 'add', uplink, 'type', 'veth', 'peer', 'name', 'uplink', 'netns', nodeNs]);
    ip(['link', 'set', uplink, 'master', bridge, 'up']);
    const n = ['-n', nodeNs];
    ip([...n, 'link', 'set', 'lo', 'up']);
    ip([...n, 'addr', 'add', `${NODE_IP}/24`, 'dev', 'uplink']);
    ip([...n, 'link', 'set', 'uplink', 'up']);
    ip([...n, 'link', 'add', 'br0', 'type', 'bridge']);
    ip([...n, 'addr', 'add', `${NODE_BRIDGE_IP}/24`, 'dev', 'br0']);
    ip([...n, 'link', 'set', 'br0', 'up']);
    // A local client's connect() needs a route to the ClusterIP before kube-proxy's
    // DNAT can rewrite it; via the fabric host it stays on the machine.
    ip([...n, 'route', 'add', SERVICE_CIDR, 'via', FABRIC_HOST]);
    podNs.forEach((ns, i) => {
      addNs(ns);
      ip([...n, 'link', 'add', `vp${i}`, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
      ip([...n, 'link', 'set', `vp${i}`, 'master', 'br0', 'up']);
      ip(['-n', ns, 'link', 'set', 'lo', 'up']);
      ip(['-n', ns, 'addr', 'add', `${POD_IPS[i] ?? ''}/24`, 'dev', 'eth0']);
      ip(['-n', ns, 'link', 'set', 'eth0', 'up']);
      ip(['-n', ns, 'route', 'add', '198.18.0.0/15', 'via', NODE_BRIDGE_IP]);
    });
  } catch (err) {
    destroy();
    throw err;
  }
  return { prefix, bridge, nodeNs, podNs, destroy };
}

/** Names of the root namespace's nftables tables, e.g. ['inet filter']. */
export function nftTables(netns?: string): string[] {
  const args = netns === undefined ? ['list', 'tables'] : ['netns', 'exec', netns, 'nft', 'list', 'tables'];
  const out = execFileSync(netns === undefined ? 'nft' : 'ip', args, { encoding: 'utf8' });
  return out.split('\n').map((l) => l.replace(/^table /, '').trim()).filter((l) => l !== '');
}

/** True when the link or namespace exists. */
export function exists(kind: 'link' | 'netns', name: string): boolean {
  if (kind === 'netns') return ip(['netns', 'list']).split('\n').some((l) => l.split(' ')[0] === name);
  try { ip(['link', 'show', name]); return true; } catch { return false; }
}
