// What runs on each node of the pod network (ADR 0014), inside the node's network
// namespace: the node agent (the kubelet's part for readiness:
// test/support/node-agent) and kube-proxy in nftables mode. Both are plane
// components: started through the plane's `start` (so they are in pids.json, killed
// with the plane, and outlive a detached `cluster:up`), with `ip netns exec`, which
// execs in place, so each recorded PID is the process itself.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { NodeNet, PodNet } from '../podnet/index.ts';
import type { Binaries } from './bins.ts';
import { REPO_ROOT } from './bins.ts';
import type { KubeClient } from './kube.ts';
import { fakeNode } from './nodes.ts';
import { kubeProxyConfig } from './kube-proxy.ts';
import type { Component } from './proc.ts';
import { waitReady } from './wait.ts';

export type StartComponent = (name: string, bin: string, args: string[]) => Component;

/** The Node objects of the pod network: pod CIDR and InternalIP from the plan. */
export async function createNetworkNodes(kube: KubeClient, net: PodNet): Promise<string[]> {
  const kwokNodes = net.nodes.filter((n) => n.kind === 'kwok'); // real nodes are registered by their kubelet
  for (const n of kwokNodes) {
    await kube.create('/api/v1/nodes', fakeNode(n.index, n.podCidr)); // named kwok-node-<i>, as the plan names it
    // Before kwok's node-initialize stage adds 127.0.0.1 (its --node-ip): addresses merge by type.
    await kube.patch(`/api/v1/nodes/${n.name}/status`, {
      status: { addresses: [{ type: 'InternalIP', address: n.ip }, { type: 'Hostname', address: n.name }] },
    }, 'strategic');
  }
  return kwokNodes.map((n) => n.name);
}

/** Re-asserts each node's InternalIP if kwok's first stage replaced it; true once all show theirs. */
export async function nodeAddressesSet(kube: KubeClient, net: PodNet): Promise<boolean> {
  let ok = true;
  for (const n of net.nodes.filter((x) => x.kind === 'kwok')) {
    const node = await kube.get(`/api/v1/nodes/${n.name}`);
    const addrs = ((node['status'] as { addresses?: { type: string; address: string }[] } | undefined)?.addresses) ?? [];
    if (addrs.some((a) => a.type === 'InternalIP' && a.address === n.ip)) continue;
    ok = false;
    await kube.patch(`/api/v1/nodes/${n.name}/status`, { status: { addresses: [{ type: 'InternalIP', address: n.ip }] } }, 'strategic');
  }
  return ok;
}

export interface NodeServicesOptions {
  readonly net: PodNet;
  readonly binaries: Binaries;
  readonly kubeconfigPath: string;
  readonly dir: string;
  readonly start: StartComponent;
  readonly log: (m: string) => void;
  /** The nodes to serve (default: every kwok node); a real node gets kube-proxy only (its kubelet is the agent). */
  readonly nodes?: readonly NodeNet[];
}

function inNode(netns: string, bin: string, args: readonly string[]): { bin: string; args: string[] } {
  return { bin: 'ip', args: ['netns', 'exec', netns, bin, ...args] };
}

async function healthz(url: string): Promise<boolean> {
  const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
  await res.body?.cancel();
  return res.status === 200;
}

/** Starts a node agent (kwok nodes) and a kube-proxy on each node; resolves when every kube-proxy synced once. */
export async function startNodeServices(o: NodeServicesOptions): Promise<Component[]> {
  const agentScript = path.join(REPO_ROOT, 'scripts/node-agent.ts');
  const started: Component[] = [];
  const proxies: { c: Component; url: string }[] = [];
  const nodes = o.nodes ?? o.net.nodes.filter((n) => n.kind === 'kwok');
  for (const n of nodes) {
    if (n.kind === 'kwok') {
      const agent = inNode(n.netns, process.execPath, [agentScript, '--kubeconfig', o.kubeconfigPath, '--node', n.name]);
      started.push(o.start(`node-agent-${n.index}`, agent.bin, agent.args));
    }
    const config = path.join(o.dir, `kube-proxy-${n.index}.yaml`);
    writeFileSync(config, kubeProxyConfig({ nodeName: n.name, nodeIp: n.ip, clusterCidr: o.net.clusterCidr, kubeconfigPath: o.kubeconfigPath }));
    const proxy = inNode(n.netns, o.binaries.kubeProxy, [`--config=${config}`]);
    const c = o.start(`kube-proxy-${n.index}`, proxy.bin, proxy.args);
    started.push(c);
    proxies.push({ c, url: `http://${n.ip}:10256/healthz` });
  }
  // kube-proxy's healthz listens in the node's namespace; the root namespace reaches it over the fabric.
  for (const p of proxies) await waitReady(p.c, () => healthz(p.url), 60_000);
  o.log(`${nodes.some((n) => n.kind === 'kwok') ? 'node agents and ' : ''}kube-proxies (nftables) running on ${nodes.map((n) => n.name).join(', ')}`);
  return started;
}
