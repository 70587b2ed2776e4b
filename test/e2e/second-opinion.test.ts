// The second opinion (issue 13, deliver 3; docs/adr/0018-second-opinion.md) on the pod network
// (docs/adr/0014-pod-network.md): three outprobe replicas, each in a sandbox on its own node,
// running with a ServiceAccount token (as in a pod: the peers' endpoint checks it with a
// TokenReview against the replica's own username), 9+ pods served by podserve, a gated
// ProbePolicy (readiness every 1 s, timeout 1 s, failureThreshold 3).
// 1. One pod cut off from its owner's sandbox only (`degrade` from that sandbox to the pod):
//    the owner's probes fail, the next replica in the pod's rendezvous order still reaches it:
//    the gate stays True and the pod gets a SecondOpinionDisagreed Event.
// 2. Healed, then the pod cut off from every other node (`isolatePod`; the pod is chosen so
//    that neither the owner nor the asked replica runs on its node): the peer agrees and the
//    gate goes False within period × failureThreshold + the measured second-opinion delay +
//    a stated slack.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { ranked } from '../../src/sharding/index.ts';
import { startControlPlane } from '../support/cluster/index.ts';
import type { ControlPlane } from '../support/cluster/index.ts';
import { installCrd } from '../integration/support/controller.ts';
import { conditionOf, waitFor } from '../integration/support/fake-kubelet.ts';
import { createPodNet, podNetSupport } from '../support/podnet/index.ts';
import type { PodNet, Sandbox } from '../support/podnet/index.ts';
import { startPodserve } from '../support/podserve/index.ts';
import { logsOnFailure } from '../support/replicas/index.ts';
import type { Podserve } from '../support/podserve/index.ts';
import { createNetPod, pinNeighbours, podIpOf } from './support/net-pods.ts';
import type { NetPod } from './support/net-pods.ts';
import { createFleet, peerAudience, requestToken } from '../support/fleet/index.ts';
import type { Fleet, FleetPod } from '../support/fleet/index.ts';

const mainPath = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
const ns = 'second-opinion-e2e';
const gate = 'outprobe.io/web';
/** At least this many pods; more (up to 30) until one has its owner and asked replica off its node (each pod: 1 in 3). */
const minPods = 9;
const nodeCount = 3;
const ids = ['r1', 'r2', 'r3'];
const periodMs = 1000;
const failureThreshold = 3;
/**
 * What the bound leaves out: the first probe after the cut may start up to one period later (1 s);
 * the ADR 0017 peer write guard waits for a peer check that starts after the failure (up to one
 * check interval plus its timeout, 1.5 s); the test polls every 100 ms. 2.6 s, rounded up.
 */
const slackMs = 3000;
const log = (m: string): void => void process.stderr.write(`# ${m}\n`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Replica {
  readonly id: string;
  readonly sandbox: Sandbox;
  readonly child: ChildProcess;
  readonly lines: { readonly at: number; readonly o: Record<string, unknown> }[];
  readonly exited: Promise<number | null>;
  port: number | undefined;
}

/** A replica of the fleet's Deployment, from its Pod (ADR 0036), asking its peers with its pod-bound peer token (ADR 0037). */
function startReplica(kubeconfig: string, net: PodNet, sandbox: Sandbox, id: string, fleet: Fleet, pod: FleetPod): Replica {
  const args = [mainPath, '--kubeconfig', kubeconfig, '--identity', id, '--namespace', ns, '--lease-namespace', ns, ...fleet.args(pod), '--peer-addr', `${sandbox.ip}:9444`,
    '--allowed-probe-cidrs', net.clusterCidr, '--metrics-addr', `${sandbox.ip}:0`, '--metrics-auth', 'none',
    '--lease-duration', '8', '--lease-renew-interval', '1', '--status-interval', '1', '--log-level', 'debug'];
  const child = net.spawnIn(sandbox.netns, process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...fleet.env(pod) } });
  const r: Replica = { id, sandbox, child, lines: [], port: undefined, exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))) };
  createInterface({ input: child.stdout! }).on('line', (line) => {
    try {
      const o = JSON.parse(line) as Record<string, unknown>;
      r.lines.push({ at: Date.now(), o });
      if (o['msg'] === 'outprobe started') r.port = o['metricsPort'] as number;
    } catch {
      r.lines.push({ at: Date.now(), o: { msg: line } });
    }
  });
  createInterface({ input: child.stderr! }).on('line', (line) => r.lines.push({ at: Date.now(), o: { msg: `stderr: ${line}` } }));
  return r;
}

