// Issue 27, findings 1 and 2 on the pod network (docs/adr/0036-membership-proven-by-the-api-server.md,
// docs/adr/0037-peer-channel.md): two outprobe replicas (r1 on node 0, r2 on node 1) run from Pods
// of their Deployment, with API tokens of the fleet's ServiceAccount and pod-bound peer tokens;
// an attacker runs a fake peer in a sandbox of its own, owns a Running, Ready Pod of another
// Deployment at that sandbox's address (and a second one running as the fleet's own
// ServiceAccount), and writes the Leases of the hostile review: its own pods' Leases with
// far-future renewTimes, a copy of r2's holder naming its address, and twenty made-up members.
// 1. Token capture: the replicas keep each other as the only members; failing pods are confirmed
//    by the real peer and go False; the fake peer receives no request at all, so no API token
//    and no peer token; a peer-audience token bound to the attacker's pods is refused by a real
//    replica (403), a member's is accepted.
// 2. Flood: strangers send random tokens to r1's peer port and /metrics at a stated rate while r2
//    asks r1 for second opinions and a scraper reads /metrics with known tokens: every one of the
//    known requests succeeds; the strangers are shed.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { encodeClaim, leaseName, microTime, shardLabel, memberAnnotation } from '../../src/sharding/index.ts';
import { startControlPlane } from '../support/cluster/index.ts';
import type { ControlPlane } from '../support/cluster/index.ts';
import { installCrd } from '../integration/support/controller.ts';
import { conditionOf, waitFor } from '../integration/support/fake-kubelet.ts';
import { createPodNet, podNetSupport } from '../support/podnet/index.ts';
import type { PodNet, Sandbox } from '../support/podnet/index.ts';
import { startPodserve } from '../support/podserve/index.ts';
import type { Podserve } from '../support/podserve/index.ts';
import { createNetPod, pinNeighbours, podIpOf } from './support/net-pods.ts';
import type { NetPod } from './support/net-pods.ts';
import { createFleet, peerAudience, requestToken, tokenKubeconfig } from '../support/fleet/index.ts';
import type { Fleet, FleetPod } from '../support/fleet/index.ts';
import type { FloodResult, FloodSpec } from '../support/fleet/flood.ts';

const mainPath = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
const floodPath = fileURLToPath(new URL('../support/fleet/flood.ts', import.meta.url));
const fakePeerPath = fileURLToPath(new URL('../support/fleet/fake-peer.ts', import.meta.url));
const ns = 'peer-trust-e2e';
const gate = 'outprobe.io/web';
const ids = ['r1', 'r2'];
const podCount = 6;
/** The stated flood: strangers at 300 requests a second (150 to the peer port, 150 to /metrics) for 20 s. */
const strangerRate = 300;
const floodSeconds = 20;
const log = (m: string): void => void process.stderr.write(`# ${m}\n`);

interface Proc {
  readonly name: string;
  readonly child: ChildProcess;
  readonly lines: { readonly at: number; readonly o: Record<string, unknown> }[];
  readonly exited: Promise<number | null>;
}

function watch(name: string, child: ChildProcess): Proc {
  const p: Proc = { name, child, lines: [], exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))) };
  createInterface({ input: child.stdout! }).on('line', (line) => {
    try {
      p.lines.push({ at: Date.now(), o: JSON.parse(line) as Record<string, unknown> });
    } catch {
      p.lines.push({ at: Date.now(), o: { msg: line } });
    }
  });
  createInterface({ input: child.stderr! }).on('line', (line) => p.lines.push({ at: Date.now(), o: { msg: `stderr: ${line}` } }));
  return p;
}

const support = podNetSupport();

