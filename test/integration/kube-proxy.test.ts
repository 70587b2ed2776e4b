// kube-proxy (nftables mode) in a node namespace against the real kube-apiserver
// bound on a fabric bridge: a ClusterIP reaches the ready pods from the node; an
// endpoint that turns not-ready leaves the ClusterIP without a failed request and
// comes back when ready; the time from the EndpointSlice write to the rule change is
// measured on a one-endpoint Service (its ClusterIP refuses as soon as the endpoint
// is gone: one term of the partition latency); no rule lands in the root namespace.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { firstIp, killNow, kubeProxyConfig, netnsSpawn, startControlPlane, startKubeProxy, stopPids } from '../support/cluster/index.ts';
import type { ControlPlane, KubeProxy } from '../support/cluster/index.ts';
import {
  CLUSTER_CIDR, createTestNet, exists, FABRIC_HOST, NODE_IP, nftTables, POD_IPS, SERVICE_CIDR, unsupportedReason,
} from './support/kube-proxy-net.ts';
import type { TestNet } from './support/kube-proxy-net.ts';
import { logsOnFailure } from '../support/replicas/index.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const skip = unsupportedReason();
const prefix = `opkp${process.pid % 1000}`;
const nodeName = `${prefix}-node`;
const ns = 'kp-test';
const FLIPS = 3; // two-pod Service: no failed request, the pod leaves and comes back
const TIMED_FLIPS = 9; // one-pod Service: rule-update latency

interface Sample { readonly start: number; readonly end: number; readonly result: string }
type Target = 'web' | 'solo';

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)] ?? NaN;
};

/** The Service's endpoints: p0 with the given readiness, plus p1 (always ready) for 'web'. */
function endpoints(target: Target, ready0: boolean): unknown[] {
  const ips = target === 'web' ? POD_IPS : POD_IPS.slice(0, 1);
  return ips.map((ip, i) => ({ addresses: [ip], conditions: { ready: i === 0 ? ready0 : true }, nodeName }));
}

const slicePath = (t: Target): string => `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices/${t}-manual`;