const membersOf = (r: Replica): string | undefined => {
  const last = r.lines.filter((l) => l.o['msg'] === 'shard membership changed').at(-1);
  return last === undefined ? undefined : (last.o['members'] as string[]).join(',');
};
const falseWrites = (r: Replica, since: number): number => r.lines.filter((l) => l.at >= since && l.o['msg'] === 'gate written' && l.o['status'] === 'False').length;
/** Second-opinion delays (s) this replica logged, by result. */
const delays = (r: Replica, msg: string): number[] => r.lines.filter((l) => l.o['msg'] === msg).map((l) => Number(l.o['seconds']));
const pct = (xs: readonly number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? Number.NaN;

/** Replica ids[i] runs on node i: a pod whose node runs neither its owner nor the replica its owner asks (the last in its order). */
const offNode = (p: NetPod): boolean => ranked(ids, p.uid)[2] === ids[Number(/(\d+)$/.exec(p.node)?.[1] ?? -1)];

const support = podNetSupport();

describe(`second opinion: 3 replicas, one pod cut off from its owner, then from every other node (real kube-apiserver)`, {
  timeout: 240_000,
  skip: support.ok ? false : `no pod network on this machine: ${support.why}`,
}, () => {
  const logs = logsOnFailure('second-opinion');
  let net: PodNet | undefined;
  let cp: ControlPlane | undefined;
  let podserve: Podserve | undefined;
  const tokens = new Map<string, string>();
  const tmp = mkdtempSync(path.join(tmpdir(), 'second-opinion-e2e-'));
  const pods: NetPod[] = [];
  const replicas = new Map<string, Replica>();
  let fleet: Fleet | undefined;
  const fleetPods = new Map<string, FleetPod>();

  const gateOf = async (name: string): Promise<string> => conditionOf(await cp!.kube.get(`/api/v1/namespaces/${ns}/pods/${name}`), gate)?.status ?? 'absent';
  const gates = async (): Promise<string[]> => {
    const list = await cp!.kube.get(`/api/v1/namespaces/${ns}/pods`);
    return ((list['items'] ?? []) as Record<string, unknown>[]).map((i) => conditionOf(i, gate)?.status ?? 'absent');
  };
  const eventsFor = async (name: string, reason: string): Promise<string[]> => {
    const list = await cp!.kube.get(`/api/v1/namespaces/${ns}/events`);
    return ((list['items'] ?? []) as { reason?: string; message?: string; involvedObject?: { name?: string } }[])
      .filter((e) => e.reason === reason && e.involvedObject?.name === name).map((e) => e.message ?? '');
  };

  logs.setup(async () => {
    const t0 = Date.now();
    net = await createPodNet({ nodes: nodeCount, log });
    cp = await startControlPlane({ log: () => undefined, bindAddress: net.hostIp, serviceCidr: net.serviceCidr });
    logs.plane(cp);
    podserve = await startPodserve({ log });
    await installCrd(cp.kube);
    await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    // The replicas run as a ServiceAccount with a token, as in a pod (client certificates carry no token to present to a peer).
    await cp.kube.create(`/api/v1/namespaces/${ns}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'outprobe' } });
    await cp.kube.create('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'second-opinion-e2e' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ kind: 'ServiceAccount', name: 'outprobe', namespace: ns }],
    });
    await cp.kube.create(`/api/v1/namespaces/${ns}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'stranger' } });
    for (const sa of ['outprobe', 'stranger']) {
      const tr = await cp.kube.create(`/api/v1/namespaces/${ns}/serviceaccounts/${sa}/token`, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } });
      tokens.set(sa, (tr['status'] as { token: string }).token);
    }
    const admin = cp.kubeconfig as { clusters: { cluster: Record<string, unknown> }[] };
    const kubeconfig = path.join(tmp, 'sa-kubeconfig');
    writeFileSync(kubeconfig, JSON.stringify({
      apiVersion: 'v1', kind: 'Config', 'current-context': 'sa',
      clusters: [{ name: 'c', cluster: admin.clusters[0]?.cluster }],
      users: [{ name: 'sa', user: { token: tokens.get('outprobe') } }],
      contexts: [{ name: 'sa', context: { cluster: 'c', user: 'sa', namespace: ns } }],
    }), { mode: 0o600 });
    await cp.kube.create(`/apis/outprobe.io/v1alpha1/namespaces/${ns}/probepolicies`, {
      apiVersion: 'outprobe.io/v1alpha1', kind: 'ProbePolicy', metadata: { name: 'web', namespace: ns },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        // The panic threshold counts each replica's own share (ADR 0015): at the default 50 % an owner
        // that drew only the cut pod among its ~3 (about 1 run in 25, seen in CI) fails open
        // (PanicFailOpen) and never asks its peer. This test is about the second opinion, not that guard.
        readiness: { conditionType: gate, maxUnreadyPercent: 100, probe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: periodMs / 1000, failureThreshold, timeoutSeconds: 1 } },
      },
    });
    const env = { kube: cp.kube, net, podserve };
    for (let k = 0; k < 30 && (k < minPods || pods.find(offNode) === undefined); k++) {
      const node = net.nodes[k % nodeCount]!;
      pods.push(await createNetPod(env, { namespace: ns, name: `web-${k}`, node, ip: podIpOf(node, Math.floor(k / nodeCount)) }, { gate }));
    }
    await pinNeighbours(net, pods);
    fleet = await createFleet(cp.kube, { namespace: ns });
    for (const [i, id] of ids.entries()) {
      const sandbox = await net.sandbox(net.nodes[i]!.name, `outprobe-${id}`);
      const pod = await fleet.addReplica(id, { ip: sandbox.ip, node: net.nodes[i]!.name });
      fleetPods.set(id, pod);
      const r = startReplica(kubeconfig, net, sandbox, id, fleet, pod);
      logs.record(id, r.child);
      replicas.set(id, r);
    }
    log(`pod network, API server, ${pods.length} pods and 3 replicas up in ${Date.now() - t0} ms`);
  });

  logs.teardown(async () => {
    for (const r of replicas.values()) r.child.kill('SIGKILL');
    await Promise.all([...replicas.values()].map((r) => r.exited));
    await podserve?.close();
    await cp?.stop();
    await net?.destroy();
    rmSync(tmp, { recursive: true, force: true });
    fleet?.cleanup();
  });

  it('keeps the gate True while the next replica still reaches the pod; turns it False once it agrees', async () => {
    const all = [...replicas.values()];
    await waitFor('3 members everywhere', () => Promise.resolve(all.every((r) => membersOf(r) === ids.join(','))), 60_000, 100);
    await waitFor('every gate True', async () => (await gates()).filter((s) => s === 'True').length === pods.length, 60_000, 250);
    const pod = pods.find(offNode);
    assert.ok(pod !== undefined, 'some pod has its owner and its second replica on other nodes');
    const [ownerId, peerId] = ranked(ids, pod.uid) as [string, string];
    logs.subjects(pod.name, pod.uid);
    const owner = replicas.get(ownerId)!;
    log(`pod ${pod.name} on ${pod.node}: owner ${ownerId} (owns ${pods.filter((p) => ranked(ids, p.uid)[0] === ownerId).length} of ${pods.length} pods), asks ${peerId}`);
    await sleep(2000);

    // 1. Cut off from the owner's sandbox only.
    const cut1 = Date.now();
    const fault1 = await net!.faults.degrade({ from: owner.sandbox.ip, to: pod.ip });
    await waitFor('SecondOpinionDisagreed Event on the pod', async () => (await eventsFor(pod.name, 'SecondOpinionDisagreed')).length > 0, 20_000, 250).catch((err: unknown) => {
      // Say what the owner and its peer did meanwhile.
      const said = (r: Replica): string[] => r.lines.filter((l) => l.at >= cut1 && (JSON.stringify(l.o).includes(pod.name) || /second opinion|peer|impair|held/i.test(String(l.o['msg'])))).slice(0, 40).map((l) => `${r.id} +${l.at - cut1} ${JSON.stringify(l.o)}`);
      assert.fail(`${String(err)}\n${[...said(owner), ...said(replicas.get(peerId)!)].join('\n')}`);
    });
    const disagreed = (await eventsFor(pod.name, 'SecondOpinionDisagreed'))[0] ?? '';
    log(`Event: ${disagreed}`);
    assert.match(disagreed, new RegExp(`replica ${ownerId}.*replica ${peerId}`));
    await sleep(3 * periodMs); // more asks, each disagreeing
    assert.equal(await gateOf(pod.name), 'True', 'the gate stays True while the peer reaches the pod');
    assert.equal(falseWrites(owner, cut1), 0);
    await fault1.heal();
    await sleep(3 * periodMs);
    assert.equal(await gateOf(pod.name), 'True');

    // 2. Cut off from every other node: the peer agrees.
    const cut2 = Date.now();
    const fault2 = await net!.faults.isolatePod(pod.ip);
    let falseAt = 0;
    await waitFor('gate False', async () => {
      if ((await gateOf(pod.name)) !== 'False') return false;
      falseAt = Date.now();
      return true;
    }, 30_000, 100);
    const took = falseAt - cut2;
    const agreed = delays(owner, 'second opinion agreed: acting on the failure');
    const disagreedDelays = delays(owner, 'second opinion disagreed: nothing written, the failure is held');
    const allDelays = [...agreed, ...disagreedDelays];
    const lastAgreedMs = Math.round((agreed.at(-1) ?? Number.NaN) * 1000);
    const bound = periodMs * failureThreshold + lastAgreedMs + slackMs;
    log(`second-opinion delays on ${ownerId} (s): p50 ${pct(allDelays, 0.5)}, max ${Math.max(...allDelays)} over ${allDelays.length} asks (${disagreedDelays.length} disagreed, ${agreed.length} agreed)`);
    log(`isolatePod → gate False in ${took} ms (bound: period ${periodMs} × failureThreshold ${failureThreshold} + this second opinion ${lastAgreedMs} ms + slack ${slackMs} ms = ${bound} ms)`);
    assert.ok(agreed.length >= 1, 'the owner logged an agreement');
    assert.ok(took <= bound, `took ${took} ms, bound ${bound} ms`);
    await fault2.heal();
  });

  it('the endpoint on the peer port, reviewed by the real API server: 200 for a member\'s pod-bound peer token; 401 for the replicas\' API token, a peer token bound to no pod, a made-up token or none', async () => {
    const r = replicas.get('r1')!;
    const pod = pods[0]!;
    const r2 = fleetPods.get('r2')!;
    const post = (token?: string): Promise<Response> => fetch(`http://${r.sandbox.ip}:9444/v1/second-opinion`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
      body: JSON.stringify({ policy: `${ns}/web`, podUID: pod.uid, probe: 'readiness' }),
    });
    const peerToken = await requestToken(cp!.kube, ns, 'outprobe', { audiences: [peerAudience], pod: { name: r2.name, uid: r2.uid } });
    const ok = await post(peerToken);
    assert.equal(ok.status, 200);
    assert.deepEqual(await ok.json(), { result: 'success', message: 'ok' });
    assert.equal((await post(tokens.get('outprobe'))).status, 401, 'the API token (audience: the API server) is not a peer token');
    const strangerPeer = await requestToken(cp!.kube, ns, 'stranger', { audiences: [peerAudience] });
    assert.equal((await post(strangerPeer)).status, 401, 'a peer-audience token bound to no pod speaks for no replica');
    assert.equal((await post('made-up')).status, 401);
    assert.equal((await post()).status, 401);
    // The metrics listener no longer serves the endpoint.
    assert.equal((await fetch(`http://${r.sandbox.ip}:${r.port ?? 0}/v1/second-opinion`, { method: 'POST', body: '{}' })).status, 404);
    const logs = [...replicas.values()].flatMap((x) => x.lines.map((l) => JSON.stringify(l.o))).join('\n');
    for (const t of [...tokens.values(), peerToken, strangerPeer]) assert.equal(logs.includes(t), false, 'no token in any log');
  });
});
