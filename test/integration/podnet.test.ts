// The pod network of ADR 0014 on real namespaces: HTTP across nodes and from the host,
// each fault's exact reach (what it cuts and what still works), loss and reset, attach
// timing, destroy leaving nothing, and sweepStale after a SIGKILLed creator.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createPodNet, NODE_BRIDGE, podNetSupport, sweepStale, type PodNet, type Sandbox } from '../support/podnet/index.ts';

const support = podNetSupport();
const skip = support.ok ? false : `pod network unavailable: ${support.why}`;
const PORT = 8080;

function podIp(n: PodNet, node: number, last: number): string {
  return n.nodes[node]!.podCidr.replace(/0\/25$/, String(last));
}

async function serve(n: PodNet, sb: Sandbox): Promise<ChildProcess> {
  const code = `require('http').createServer((q,r)=>r.end(process.argv[1])).listen(${PORT},process.argv[1],()=>console.log('up'))`;
  const child = n.spawnIn(sb.netns, 'node', ['-e', code, sb.ip], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.once('data', () => { resolve(); });
    child.once('exit', (c) => { reject(new Error(`server in ${sb.netns} exited ${c ?? '?'}`)); });
  });
  return child;
}

interface Reach { readonly ok: boolean; readonly code: number; readonly body: string; readonly ms: number }

/** curl from inside a namespace: exit 0 ok, 7 refused/unreachable, 28 timed out. */
async function curlFrom(n: PodNet, netns: string, url: string, seconds = 0.8): Promise<Reach> {
  const t0 = performance.now();
  const child = n.spawnIn(netns, 'curl', ['-sS', '-m', String(seconds), url], { stdio: ['ignore', 'pipe', 'ignore'] });
  let body = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => { body += d; });
  const code = await new Promise<number>((resolve) => child.once('exit', (c) => { resolve(c ?? -1); }));
  return { ok: code === 0, code, body, ms: performance.now() - t0 };
}

/** A TCP connect from the root namespace: 'ok', 'timeout' or the error code. */
function connectFromHost(ip: string, port: number, timeoutMs: number): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect({ host: ip, port });
    const timer = setTimeout(() => { s.destroy(); resolve('timeout'); }, timeoutMs);
    s.once('connect', () => { clearTimeout(timer); s.destroy(); resolve('ok'); });
    s.once('error', (e: NodeJS.ErrnoException) => { clearTimeout(timer); resolve(e.code ?? e.message); });
  });
}

async function connectMany(ip: string, count: number, timeoutMs: number): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (let i = 0; i < count; i += 25) {
    const batch = await Promise.all(Array.from({ length: Math.min(25, count - i) }, () => connectFromHost(ip, PORT, timeoutMs)));
    for (const r of batch) out.set(r, (out.get(r) ?? 0) + 1);
  }
  return out;
}

function ours(prefix: string): { netns: string[]; links: string[]; tables: string[] } {
  const lines = (cmd: string, args: string[]): string[] => spawnSync(cmd, args, { encoding: 'utf8' }).stdout.split('\n');
  const has = (l: string): boolean => l.includes(`${prefix}-`);
  return {
    netns: lines('ip', ['netns', 'list']).filter(has),
    links: lines('ip', ['-o', 'link']).filter(has),
    tables: lines('nft', ['list', 'tables']).filter(has),
  };
}

