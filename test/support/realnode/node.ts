// Starts one real node (docs/adr/0047-real-nodes.md): its cgroup root, containerd in
// the node's network namespace with the node's CNI network, the images imported, and
// the kubelet beside it, registered as the node with a client certificate of its own.
// Both run through `nsenter --net` (only the network namespace: `ip netns exec` would
// remount /sys and hide the cgroup hierarchies the kubelet and runc need), as plane
// components, so they are recorded, stopped with the plane and outlive a detached
// `cluster:up`.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { cgroupHierarchies } from '../podnet/host-state.ts';
import type { NodeNet, PodNet } from '../podnet/index.ts';
import { importImage } from '../images/index.ts';
import type { WrittenImage } from '../images/index.ts';
import { cniConfig, containerdConfig, kubeletArgs, kubeletConfig, nodePaths, type RealNodeSpec } from './config.ts';

const run = promisify(execFile);

export interface Component {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  exit: string | undefined;
}
export type StartComponent = (name: string, bin: string, args: string[]) => Component;

export interface RealNodeDeps {
  readonly net: PodNet;
  /** The plane's directory; the node's is <dir>/nodes/<name>. */
  readonly planeDir: string;
  readonly kubelet: string;
  /** Writes a kubeconfig for this node's identity (system:node:<name>) and returns its path. */
  readonly nodeKubeconfig: (nodeName: string, file: string) => void;
  readonly clientCaFile: string;
  readonly images: readonly WrittenImage[];
  readonly pauseImage: string;
  readonly start: StartComponent;
  readonly log: (m: string) => void;
  /** Resolves true once the Node object reports Ready=True. */
  readonly nodeReady: (name: string) => Promise<boolean>;
}

export interface RealNode {
  readonly node: NodeNet;
  readonly spec: RealNodeSpec;
  readonly containerd: Component;
  readonly kubelet: Component;
  readonly containerdSocket: string;
}

function lastOctetIp(subnet: string, last: number): string {
  const base = subnet.split('/')[0] ?? '';
  return `${base.split('.').slice(0, 3).join('.')}.${last}`;
}

export function specFor(n: NodeNet, deps: Pick<RealNodeDeps, 'net' | 'planeDir' | 'clientCaFile' | 'pauseImage'>, bridge: string): RealNodeSpec {
  const dir = path.join(deps.planeDir, 'nodes', n.name);
  return {
    name: n.name, netns: n.netns, ip: n.ip, subnet: n.subnet, gateway: n.gateway,
    rangeStart: lastOctetIp(n.subnet, 1), rangeEnd: lastOctetIp(n.subnet, 126), bridge, dir,
    cgroup: `${deps.net.prefix}-${n.name}`, pauseImage: deps.pauseImage,
    kubeconfig: path.join(dir, 'kubeconfig'), clientCaFile: deps.clientCaFile,
  };
}

/** Creates the node's cgroup under every hierarchy (cpuset's cpus and mems copied from the parent, as v1 requires). */
export function createCgroup(name: string): void {
  for (const h of cgroupHierarchies()) {
    const d = path.join(h, name);
    mkdirSync(d, { recursive: true });
    if (path.basename(h) !== 'cpuset') continue;
    for (const f of ['cpuset.cpus', 'cpuset.mems']) {
      if (readFileSync(path.join(d, f), 'utf8').trim() === '') writeFileSync(path.join(d, f), readFileSync(path.join(h, f), 'utf8'));
    }
  }
}

function nsenter(netns: string, bin: string, args: readonly string[]): string[] {
  return [`--net=/run/netns/${netns}`, '--', bin, ...args];
}

async function ctrOk(socket: string): Promise<boolean> {
  try {
    await run('ctr', ['--address', socket, 'version'], { timeout: 5000 });
    return true;
  } catch {
    return false;
  }
}

async function until(c: Component, what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (c.exit !== undefined) throw new Error(`${c.name} exited (${c.exit}) before ${what}; log: ${c.logFile}\n${tailOf(c.logFile)}`);
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${c.name}: not ${what} after ${timeoutMs / 1000} s; log: ${c.logFile}\n${tailOf(c.logFile)}`);
    await sleep(250);
  }
}

function tailOf(file: string, lines = 25): string {
  try { return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n'); } catch { return ''; }
}

/** Starts containerd and the kubelet of real node `n`; resolves once the Node is Ready. */
export async function startRealNode(n: NodeNet, deps: RealNodeDeps, bridge: string): Promise<RealNode> {
  if (n.kind !== 'real') throw new Error(`${n.name} is not a real node`);
  const spec = specFor(n, deps, bridge);
  const p = nodePaths(spec.dir);
  deps.net.record({ kind: 'mounts', dir: spec.dir });
  deps.net.record({ kind: 'cgroup', name: spec.cgroup });
  for (const d of [spec.dir, p.cniConfDir, p.podLogs, p.kubeletRoot]) mkdirSync(d, { recursive: true });
  createCgroup(spec.cgroup);
  writeFileSync(p.containerdConfig, containerdConfig(spec));
  writeFileSync(path.join(p.cniConfDir, '10-outprobe.conflist'), cniConfig(spec));
  writeFileSync(p.kubeletConfig, kubeletConfig(spec));
  deps.nodeKubeconfig(n.name, spec.kubeconfig);
  const t0 = Date.now();
  const containerd = deps.start(`containerd-${n.name}`, 'nsenter', nsenter(n.netns, 'containerd', ['--config', p.containerdConfig]));
  await until(containerd, 'serving', () => ctrOk(p.containerdSocket), 30_000);
  for (const img of deps.images) await importImage('ctr', p.containerdSocket, img.archive);
  deps.log(`${n.name}: containerd up, ${deps.images.length} images imported in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  const kubelet = deps.start(`kubelet-${n.name}`, 'nsenter', nsenter(n.netns, deps.kubelet, kubeletArgs(spec)));
  await until(kubelet, 'Ready', () => deps.nodeReady(n.name), 120_000);
  deps.log(`${n.name}: kubelet Ready (${((Date.now() - t0) / 1000).toFixed(1)} s after containerd started)`);
  if (!existsSync(p.containerdSocket)) throw new Error(`${n.name}: containerd socket vanished`);
  return { node: n, spec, containerd, kubelet, containerdSocket: p.containerdSocket };
}
