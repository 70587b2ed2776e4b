// Real nodes in the local plane (issue 29 deliver 1; docs/adr/0047-real-nodes.md): two real
// kubelets with containerd and runc beside a kwok node register Ready, tainted and labelled;
// a pod that tolerates them runs there with an address of its node's podCIDR, is Ready by its
// kubelet's readinessProbe, answers through kube-proxy from another node and directly from the
// host, and `kubectl logs`/`exec` reach it through its kubelet; the host's kernel tunables are
// as before; stopping the plane leaves no namespace, cgroup or mount behind.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { after, afterEach, before, describe, it } from 'node:test';
import { request } from 'undici';
import { startServiceClient } from '../support/netclient/index.ts';
import { REAL_NODE_LABEL, REAL_NODE_TAINT, snapshotTunables } from '../support/realnode/index.ts';
import { condition, createNamespace, deployWeb, listPods, ok, startRealPlane, until } from './support.ts';
import type { RealPlane } from './support.ts';

interface NodeJson { metadata: { name: string; labels?: Record<string, string> }; spec: { taints?: { key: string; effect: string }[]; podCIDR?: string }; status: { nodeInfo: { kubeletVersion: string; containerRuntimeVersion: string }; conditions: { type: string; status: string }[]; addresses: { type: string; address: string }[] } }

describe('real nodes in the local plane', { timeout: 900_000 }, () => {
  let p: RealPlane;
  let prefix = '';
  let dir = '';
  const tunablesBefore = snapshotTunables();
  before(async () => {
    p = await startRealPlane(2);
    prefix = p.cp.net?.prefix ?? '';
    dir = p.cp.dir;
  });
  afterEach((t) => { if ((t as { passed?: boolean }).passed === false) p.failed(); }); // TestContext#passed (Node 24; not in @types/node 24.19)
  after(async () => {
    await p.stop();
  });

  it('two real kubelets v1.37 on containerd register Ready, tainted and labelled, beside the kwok node', async () => {
    const nodes = (await p.cp.kube.get('/api/v1/nodes'))['items'] as NodeJson[];
    const real = nodes.filter((n) => n.metadata.labels?.[REAL_NODE_LABEL.key] === REAL_NODE_LABEL.value);
    assert.deepEqual(real.map((n) => n.metadata.name).sort(), ['real-node-0', 'real-node-1']);
    assert.ok(nodes.some((n) => n.metadata.name === 'kwok-node-0'));
    for (const n of real) {
      assert.equal(n.status.nodeInfo.kubeletVersion, 'v1.37.2');
      assert.match(n.status.nodeInfo.containerRuntimeVersion, /^containerd:\/\//);
      assert.equal(n.status.conditions.find((c) => c.type === 'Ready')?.status, 'True');
      assert.ok(n.spec.taints?.some((t) => t.key === REAL_NODE_TAINT.key && t.effect === REAL_NODE_TAINT.effect));
      const ip = n.status.addresses.find((a) => a.type === 'InternalIP')?.address;
      assert.equal(ip, p.cp.net?.nodes.find((x) => x.name === n.metadata.name)?.ip);
    }
    assert.deepEqual(snapshotTunables(), tunablesBefore, 'the kernel tunables the kubelets set are back as they were');
  });

  it('a pod runs on a real node with an address of its bridge, Ready by its kubelet, reachable through kube-proxy and from the host; logs and exec work', async () => {
    await createNamespace(p, 'smoke', false);
    const { clusterIp } = await deployWeb(p, { namespace: 'smoke', replicas: 2, nodes: ['real-node-0', 'real-node-1'], spread: true });
    const pods = await until('2 pods Ready', async () => {
      const ps = await listPods(p.cp, 'smoke', 'app=web');
      return ps.length === 2 && ps.every((x) => condition(x, 'Ready') === 'True') ? ps : undefined;
    }, 180_000);
    for (const x of pods) {
      const node = p.cp.net?.nodes.find((n) => n.name === x.spec.nodeName);
      assert.ok(node !== undefined && x.status.podIP !== undefined);
      assert.equal(x.status.podIP.split('.').slice(0, 3).join('.'), node.subnet.split('.').slice(0, 3).join('.'), `${x.metadata.name} has an address of ${node.name}'s bridge`);
      const res = await request(`http://${x.status.podIP}:8080/`, { signal: AbortSignal.timeout(5000) });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['x-pod'], x.metadata.name);
      await res.body.dump();
      assert.match(ok(p.kubectl('logs', '-n', 'smoke', x.metadata.name), 'kubectl logs'), /podserve: serving/);
      const exec = p.kubectl('exec', '-n', 'smoke', x.metadata.name, '--', '/podserve', 'serve', 'bogus');
      assert.match(exec.stderr, /port "bogus": want KIND:PORT/, 'kubectl exec ran podserve in the container, through its kubelet');
    }
    const net = p.cp.net;
    const kwok = net?.nodes.find((n) => n.kind === 'kwok');
    assert.ok(net !== undefined && kwok !== undefined);
    const client = startServiceClient({ spawnIn: (ns, cmd, args, opts) => net.spawnIn(ns, cmd, args, opts), netns: kwok.netns, ip: clusterIp, port: 80 });
    try {
      await until('both pods answer the ClusterIP from the kwok node', () => {
        const seen = new Set(client.hits.map((h) => h.pod));
        return pods.every((x) => seen.has(x.metadata.name)) ? true : undefined;
      }, 30_000);
    } finally {
      await client.stop();
    }
  });

  it('stopping the plane removes the namespaces, cgroups and mounts of the real nodes', async () => {
    await p.stop();
    p = { ...p, stop: () => Promise.resolve() };
    const netns = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' }).split('\n').filter((l) => l.startsWith(`${prefix}-`));
    assert.deepEqual(netns, []);
    const cgroups = readdirSync('/sys/fs/cgroup/memory').filter((n) => n.startsWith(`${prefix}-`));
    assert.deepEqual(cgroups, []);
    const mounts = readFileSync('/proc/self/mountinfo', 'utf8').split('\n').filter((l) => l.includes(dir));
    assert.deepEqual(mounts, []);
  });
});
