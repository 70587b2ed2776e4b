// The e2e tier's fake pods on the pod network (test/e2e/support/net-pods.ts): a Pod object
// bound to its node with the node's address as hostIP, its IP from the node's podCIDR,
// served in its own namespace; pinned ARP entries on both ends; a removed pod refuses
// connections as a closed loopback server did. Needs root (skipped otherwise).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { startControlPlane } from '../support/cluster/index.ts';
import type { ControlPlane } from '../support/cluster/index.ts';
import { createPodNet, NODE_BRIDGE, podNetSupport } from '../support/podnet/index.ts';
import type { PodNet, Sandbox } from '../support/podnet/index.ts';
import { startPodserve } from '../support/podserve/index.ts';
import type { Podserve } from '../support/podserve/index.ts';
import { createNetPod, pinNeighbours, podIpOf } from '../e2e/support/net-pods.ts';
import type { NetPod } from '../e2e/support/net-pods.ts';
import { logsOnFailure } from '../support/replicas/index.ts';

const ns = 'net-pods';
const support = podNetSupport();

/** `curl` from a namespace of the net: the HTTP status, or `exit <code>` when no reply came. */
function curlFrom(net: PodNet, netns: string, url: string): Promise<string> {
  return new Promise((resolve) => {
    const child = net.spawnIn(netns, 'curl', ['-s', '-o', '/dev/null', '-w', '%{http_code}', '--max-time', '3', url], { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => { out += d; });
    child.once('exit', (code) => { resolve(code === 0 ? out : `exit ${String(code)}`); });
  });
}

function neighbours(netns: string): string {
  return execFileSync('ip', ['-n', netns, 'neigh', 'show'], { encoding: 'utf8' });
}

describe('fake pods on the pod network', { timeout: 120_000, skip: support.ok ? false : `no pod network on this machine: ${support.why}` }, () => {
  const logs = logsOnFailure('net-pods');
  let net: PodNet | undefined;
  let cp: ControlPlane | undefined;
  let podserve: Podserve | undefined;
  let client: Sandbox;
  const pods: NetPod[] = [];

  logs.setup(async () => {
    net = await createPodNet({ nodes: 2 });
    cp = await startControlPlane({ log: () => undefined, bindAddress: net.hostIp, serviceCidr: net.serviceCidr });
    logs.plane(cp);
    podserve = await startPodserve();
    await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    const env = { kube: cp.kube, net, podserve };
    for (const [i, node] of net.nodes.entries()) pods.push(await createNetPod(env, { namespace: ns, name: `web-${i}`, node, ip: podIpOf(node, i) }, { gate: 'outprobe.io/web' }));
    client = await net.sandbox(net.nodes[1]!.name, 'client');
  });

  logs.teardown(async () => {
    await podserve?.close();
    await cp?.stop();
    await net?.destroy();
  });

  it('hands out pod IPs from .1 upward in the node podCIDR, and no further', () => {
    const node = net!.nodes[0]!;
    const base = node.podCidr.split('/')[0]!.split('.').slice(0, 3).join('.');
    assert.equal(podIpOf(node, 0), `${base}.1`);
    assert.equal(podIpOf(node, 125), `${base}.126`);
    assert.throws(() => podIpOf(node, 126), RangeError);
    assert.throws(() => podIpOf(node, -1), RangeError);
  });

  it('writes the Pod as a kubelet of its node would: nodeName, podIP, hostIP the node address', async () => {
    for (const [i, p] of pods.entries()) {
      const obj = await cp!.kube.get(`/api/v1/namespaces/${ns}/pods/${p.name}`);
      const spec = obj['spec'] as { nodeName: string; readinessGates: { conditionType: string }[] };
      const status = obj['status'] as { podIP: string; hostIP: string; phase: string };
      assert.equal(spec.nodeName, net!.nodes[i]!.name);
      assert.deepEqual(spec.readinessGates, [{ conditionType: 'outprobe.io/web' }]);
      assert.deepEqual({ podIP: status.podIP, hostIP: status.hostIP, phase: status.phase }, { podIP: p.ip, hostIP: net!.nodes[i]!.ip, phase: 'Running' });
    }
  });

  it('pins both ends of each pod link as permanent ARP entries; the pods answer across nodes', async () => {
    await pinNeighbours(net!, pods);
    for (const p of pods) {
      const node = net!.nodeOf(p.node);
      assert.match(neighbours(p.netns), new RegExp(`^${node.gateway.replaceAll('.', '\\.')} dev eth0 lladdr \\S+ PERMANENT`, 'm'));
      const mac = (JSON.parse(execFileSync('ip', ['-j', '-n', p.netns, 'link', 'show', 'dev', 'eth0'], { encoding: 'utf8' })) as { address: string }[])[0]!.address;
      assert.match(neighbours(node.netns), new RegExp(`^${p.ip.replaceAll('.', '\\.')} dev ${NODE_BRIDGE} lladdr ${mac} PERMANENT`, 'm'));
      assert.equal(await curlFrom(net!, client.netns, `http://${p.ip}:8080/healthz`), '200', `${p.name} from ${client.netns}`);
    }
  });

  it('unhealthy answers 503 on a port that still accepts; removed refuses the connection', async () => {
    const p = pods[0]!;
    await podserve!.setHealthy(p.name, false);
    assert.equal(await curlFrom(net!, client.netns, `http://${p.ip}:8080/healthz`), '503');
    await podserve!.remove(p.name);
    assert.equal(await curlFrom(net!, client.netns, `http://${p.ip}:8080/healthz`), 'exit 7', 'curl exit 7: connection refused');
  });
});