describe('peer trust: forged members, token capture and floods (pod network, real kube-apiserver)', {
  timeout: 300_000,
  skip: support.ok ? false : `no pod network on this machine: ${support.why}`,
}, () => {
  let net: PodNet | undefined;
  let cp: ControlPlane | undefined;
  let podserve: Podserve | undefined;
  let fleet: Fleet | undefined;
  let attackerFleet: Fleet | undefined;
  let impostorFleet: Fleet | undefined;
  const tmp = mkdtempSync(path.join(tmpdir(), 'peer-trust-e2e-'));
  const pods: NetPod[] = [];
  const replicas = new Map<string, Proc & { readonly sandbox: Sandbox; readonly pod: FleetPod; metricsPort: number | undefined }>();
  const procs: Proc[] = [];
  let fakePeer: Proc | undefined;
  let attacker: Sandbox | undefined;
  let attackerPod: FleetPod | undefined;
  let impostorPod: FleetPod | undefined;
  let apiToken = '';
  let failed = false;

  const spawnIn = (name: string, sandbox: Sandbox, args: string[], env: Record<string, string> = {}): Proc => {
    const p = watch(name, net!.spawnIn(sandbox.netns, process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } }));
    procs.push(p);
    return p;
  };
  const runFlood = async (name: string, sandbox: Sandbox, spec: FloodSpec): Promise<FloodResult> => {
    const p = spawnIn(name, sandbox, [floodPath, JSON.stringify(spec)]);
    await p.exited;
    const out = p.lines.find((l) => 'sent' in l.o)?.o;
    if (out === undefined) throw new Error(`${name} printed no result: ${p.lines.map((l) => JSON.stringify(l.o)).join('\n')}`);
    return out as unknown as FloodResult;
  };
  const membersOf = (r: Proc): string | undefined => {
    const last = r.lines.filter((l) => l.o['msg'] === 'shard membership changed').at(-1);
    return last === undefined ? undefined : (last.o['members'] as string[]).join(',');
  };
  const gates = async (): Promise<Map<string, string>> => {
    const list = await cp!.kube.get(`/api/v1/namespaces/${ns}/pods?labelSelector=app%3Dweb`);
    return new Map(((list['items'] ?? []) as Record<string, unknown>[]).map((i) => [(i['metadata'] as { name: string }).name, conditionOf(i, gate)?.status ?? 'absent']));
  };

  before(async () => {
    const t0 = Date.now();
    net = await createPodNet({ nodes: 2, log });
    cp = await startControlPlane({ log: () => undefined, bindAddress: net.hostIp, serviceCidr: net.serviceCidr });
    podserve = await startPodserve({ log });
    await installCrd(cp.kube);
    await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    fleet = await createFleet(cp.kube, { namespace: ns });
    // The replicas' API credential: a token of the fleet's ServiceAccount (cluster-admin here), as in a pod; it may read /metrics.
    await cp.kube.create('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'peer-trust-e2e' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ kind: 'ServiceAccount', name: 'outprobe', namespace: ns }],
    });
    apiToken = await fleet.apiToken();
    const kubeconfig = path.join(tmp, 'sa-kubeconfig');
    writeFileSync(kubeconfig, tokenKubeconfig(cp.kubeconfig, apiToken, ns), { mode: 0o600 });
    await cp.kube.create(`/apis/outprobe.io/v1alpha1/namespaces/${ns}/probepolicies`, {
      apiVersion: 'outprobe.io/v1alpha1', kind: 'ProbePolicy', metadata: { name: 'web', namespace: ns },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        readiness: { conditionType: gate, maxUnreadyPercent: 100, probe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 1, failureThreshold: 2, timeoutSeconds: 1 } },
        // Two replicas on two nodes: under the default spread (node) the only peer of an owner runs on the
        // pod's node and is never asked (vantage, ADR 0040). This test is about the peer channel's trust.
        vantage: { spread: 'any' },
      },
    });
    const env = { kube: cp.kube, net, podserve };
    for (let k = 0; k < podCount; k++) {
      const node = net.nodes[k % 2]!;
      pods.push(await createNetPod(env, { namespace: ns, name: `web-${k}`, node, ip: podIpOf(node, Math.floor(k / 2)) }, { gate }));
    }
    await pinNeighbours(net, pods);
    for (const [i, id] of ids.entries()) {
      const node = net.nodes[i]!.name;
      const sandbox = await net.sandbox(node, `outprobe-${id}`);
      const pod = await fleet.addReplica(id, { ip: sandbox.ip, node });
      const args = [mainPath, '--kubeconfig', kubeconfig, '--identity', id, '--namespace', ns, '--lease-namespace', ns, ...fleet.args(pod), '--peer-addr', `${sandbox.ip}:9444`,
        '--allowed-probe-cidrs', net.clusterCidr, '--metrics-addr', `${sandbox.ip}:8080`, '--metrics-auth', 'kubernetes',
        '--lease-duration', '8', '--lease-renew-interval', '1', '--status-interval', '1', '--log-level', 'debug'];
      const p = spawnIn(id, sandbox, args, fleet.env(pod));
      replicas.set(id, Object.assign(p, { sandbox, pod, metricsPort: 8080 }));
    }
    // The attacker: a sandbox on node 0 with a fake peer on the peer port, and Pods it controls at that address.
    attacker = await net.sandbox(net.nodes[0]!.name, 'attacker');
    fakePeer = spawnIn('fake-peer', attacker, [fakePeerPath, attacker.ip, '9444']);
    attackerFleet = await createFleet(cp.kube, { namespace: ns, name: 'attacker', serviceAccount: 'attacker', labels: { app: 'attacker' } });
    attackerPod = await attackerFleet.addReplica('attacker-0', { ip: attacker.ip, node: net.nodes[0]!.name });
    // Worse: a Pod of another Deployment running as the fleet's own ServiceAccount.
    impostorFleet = await createFleet(cp.kube, { namespace: ns, name: 'impostor', serviceAccount: 'outprobe', labels: { app: 'impostor' } });
    impostorPod = await impostorFleet.addReplica('imp-0', { ip: attacker.ip, node: net.nodes[0]!.name });
    log(`pod network, API server, ${podCount} pods, 2 replicas and the attacker up in ${Date.now() - t0} ms`);
  });

  after(async () => {
    if (failed || process.env['PEER_TRUST_E2E_LOGS'] !== undefined) {
      for (const p of procs) process.stderr.write(`--- ${p.name}\n${p.lines.slice(-200).map((l) => JSON.stringify({ t: l.at, ...l.o })).join('\n')}\n`);
    }
    for (const p of procs) p.child.kill('SIGKILL');
    await Promise.all(procs.map((p) => p.exited));
    await podserve?.close();
    await cp?.stop();
    await net?.destroy();
    rmSync(tmp, { recursive: true, force: true });
    for (const f of [fleet, attackerFleet, impostorFleet]) f?.cleanup();
  });

  it('forged Leases make no member, the fake peer receives no credential, and no peer token of a non-member is accepted', async () => {
    try {
      const [r1, r2] = [replicas.get('r1')!, replicas.get('r2')!];
      await waitFor('r1 and r2 members of each other', () => Promise.resolve(membersOf(r1) === 'r1,r2' && membersOf(r2) === 'r1,r2'), 60_000, 100);
      await waitFor('every gate True', async () => [...(await gates()).values()].every((s) => s === 'True'), 60_000, 250);
      const leases = `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`;
      const forge = (name: string, holder: string, claim: string): Promise<Record<string, unknown>> => cp!.kube.create(leases, {
        apiVersion: 'coordination.k8s.io/v1', kind: 'Lease',
        metadata: { name, namespace: ns, labels: { [shardLabel]: 'true' }, annotations: { [memberAnnotation]: claim, 'outprobe.io/peer': JSON.stringify({ a: `${attacker!.ip}:9444`, f: 0, t: 0, r: ['r1', 'r2'] }) } },
        spec: { holderIdentity: holder, leaseDurationSeconds: 8, renewTime: microTime(Date.now() + 365 * 86_400_000) },
      });
      const attackerClaim = (p: FleetPod): string => encodeClaim({ podUid: p.uid, nodeName: p.node, podIP: p.ip });
      await forge(leaseName('attacker-0'), 'attacker-0', attackerClaim(attackerPod!));
      await forge(leaseName('imp-0'), 'imp-0', attackerClaim(impostorPod!));
      await forge('outprobe-shard-r2-evil', 'r2', encodeClaim({ podUid: r2.pod.uid, nodeName: r2.pod.node, podIP: attacker!.ip }));
      for (let i = 0; i < 20; i++) await forge(leaseName(`ghost-${i}`), `ghost-${i}`, encodeClaim({ podUid: `u-${i}`, nodeName: 'node-x', podIP: attacker!.ip }));
      const rejected = (r: Proc): Set<string> => new Set(r.lines.filter((l) => l.o['msg'] === 'shard Lease rejected: not a member').map((l) => String(l.o['lease'])));
      await waitFor('all 23 forged Leases rejected by both replicas', () => Promise.resolve(rejected(r1).size === 23 && rejected(r2).size === 23), 20_000, 100);
      assert.equal(membersOf(r1), 'r1,r2');
      assert.equal(membersOf(r2), 'r1,r2');

      // Failing pods: their owners ask the other replica, which agrees; the gates go False.
      const failing = pods.slice(0, 2);
      for (const p of failing) await podserve!.setHealthy(p.name, false);
      await waitFor('failing pods False', async () => {
        const g = await gates();
        return failing.every((p) => g.get(p.name) === 'False');
      }, 30_000, 250);
      const agreed = [...replicas.values()].flatMap((r) => r.lines.filter((l) => l.o['msg'] === 'second opinion agreed: acting on the failure').map((l) => `${r.name}→${String(l.o['peer'])}`));
      log(`second opinions agreed: ${agreed.join(', ')}`);
      assert.ok(agreed.length >= 2 && agreed.every((a) => a === 'r1→r2' || a === 'r2→r1'), `asked only the real peer: ${agreed.join(', ')}`);
      for (const p of failing) await podserve!.setHealthy(p.name, true);
      const received = fakePeer!.lines.filter((l) => 'method' in l.o);
      assert.deepEqual(received.map((l) => l.o), [], 'the fake peer received no request (no ask, no peer check, no token)');

      // A peer-audience token bound to the attacker's pods is refused; a member's is accepted.
      const ask = async (token: string): Promise<number> => {
        const res = await fetch(`http://${r1.sandbox.ip}:9444/v1/second-opinion`, {
          method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: JSON.stringify({ policy: `${ns}/web`, podUID: pods[2]!.uid, probe: 'readiness' }),
        });
        await res.body?.cancel();
        return res.status;
      };
      const tokenOf = (sa: string, p: FleetPod): Promise<string> => requestToken(cp!.kube, ns, sa, { audiences: [peerAudience], pod: { name: p.name, uid: p.uid } });
      assert.equal(await ask(await tokenOf('attacker', attackerPod!)), 403, 'a pod of another Deployment and ServiceAccount');
      assert.equal(await ask(await tokenOf('outprobe', impostorPod!)), 403, 'a pod of another Deployment running as the fleet\'s ServiceAccount');
      assert.equal(await ask(apiToken), 401, 'the fleet\'s API token is not a peer token');
      assert.equal(await ask(await tokenOf('outprobe', r2.pod)), 200, 'r2\'s pod-bound peer token');
      const text = [...replicas.values()].flatMap((r) => r.lines.map((l) => JSON.stringify(l.o))).join('\n');
      assert.equal(text.includes(apiToken), false, 'no token in any log');
    } catch (err: unknown) {
      failed = true;
      throw err;
    }
  });

  it(`a flood of strangers (${strangerRate} requests/s on the peer port and /metrics) starves neither a known peer nor a known scraper`, async () => {
    try {
      const r1 = replicas.get('r1')!;
      const r2 = replicas.get('r2')!;
      const peerUrl = `http://${r1.sandbox.ip}:9444/v1/second-opinion`;
      const metricsUrl = `http://${r1.sandbox.ip}:${r1.metricsPort ?? 0}/metrics`;
      const body = JSON.stringify({ policy: `${ns}/web`, podUID: pods[3]!.uid, probe: 'readiness' });
      const r2Token = await requestToken(cp!.kube, ns, 'outprobe', { audiences: [peerAudience], pod: { name: r2.pod.name, uid: r2.pod.uid } });
      // Known before the flood: one ask and one scrape.
      const warm = await Promise.all([
        runFlood('warm-peer', r2.sandbox, { targets: [{ url: peerUrl, method: 'POST', body }], rate: 1, seconds: 1, concurrency: 1, mode: 'token', token: r2Token }),
        runFlood('warm-scrape', attacker!, { targets: [{ url: metricsUrl, method: 'GET' }], rate: 1, seconds: 1, concurrency: 1, mode: 'token', token: apiToken }),
      ]);
      assert.deepEqual(warm.map((w) => Object.values(w.statuses)[0]), [{ 200: 1 }, { 200: 1 }], 'the peer and the scraper are served before the flood');
      const [strangers, peer, scraper] = await Promise.all([
        runFlood('strangers', attacker!, { targets: [{ url: peerUrl, method: 'POST', body }, { url: metricsUrl, method: 'GET' }], rate: strangerRate, seconds: floodSeconds, concurrency: 128, mode: 'stranger' }),
        // r2 asks r1 from its own pod address, ten times a second.
        runFlood('peer', r2.sandbox, { targets: [{ url: peerUrl, method: 'POST', body }], rate: 10, seconds: floodSeconds, concurrency: 4, mode: 'token', token: r2Token }),
        runFlood('scraper', attacker!, { targets: [{ url: metricsUrl, method: 'GET' }], rate: 2, seconds: floodSeconds, concurrency: 2, mode: 'token', token: apiToken }),
      ]);
      const share = (r: FloodResult, url: string, status: string): string => `${r.statuses[url]?.[status] ?? 0}/${Object.values(r.statuses[url] ?? {}).reduce((a, b) => a + b, 0)}`;
      log(`strangers: ${strangers.sent} requests in ${strangers.seconds.toFixed(1)} s = ${strangers.rate.toFixed(0)}/s; peer port ${JSON.stringify(strangers.statuses[peerUrl])}, /metrics ${JSON.stringify(strangers.statuses[metricsUrl])}`);
      log(`known peer (r2 → r1): ${share(peer, peerUrl, '200')} answered 200, latency p50 ${peer.latencyMs[peerUrl]?.p50} ms max ${peer.latencyMs[peerUrl]?.max} ms; scraper: ${share(scraper, metricsUrl, '200')} answered 200, p50 ${scraper.latencyMs[metricsUrl]?.p50} ms max ${scraper.latencyMs[metricsUrl]?.max} ms`);
      assert.ok(strangers.rate >= 200, `the flood held ${strangers.rate.toFixed(0)} requests/s (stated: at least 200)`);
      assert.deepEqual(Object.keys(peer.statuses[peerUrl] ?? {}), ['200'], `every ask of the known peer answered 200: ${JSON.stringify(peer.statuses)}`);
      assert.deepEqual(Object.keys(scraper.statuses[metricsUrl] ?? {}), ['200'], `every scrape answered 200: ${JSON.stringify(scraper.statuses)}`);
      assert.ok((peer.statuses[peerUrl]?.['200'] ?? 0) >= floodSeconds * 10 * 0.9, 'the peer sent its asks throughout');
      for (const url of [peerUrl, metricsUrl]) assert.ok((strangers.statuses[url]?.['429'] ?? 0) > 0, `strangers were shed on ${url}`);
    } catch (err: unknown) {
      failed = true;
      throw err;
    }
  });
});