void describe('pod network', { skip }, () => {
  let n: PodNet;
  let a0: Sandbox; let a0b: Sandbox; let b1: Sandbox; let b1b: Sandbox; let c2: Sandbox; let replica: Sandbox;
  let hostServer: http.Server;
  const servers: ChildProcess[] = [];
  const url = (sb: Sandbox): string => `http://${sb.ip}:${PORT}/`;
  const hostUrl = (): string => `http://${n.hostIp}:${(hostServer.address() as net.AddressInfo).port}/`;

  before(async () => {
    n = await createPodNet({ nodes: 3 });
    [a0, a0b, b1, b1b, c2] = await Promise.all([
      n.attachPod('kwok-node-0', podIp(n, 0, 5)), n.attachPod('kwok-node-0', podIp(n, 0, 6)),
      n.attachPod('kwok-node-1', podIp(n, 1, 5)), n.attachPod('kwok-node-1', podIp(n, 1, 6)),
      n.attachPod('kwok-node-2', podIp(n, 2, 5)),
    ]);
    replica = await n.sandbox('kwok-node-0', 'replica');
    for (const sb of [a0, a0b, b1, c2]) servers.push(await serve(n, sb));
    hostServer = http.createServer((_q, r) => r.end('host'));
    await new Promise<void>((resolve) => { hostServer.listen(0, n.hostIp, resolve); });
  });

  after(async () => {
    hostServer.closeAllConnections();
    hostServer.close();
    await n.destroy();
  });

  test('addresses follow the plan; HTTP between pods on different nodes, from the host, and from a replica to the host', async () => {
    assert.equal(replica.ip, n.nodes[0]!.subnet.replace(/0\/24$/, '200'));
    assert.equal(n.nodeOf(b1.ip).name, 'kwok-node-1');
    assert.equal((await curlFrom(n, a0.netns, url(b1))).body, b1.ip);
    assert.equal((await curlFrom(n, b1.netns, url(c2))).body, c2.ip);
    assert.equal((await curlFrom(n, replica.netns, url(a0b))).body, a0b.ip);
    assert.equal((await curlFrom(n, replica.netns, hostUrl())).body, 'host');
    assert.equal((await curlFrom(n, n.nodes[2]!.netns, url(a0))).body, a0.ip, 'a node reaches pods on other nodes');
    assert.equal(await connectFromHost(b1.ip, PORT, 1000), 'ok');
    const res = await fetch(url(c2));
    assert.equal(await res.text(), c2.ip);
    await assert.rejects(n.attachPod('kwok-node-0', podIp(n, 1, 7)), /not in kwok-node-0's podCIDR/);
    await assert.rejects(n.attachPod('kwok-node-0', a0.ip), /already attached/);
  });

  test('isolatePod: other nodes, their pods and the host are cut off; the own node and the own bridge are not; heal restores', async () => {
    const f = await n.faults.isolatePod(b1.ip);
    assert.equal((await curlFrom(n, a0.netns, url(b1))).code, 28, 'a pod on another node times out');
    assert.equal((await curlFrom(n, n.nodes[0]!.netns, url(b1))).code, 28, 'another node times out');
    assert.equal(await connectFromHost(b1.ip, PORT, 500), 'timeout', 'the host times out');
    assert.equal((await curlFrom(n, b1.netns, hostUrl())).code, 28, 'the pod cannot reach out either');
    assert.equal((await curlFrom(n, n.nodes[1]!.netns, url(b1))).body, b1.ip, 'its own node still reaches it');
    assert.equal((await curlFrom(n, b1b.netns, url(b1))).body, b1.ip, 'a pod on its bridge still reaches it');
    assert.equal((await curlFrom(n, a0.netns, url(c2))).body, c2.ip, 'other pods are unaffected');
    await f.heal();
    assert.equal((await curlFrom(n, a0.netns, url(b1))).body, b1.ip);
    assert.equal(await connectFromHost(b1.ip, PORT, 1000), 'ok');
  });

  test('isolateFromPods: the replica reaches no pod (own bridge included) but still the API server address; heal restores', async () => {
    const f = await n.faults.isolateFromPods(replica.ip);
    assert.equal((await curlFrom(n, replica.netns, url(a0b))).code, 28, 'pod on the same bridge');
    assert.equal((await curlFrom(n, replica.netns, url(b1))).code, 28, 'pod on another node');
    assert.equal((await curlFrom(n, replica.netns, hostUrl())).body, 'host', 'the host (API server address) is still reachable');
    assert.equal((await curlFrom(n, a0.netns, url(a0b))).body, a0b.ip, 'pods on that bridge still reach each other');
    assert.equal((await curlFrom(n, n.nodes[0]!.netns, url(a0b))).body, a0b.ip, 'the node still reaches its pods');
    await f.heal();
    assert.equal((await curlFrom(n, replica.netns, url(a0b))).body, a0b.ip);
    assert.equal((await curlFrom(n, replica.netns, url(b1))).body, b1.ip);
  });

  test('blackholeNode: nothing in or out of the node; its pods still talk on the bridge; heal restores', async () => {
    const f = await n.faults.blackholeNode('kwok-node-2');
    assert.equal(await connectFromHost(c2.ip, PORT, 500), 'timeout');
    assert.equal((await curlFrom(n, a0.netns, url(c2))).code, 28);
    assert.equal((await curlFrom(n, n.nodes[2]!.netns, hostUrl())).code, 28, 'the node cannot reach the host');
    assert.equal((await curlFrom(n, n.nodes[2]!.netns, url(c2))).body, c2.ip, 'inside the node all is well');
    await f.heal();
    assert.equal(await connectFromHost(c2.ip, PORT, 1000), 'ok');
    assert.equal((await curlFrom(n, n.nodes[2]!.netns, hostUrl())).body, 'host');
  });

  test('degrade loss: about the given share of connects fails, only on the path given; heal restores', async () => {
    const clean = await connectMany(b1.ip, 50, 600);
    assert.deepEqual([...clean], [['ok', 50]]);
    const f = await n.faults.degrade({ to: `${b1.ip}/32`, lossPercent: 30 });
    const t0 = performance.now();
    const lossy = await connectMany(b1.ip, 300, 600);
    const failed = lossy.get('timeout') ?? 0;
    console.log(`loss 30%: ${failed}/300 connects timed out in ${Math.round(performance.now() - t0)} ms`, [...lossy]);
    assert.ok(failed >= 60 && failed <= 120, `${failed}/300 failed, expected about 90`);
    assert.deepEqual([...await connectMany(c2.ip, 50, 600)], [['ok', 50]], 'other destinations are untouched');
    await f.heal();
    assert.deepEqual([...await connectMany(b1.ip, 50, 600)], [['ok', 50]]);
  });

  test('degrade reset: connects are refused at once, from the host and from a pod on another node', async () => {
    const f = await n.faults.degrade({ to: `${b1.ip}/32`, reset: true });
    const t0 = performance.now();
    assert.equal(await connectFromHost(b1.ip, PORT, 2000), 'ECONNREFUSED');
    assert.ok(performance.now() - t0 < 200);
    const fromPod = await curlFrom(n, a0.netns, url(b1), 3);
    assert.equal(fromPod.code, 7, 'curl: could not connect');
    assert.ok(fromPod.ms < 1500, `took ${fromPod.ms} ms (a timeout would take 3 s)`);
    const fromBridge = await curlFrom(n, b1b.netns, url(b1), 3);
    assert.equal(fromBridge.code, 7, 'same-bridge traffic passes the forward hook through br_netfilter');
    await f.heal();
    assert.equal(await connectFromHost(b1.ip, PORT, 1000), 'ok');
    await assert.rejects(n.faults.degrade({ to: '10.0.0.1' }), /not inside the cluster CIDR/);
  });

  test('attach and detach 200 pods', async () => {
    const ips = [0, 1, 2].flatMap((node) => Array.from({ length: 67 }, (_, k) => ({ node, ip: podIp(n, node, 40 + k) }))).slice(0, 200);
    let t0 = performance.now();
    const sbs = await Promise.all(ips.map((p) => n.attachPod(`kwok-node-${p.node}`, p.ip)));
    const attachMs = performance.now() - t0;
    assert.equal(sbs.length, 200);
    const last = sbs.at(-1)!;
    const s = await serve(n, last);
    assert.equal((await curlFrom(n, a0.netns, url(last))).body, last.ip);
    s.kill();
    t0 = performance.now();
    await Promise.all(ips.map((p) => n.detachPod(p.ip)));
    const detachMs = performance.now() - t0;
    console.log(`200 pods: attach ${Math.round(attachMs)} ms (${(attachMs / 200).toFixed(1)} ms/pod), detach ${Math.round(detachMs)} ms`);
    for (const sb of sbs) assert.equal(existsSync(sb.netnsPath), false, sb.netns);
    await n.detachPod(last.ip); // idempotent
    const again = await n.attachPod(`kwok-node-${ips[0]!.node}`, ips[0]!.ip); // the address is free again
    await n.detachPod(again.ip);
    assert.ok(attachMs < 20_000, `attach took ${attachMs} ms`);
  });

  test('a pod recreated at a deleted pod\'s address (new MAC) is announced: reached within a second from its bridge and from another node, its pinned entry too', async () => {
    const ip = podIp(n, 0, 40);
    const first = await n.attachPod('kwok-node-0', ip);
    servers.push(await serve(n, first));
    // Both kinds of neighbour that hold its MAC: a replica on its bridge (direct), and its node
    // (the way from other nodes), the node's entry pinned as pinNeighbours pins it.
    assert.equal((await curlFrom(n, replica.netns, `http://${ip}:${PORT}/`)).body, ip);
    assert.equal((await curlFrom(n, b1.netns, `http://${ip}:${PORT}/`)).body, ip);
    const macOf = (netns: string, dev: string): string => (JSON.parse(spawnSync('ip', ['-j', '-n', netns, 'link', 'show', 'dev', dev], { encoding: 'utf8' }).stdout) as { address: string }[])[0]!.address;
    const oldMac = macOf(first.netns, 'eth0');
    assert.equal(spawnSync('ip', ['-n', n.nodes[0]!.netns, 'neigh', 'replace', ip, 'lladdr', oldMac, 'dev', NODE_BRIDGE, 'nud', 'permanent']).status, 0);
    await n.detachPod(ip);
    const second = await n.attachPod('kwok-node-0', ip);
    servers.push(await serve(n, second));
    const t0 = performance.now();
    assert.notEqual(macOf(second.netns, 'eth0'), oldMac, 'a new interface, a new MAC');
    // Each side tries every 250 ms: reached within a second of the new pod serving.
    const reached = async (from: string): Promise<number> => {
      for (;;) {
        if ((await curlFrom(n, from, `http://${ip}:${PORT}/`, 0.25)).body === ip) return performance.now() - t0;
        if (performance.now() - t0 > 5000) return Number.POSITIVE_INFINITY;
      }
    };
    const [fromBridge, fromOtherNode] = await Promise.all([reached(replica.netns), reached(b1.netns)]);
    assert.ok(fromBridge <= 1000, `from a replica on its bridge: ${Math.round(fromBridge)} ms`);
    assert.ok(fromOtherNode <= 1000, `from another node (its node's pinned entry): ${Math.round(fromOtherNode)} ms`);
    const pinned = spawnSync('ip', ['-n', n.nodes[0]!.netns, 'neigh', 'show', ip, 'dev', NODE_BRIDGE], { encoding: 'utf8' }).stdout;
    assert.match(pinned, new RegExp(`lladdr ${macOf(second.netns, 'eth0')} PERMANENT`), 'still pinned, to the new MAC');
  });

  test('destroy removes every namespace, link and table and kills what ran inside', async () => {
    const pids = servers.map((s) => s.pid!);
    await n.faults.degrade({ to: `${c2.ip}/32`, lossPercent: 10 }); // left unhealed: a root table for destroy to remove
    assert.equal(ours(n.prefix).tables.length, 1);
    const before = ours(n.prefix);
    assert.ok(before.netns.length >= 9 && before.links.length >= 4, JSON.stringify(before));
    await n.destroy();
    assert.deepEqual(ours(n.prefix), { netns: [], links: [], tables: [] });
    for (const node of n.nodes) assert.equal(existsSync(`/run/netns/${node.netns}`), false);
    await new Promise((r) => setTimeout(r, 200));
    for (const pid of pids) assert.throws(() => process.kill(pid, 0), /ESRCH/, `server ${pid} still runs`);
    await n.destroy(); // idempotent
  });
});

function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z'); // an unreaped orphan has ended
  } catch {
    return false;
  }
}