/** Runs `node <args>` inside `netns`, its stdin a pipe so it exits with this process. */
function nodeIn(netns: string, args: readonly string[]): ChildProcess {
  return spawn('ip', ['netns', 'exec', netns, process.execPath, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
}

const SERVER = "require('http').createServer((q,r)=>r.end(process.argv[1])).listen(8080,process.argv[2]);" +
  "process.stdin.on('end',()=>process.exit(0));process.stdin.resume();";

describe('kube-proxy (nftables) in a node namespace', { skip: skip ?? false }, () => {
  const logs = logsOnFailure('kube-proxy');
  let net: TestNet | undefined;
  let cp: ControlPlane | undefined;
  let proxy: KubeProxy | undefined;
  const children: ChildProcess[] = [];
  const samples: Record<Target, Sample[]> = { web: [], solo: [] };
  const killAll = (): void => {
    for (const c of children) c.kill('SIGKILL');
    if (proxy !== undefined) killNow([proxy.pid]);
  };
  let rootTablesBefore: string[] = [];

  const waitFor = async (what: string, ok: () => boolean, ms: number): Promise<void> => {
    for (const deadline = Date.now() + ms; !ok();) {
      if (Date.now() > deadline) throw new Error(`timed out after ${ms}ms waiting for ${what}`);
      await sleep(10);
    }
  };
  const since = (target: Target, t: number): Sample[] => samples[target].filter((s) => s.start >= t);

  /** A Service without selector, its hand-written EndpointSlice, and a poller on its ClusterIP. */
  const serve = async (target: Target): Promise<void> => {
    const kube = cp!.kube;
    const svc = await kube.create(`/api/v1/namespaces/${ns}/services`, {
      apiVersion: 'v1', kind: 'Service', metadata: { name: target },
      spec: { ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] },
    });
    await kube.create(`/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`, {
      apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
      metadata: { name: `${target}-manual`, labels: { 'kubernetes.io/service-name': target, 'endpointslice.kubernetes.io/managed-by': 'outprobe-kube-proxy-test' } },
      addressType: 'IPv4', ports: [{ name: 'http', port: 8080, protocol: 'TCP' }], endpoints: endpoints(target, true),
    });
    const clusterIp = (svc['spec'] as { clusterIP: string }).clusterIP;
    const poller = nodeIn(net!.nodeNs, [path.join(HERE, 'support/http-poller.ts'), `http://${clusterIp}:80/`, '3', '300']);
    children.push(poller);
    createInterface({ input: poller.stdout! }).on('line', (line) => {
      const [start, end, result] = line.split(' ');
      samples[target].push({ start: Number(start), end: Number(end), result: result ?? '' });
    });
  };

  logs.setup(async () => {
    process.on('exit', killAll);
    rootTablesBefore = nftTables();
    net = createTestNet(prefix);
    cp = await startControlPlane({ bindAddress: FABRIC_HOST, serviceCidr: SERVICE_CIDR, log: () => undefined });
    logs.plane(cp);
    const kube = cp.kube;
    await kube.create('/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: nodeName } });
    // kube-proxy waits up to 30 s for the Node to carry an address before it starts.
    await kube.patch(`/api/v1/nodes/${nodeName}/status`, { status: { addresses: [{ type: 'InternalIP', address: NODE_IP }] } });
    net.podNs.forEach((pns, i) => { children.push(nodeIn(pns, ['-e', SERVER, `p${i}`, POD_IPS[i] ?? ''])); });
    const configPath = path.join(cp.dir, 'kube-proxy.yaml');
    writeFileSync(configPath, kubeProxyConfig({ nodeName, nodeIp: NODE_IP, clusterCidr: CLUSTER_CIDR, kubeconfigPath: cp.kubeconfigPath }));
    const t0 = Date.now();
    proxy = await startKubeProxy({
      bin: cp.binaries.kubeProxy, configPath, logFile: path.join(cp.dir, 'logs', 'kube-proxy.log'),
      spawn: netnsSpawn(net.nodeNs), healthzUrl: `http://${NODE_IP}:10256/healthz`,
    });
    process.stdout.write(`# kube-proxy healthy ${Date.now() - t0}ms after spawn\n`);
    await kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await serve('web');
    await serve('solo');
  });

  logs.teardown(async () => {
    for (const c of children) c.kill('SIGKILL');
    const errors: unknown[] = [];
    if (proxy !== undefined) await stopPids([proxy.pid]).catch((e: unknown) => errors.push(e));
    process.removeListener('exit', killAll);
    await cp?.stop({ keepDir: process.env['KEEP_KP_DIR'] === '1' }).catch((e: unknown) => errors.push(e));
    net?.destroy();
    if (net !== undefined) {
      for (const n of [net.nodeNs, ...net.podNs]) assert.equal(exists('netns', n), false, `namespace ${n} removed`);
      assert.equal(exists('link', net.bridge), false, 'fabric bridge removed');
    }
    if (errors.length > 0) throw errors[0] as Error;
  });

  it('a ClusterIP reaches both ready pods from the node namespace', async () => {
    const t0 = Date.now();
    await waitFor('both pods answering on the ClusterIP', () => {
      const seen = new Set(since('web', t0).map((s) => s.result));
      return seen.has('p0') && seen.has('p1');
    }, 15_000);
    await waitFor('the one-pod ClusterIP answering', () => since('solo', t0).some((s) => s.result === 'p0'), 15_000);
    const kubernetes = await cp!.kube.get('/api/v1/namespaces/default/services/kubernetes');
    assert.equal((kubernetes['spec'] as { clusterIP: string }).clusterIP, firstIp(SERVICE_CIDR), 'the plane hands out the given Service range');
    assert.equal(cp!.server.startsWith(`https://${FABRIC_HOST}:`), true, cp!.server);
  });

  it(`a not-ready endpoint stops getting requests and gets them again when ready, none failing (${FLIPS} flips)`, async () => {
    const kube = cp!.kube;
    for (let flip = 0; flip < FLIPS; flip++) {
      const tOut = Date.now();
      await kube.patch(slicePath('web'), { endpoints: endpoints('web', false) });
      // Settled once p0 has not answered for 1.5 s (some 300 requests, all to p1).
      await waitFor('p0 to leave the ClusterIP', () => {
        const seen = since('web', tOut);
        const lastP0 = seen.findLast((s) => s.result === 'p0')?.start ?? tOut;
        return (seen.at(-1)?.start ?? 0) - lastP0 > 1500;
      }, 20_000);
      const tBack = Date.now();
      await kube.patch(slicePath('web'), { endpoints: endpoints('web', true) });
      await waitFor('p0 to answer again', () => since('web', tBack).some((s) => s.result === 'p0'), 20_000);
      assert.deepEqual(since('web', tOut).filter((s) => s.result.startsWith('ERR')), [], 'no request failed');
    }
  });

  it(`times the rule update: EndpointSlice write → ClusterIP refuses / answers again (${TIMED_FLIPS} flips)`, async (t) => {
    const kube = cp!.kube;
    const outMs: number[] = [];
    const backMs: number[] = [];
    for (let flip = 0; flip < TIMED_FLIPS; flip++) {
      // Each change comes after a quiet period, as one readiness flip does; a change
      // within minSyncPeriod (100 ms) of the previous sync would wait for that period.
      await sleep(400);
      const tOut = Date.now();
      await kube.patch(slicePath('solo'), { endpoints: endpoints('solo', false) });
      await waitFor('the ClusterIP to refuse', () => since('solo', tOut).some((s) => s.result !== 'p0'), 10_000);
      const refused = since('solo', tOut).find((s) => s.result !== 'p0')!;
      assert.equal(refused.result, 'ERR:ECONNREFUSED', 'a Service without ready endpoints is rejected (nftables no-endpoints rule)');
      outMs.push(refused.end - tOut);
      await sleep(400);
      const tBack = Date.now();
      await kube.patch(slicePath('solo'), { endpoints: endpoints('solo', true) });
      await waitFor('the ClusterIP to answer', () => since('solo', tBack).some((s) => s.result === 'p0'), 10_000);
      backMs.push(since('solo', tBack).find((s) => s.result === 'p0')!.end - tBack);
    }
    const sorted = (xs: number[]): string => [...xs].sort((a, b) => a - b).join(', ');
    t.diagnostic(`ready:false → refused (ms, sorted): ${sorted(outMs)}; p50 ${median(outMs)}`);
    t.diagnostic(`ready:true → answered (ms, sorted): ${sorted(backMs)}; p50 ${median(backMs)}`);
    assert.ok(median(outMs) < 1000, `p50 ${median(outMs)}ms: a slice change reaches the rules well within a second`);
  });

  it('kube-proxy programs its tables only in the node namespace', () => {
    assert.ok(proxy !== undefined && proxy.exit === undefined, `kube-proxy still running (${proxy?.exit ?? 'never started'})`);
    const where = execFileSync('ip', ['netns', 'identify', String(proxy.pid)], { encoding: 'utf8' }).trim();
    assert.equal(where, net!.nodeNs, 'the kube-proxy process lives in the node namespace');
    assert.notEqual(readlinkSync(`/proc/${proxy.pid}/ns/net`), readlinkSync('/proc/self/ns/net'));
    const nodeTables = nftTables(net!.nodeNs);
    assert.ok(nodeTables.includes('ip kube-proxy'), `node namespace tables: ${nodeTables.join('; ')}`);
    const rootTables = nftTables();
    assert.deepEqual(rootTables.filter((x) => x.includes('kube-proxy')), [], `root namespace tables: ${rootTables.join('; ')}`);
    assert.deepEqual(rootTables, rootTablesBefore, 'root namespace tables unchanged');
  });
});
