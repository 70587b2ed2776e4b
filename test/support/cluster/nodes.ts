// Fake nodes managed by kwok, each with its own pod CIDR: 127.<X>.<i>.0/24 on the
// loopback plane (see podnet.ts), the node's /25 on the pod network (node-services.ts).
import type { KubeClient } from './kube.ts';

export function fakeNode(i: number, cidr: string): Record<string, unknown> {
  const name = `kwok-node-${i}`;
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      annotations: { 'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
      labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', type: 'kwok' },
    },
    spec: { podCIDR: cidr, podCIDRs: [cidr] },
  };
}

export async function createFakeNodes(kube: KubeClient, count: number, cidr: (i: number) => string): Promise<string[]> {
  const names: string[] = [];
  for (let i = 0; i < count; i++) {
    await kube.create('/api/v1/nodes', fakeNode(i, cidr(i)));
    names.push(`kwok-node-${i}`);
  }
  return names;
}

/** True when every named node has condition Ready=True. */
export async function nodesReady(kube: KubeClient, names: readonly string[]): Promise<boolean> {
  for (const name of names) {
    const node = await kube.get(`/api/v1/nodes/${name}`);
    const conds = ((node['status'] as { conditions?: { type: string; status: string }[] } | undefined)?.conditions) ?? [];
    if (!conds.some((c) => c.type === 'Ready' && c.status === 'True')) return false;
  }
  return true;
}