void test('sweepStale removes what a SIGKILLed creator left, and only that', { skip }, async () => {
  const other = await createPodNet({ nodes: 1 }); // a live run (made first: creating one sweeps too)
  const child = spawn(process.execPath, [path.join(import.meta.dirname, 'support/podnet-child.ts')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    let buf = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => { buf += d; if (buf.includes('\n')) resolve(buf); });
    child.once('exit', (c) => { reject(new Error(`child exited ${c ?? '?'}`)); });
  });
  const made = JSON.parse(line) as { prefix: string; slot: number; podNetns: string; sleeper: number };
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));
  const left = ours(made.prefix);
  assert.ok(left.netns.includes(made.podNetns), 'the pod namespace outlived its creator');
  assert.equal(left.tables.length, 1, 'so did the root fault table');
  assert.ok(running(made.sleeper), 'and the process in the pod');
  try {
    const removed = await sweepStale();
    assert.ok(removed.includes(`netns ${made.podNetns}`), removed.join(', '));
    assert.ok(removed.some((r) => r.startsWith('nft table inet')), removed.join(', '));
    assert.deepEqual(ours(made.prefix), { netns: [], links: [], tables: [] });
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(running(made.sleeper), false, 'the process in the pod was killed');
    assert.equal(ours(other.prefix).netns.length, 1, 'the live run keeps its node namespace');
    assert.deepEqual(await sweepStale(), []);
  } finally {
    await other.destroy();
  }
});
