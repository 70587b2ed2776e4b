// tools/podserve through its client: pods served on loopback (HTTP, bare TCP,
// gRPC health, health flips, delay, stats, remove, refused requests, exit on
// stdin close) and inside network namespaces this test creates (a bridge with
// 198.19.248.1/22 and one veth per namespace, all named op-ps-<pid>-…/ops<pid>…
// and removed in `after`). The namespace part needs root and `ip netns`.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { PodserveError, podserveBinary, startPodserve } from '../support/podserve/index.ts';
import type { Podserve, ServedPort } from '../support/podserve/index.ts';
import { grpcHealth, httpStatus, tcpConnects } from '../support/workloads/clients.ts';
import { claimLoopbackBlock } from '../support/ports/index.ts';

const run = promisify(execFile);
const PID = process.pid;
// A loopback /24 of this run (127.0.0.1 is never used).
const block = await claimLoopbackBlock(); // this process's alone (test/support/ports)
const lo = (n: number): string => `127.${block}.0.${n}`;
const PORTS: readonly ServedPort[] = [
  { port: 18080, name: 'http', kind: 'http' },
  { port: 18081, name: 'tcp-check', kind: 'tcp' },
  { port: 18082, name: 'grpc-health', kind: 'grpc' },
];

function canBind(ip: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => { resolve(false); });
    s.listen(port, ip, () => { s.close(() => { resolve(true); }); });
  });
}

function rssKiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? NaN);
}

function alive(pid: number): boolean {
  try { process.kill(pid, 0); return true; } catch { return false; }
}

async function rejectsWith(p: Promise<unknown>, code: string, text: RegExp): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof PodserveError, String(err));
    assert.equal(err.code, code);
    assert.match(err.message, text);
    return true;
  });
}

void describe('podserve on loopback', () => {
  let ps: Podserve;
  before(async () => { ps = await startPodserve(); });
  after(async () => { await ps.close(); });

  void test('serves HTTP, bare TCP and gRPC health, follows health flips and counts requests', async () => {
    const ip = lo(2);
    await ps.add({ pod: 'web-0', ip, ports: PORTS, healthy: true });
    assert.equal(await httpStatus(ip, 18080, '/any/path'), 200);
    assert.equal(await tcpConnects(ip, 18081), true);
    assert.equal(await grpcHealth(ip, 18082), 'SERVING');

    await ps.setHealthy('web-0', false);
    assert.equal(await httpStatus(ip, 18080), 503);
    assert.equal(await tcpConnects(ip, 18081), false, 'the bare TCP port closes while unhealthy');
    assert.equal(await grpcHealth(ip, 18082), 'NOT_SERVING');

    await ps.setHealthy('web-0', true);
    assert.equal(await httpStatus(ip, 18080), 200);
    assert.equal(await tcpConnects(ip, 18081), true, 'the bare TCP port reopens');
    assert.equal(await grpcHealth(ip, 18082), 'SERVING');

    assert.deepEqual((await ps.stats()).get('web-0'), { http: 3, tcp: 2, grpc: 3 });
    await ps.remove('web-0');
  });

  void test('access logs: each HTTP request of a pod added with accessLog, with its source address, drained per call', async () => {
    await ps.add({ pod: 'logged', ip: lo(8), ports: PORTS, healthy: true, accessLog: true });
    await ps.add({ pod: 'unlogged', ip: lo(9), ports: PORTS, healthy: true });
    const t0 = Date.now();
    assert.equal(await httpStatus(lo(8), 18080), 200);
    assert.equal(await httpStatus(lo(8), 18080, '/other'), 200);
    assert.equal(await httpStatus(lo(9), 18080), 200);
    assert.equal(await tcpConnects(lo(8), 18081), true); // not HTTP: not logged
    const first = await ps.access();
    assert.deepEqual([...first.logs.keys()], ['logged'], 'only the pod added with accessLog');
    const entries = first.logs.get('logged') ?? [];
    assert.equal(entries.length, 2);
    for (const e of entries) {
      assert.match(e.from, /^127\.\d+\.\d+\.\d+$/, 'the source address, without its port');
      assert.ok(e.t >= t0 - 1000 && e.t <= Date.now() + 1000, `t ${e.t}`);
    }
    assert.equal(first.dropped.size, 0);
    assert.equal((await ps.access()).logs.size, 0, 'drained');
    assert.equal(await httpStatus(lo(8), 18080), 200);
    assert.equal((await ps.access()).logs.get('logged')?.length, 1);
    await ps.remove('logged');
    await ps.remove('unlogged');
  });

  void test('a pod added unhealthy does not listen on its TCP port until healthy', async () => {
    const ip = lo(3);
    await ps.add({ pod: 'web-1', ip, ports: PORTS, healthy: false });
    assert.equal(await tcpConnects(ip, 18081), false);
    assert.equal(await httpStatus(ip, 18080), 503);
    await ps.setHealthy('web-1', true);
    assert.equal(await tcpConnects(ip, 18081), true);
    await ps.remove('web-1');
  });

  void test('delay holds each HTTP reply and gRPC call of that pod only', async () => {
    await ps.add({ pod: 'slow', ip: lo(4), ports: PORTS, healthy: true });
    await ps.add({ pod: 'fast', ip: lo(5), ports: PORTS, healthy: true });
    await ps.setDelay('slow', 300);
    const time = async (f: () => Promise<unknown>): Promise<number> => {
      const t0 = performance.now();
      await f();
      return performance.now() - t0;
    };
    const slowHttp = await time(() => httpStatus(lo(4), 18080));
    const slowGrpc = await time(() => grpcHealth(lo(4), 18082));
    const fastHttp = await time(() => httpStatus(lo(5), 18080));
    assert.ok(slowHttp >= 290, `slow HTTP took ${slowHttp} ms`);
    assert.ok(slowGrpc >= 290, `slow gRPC took ${slowGrpc} ms`);
    assert.ok(fastHttp < 200, `fast HTTP took ${fastHttp} ms`);
    await ps.setDelay('slow', 0);
    assert.ok(await time(() => httpStatus(lo(4), 18080)) < 200);
    await ps.remove('slow');
    await ps.remove('fast');
  });

  void test('remove closes the listeners and frees the ports; stats forget the pod', async () => {
    const ip = lo(6);
    await ps.add({ pod: 'gone', ip, ports: PORTS, healthy: true });
    assert.equal(await canBind(ip, 18080), false, 'podserve holds the port');
    await ps.remove('gone');
    for (const p of PORTS) assert.equal(await canBind(ip, p.port), true, `port ${p.port} is free`);
    assert.equal(await tcpConnects(ip, 18080), false);
    assert.equal((await ps.stats()).has('gone'), false);
    await rejectsWith(ps.remove('gone'), 'not_found', /"gone" is not served/);
  });

  void test('refuses bad requests with a code, and names the port it could not bind', async () => {
    await rejectsWith(ps.add({ pod: 'x', ip: '10.1.2.3', ports: PORTS, healthy: true }), 'bad_request', /only 127\.0\.0\.0\/8/);
    await rejectsWith(ps.add({ pod: 'x', ip: lo(7), netns: '/etc/passwd', ports: PORTS, healthy: true }), 'bad_request', /198\.18\.0\.0\/15|netns/);
    const many = Array.from({ length: 17 }, (_, i): ServedPort => ({ port: 20000 + i, name: 'http', kind: 'http' }));
    await rejectsWith(ps.add({ pod: 'x', ip: lo(7), ports: many, healthy: true }), 'bad_request', /17 ports \(at most 16\)/);
    await rejectsWith(ps.add({ pod: 'x', ip: lo(7), ports: [{ port: 1, name: 'u', kind: 'udp' as 'tcp' }], healthy: true }), 'bad_request', /kind "udp"/);
    await rejectsWith(ps.setDelay('nope', 5), 'not_found', /not served/);

    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(18081, lo(7), resolve));
    try {
      await rejectsWith(ps.add({ pod: 'x', ip: lo(7), ports: PORTS, healthy: true }), 'bind_failed', /port 18081 \(tcp-check\).*address already in use/);
      assert.equal(await canBind(lo(7), 18080), true, 'the ports bound before the failure were closed again');
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => { resolve(); }));
    }
    await ps.add({ pod: 'x', ip: lo(7), ports: PORTS, healthy: true });
    await rejectsWith(ps.add({ pod: 'x', ip: lo(8), ports: PORTS, healthy: true }), 'exists', /already served/);
    await ps.remove('x');
  });

  void test('raw protocol: a malformed or overlong line gets an error reply and the next request still works', async () => {
    const child = spawn(await podserveBinary(), [], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => { out += b.toString(); });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.stdin.write('not json\n');
    child.stdin.write(`${'x'.repeat(70_000)}\n`);
    child.stdin.write('{"id":7,"op":"frobnicate"}\n{"id":8,"op":"ping"}\n');
    child.stdin.end();
    assert.equal(await exited, 0, 'exits 0 once stdin closes');
    const replies = out.trim().split('\n').map((l) => JSON.parse(l) as { id: number; ok: boolean; code?: string; error?: string });
    assert.deepEqual(replies.map((r) => [r.id, r.ok, r.code]), [[0, false, 'bad_request'], [0, false, 'bad_request'], [7, false, 'bad_request'], [8, true, undefined]]);
    assert.match(replies[1]!.error!, /longer than 65536/);
  });

  void test('closing stdin stops the process and frees every port', async () => {
    const other = await startPodserve();
    await other.add({ pod: 'p', ip: lo(9), ports: PORTS, healthy: true });
    assert.equal(alive(other.pid), true);
    await other.close();
    assert.equal(alive(other.pid), false);
    assert.equal(await canBind(lo(9), 18080), true);
    await rejectsWith(other.ping(), 'exited', /exited \(0\)/);
  });
});

// ---- network namespaces ---------------------------------------------------

const BRIDGE = `ops${PID}br`;
const nsName = (i: number): string => `op-ps-${PID}-${i}`;
const hostVeth = (i: number): string => `ops${PID}-${i}`;
const madeNs: string[] = [];
let bridgeMade = false;
// 198.19.248.0/22 (inside 198.18.0.0/15): the bridge is .248.1, namespace i gets 198.19.248.10 + i.
const nsIp = (i: number): string => { const n = 248 * 256 + 10 + i; return `198.19.${Math.floor(n / 256)}.${n % 256}`; };

async function ip(args: readonly string[], input?: string): Promise<void> {
  const child = execFile('ip', args);
  child.stdin?.on('error', () => undefined); // EPIPE if ip exits first: its exit code reports it
  if (input !== undefined) child.stdin?.end(input);
  await new Promise<void>((resolve, reject) => {
    let err = '';
    child.stderr?.on('data', (b: Buffer) => { err += b.toString(); });
    child.once('exit', (code) => { if (code === 0) resolve(); else reject(new Error(`ip ${args.join(' ')}: ${err}`)); });
  });
}

async function makeBridge(): Promise<void> {
  await ip(['link', 'add', BRIDGE, 'type', 'bridge']);
  bridgeMade = true;
  await ip(['-batch', '-'], `addr add 198.19.248.1/22 dev ${BRIDGE}\nlink set ${BRIDGE} up\n`);
}

/** Namespaces `from`..`to-1`, each with eth0 (its address /22) on the bridge. */
async function makeNamespaces(from: number, to: number): Promise<void> {
  const root: string[] = [];
  for (let i = from; i < to; i++) {
    madeNs.push(nsName(i));
    root.push(`netns add ${nsName(i)}`, `link add ${hostVeth(i)} type veth peer name eth0 netns ${nsName(i)}`,
      `link set ${hostVeth(i)} master ${BRIDGE}`, `link set ${hostVeth(i)} up`);
  }
  await ip(['-batch', '-'], `${root.join('\n')}\n`);
  const inside = [];
  for (let i = from; i < to; i++) {
    inside.push(ip(['-n', nsName(i), '-batch', '-'], `addr add ${nsIp(i)}/22 dev eth0\nlink set eth0 up\nlink set lo up\n`));
    if (inside.length >= 16) await Promise.all(inside.splice(0));
  }
  await Promise.all(inside);
}

async function cleanupNetwork(): Promise<void> {
  const lines = madeNs.splice(0).map((n) => `netns del ${n}`);
  if (bridgeMade) lines.push(`link del ${BRIDGE}`);
  bridgeMade = false;
  if (lines.length > 0) await ip(['-force', '-batch', '-'], `${lines.join('\n')}\n`);
}

/** The listening sockets on `port` that process `pid` holds in namespace `ns` (undefined = root), as `ss` lines. */
async function listenersIn(ns: string | undefined, port: number, pid: number): Promise<string> {
  const args = [...(ns === undefined ? [] : ['-N', ns]), '-Hltnp', `sport = :${port}`];
  return (await run('ss', args)).stdout.split('\n').filter((l) => l.includes(`pid=${pid},`)).join('\n');
}

const netnsUsable = process.getuid?.() === 0;

void describe('podserve in network namespaces', { skip: netnsUsable ? false : 'needs root for ip netns' }, () => {
  let ps: Podserve;
  before(async () => {
    await cleanupNetwork();
    await makeBridge();
    await makeNamespaces(0, 2);
    ps = await startPodserve();
  });
  after(async () => {
    await ps.close();
    await cleanupNetwork();
  });

  void test('listens inside the pod namespace: reachable over the veth, absent from the root namespace', async () => {
    for (const i of [0, 1]) await ps.add({ pod: `ns-${i}`, ip: nsIp(i), netns: `/run/netns/${nsName(i)}`, ports: PORTS, healthy: true });
    for (const i of [0, 1]) {
      assert.equal(await httpStatus(nsIp(i), 18080), 200);
      assert.equal(await tcpConnects(nsIp(i), 18081), true);
      assert.equal(await grpcHealth(nsIp(i), 18082), 'SERVING');
      assert.match(await listenersIn(nsName(i), 18080, ps.pid), new RegExp(`${nsIp(i).replaceAll('.', '\\.')}:18080`));
    }
    assert.equal(await listenersIn(undefined, 18080, ps.pid), '', 'podserve has no listener on 18080 in the root namespace');

    // The TCP port reopened after a flip is again inside the namespace.
    await ps.setHealthy('ns-0', false);
    assert.equal(await tcpConnects(nsIp(0), 18081), false);
    assert.equal(await listenersIn(nsName(0), 18081, ps.pid), '');
    await ps.setHealthy('ns-0', true);
    assert.equal(await tcpConnects(nsIp(0), 18081), true);
    assert.notEqual(await listenersIn(nsName(0), 18081, ps.pid), '');
    assert.equal(await listenersIn(undefined, 18081, ps.pid), '');

    const stats = await ps.stats();
    assert.deepEqual(stats.get('ns-0'), { http: 1, tcp: 2, grpc: 1 });
    assert.deepEqual(stats.get('ns-1'), { http: 1, tcp: 1, grpc: 1 });
    for (const i of [0, 1]) await ps.remove(`ns-${i}`);
    assert.equal(await listenersIn(nsName(0), 18080, ps.pid), '');
  });

  void test("an address of another namespace cannot be bound: the socket really is in the pod's namespace", async () => {
    await rejectsWith(ps.add({ pod: 'wrong', ip: nsIp(1), netns: `/run/netns/${nsName(0)}`, ports: PORTS, healthy: true }),
      'bind_failed', /port 18080 \(http\).*cannot assign requested address/);
    await rejectsWith(ps.add({ pod: 'wrong', ip: nsIp(0), netns: `/run/netns/op-ps-${PID}-none`, ports: PORTS, healthy: true }),
      'bind_failed', /open netns .*no such file/);
    await rejectsWith(ps.add({ pod: 'wrong', ip: lo(20), netns: `/run/netns/${nsName(0)}`, ports: PORTS, healthy: true }),
      'bad_request', /only 198\.18\.0\.0\/15/);
    assert.equal((await ps.stats()).size, 0);
  });

  void test('300 pods in 300 namespaces, one process', async (t) => {
    const N = 300;
    const t0 = performance.now();
    await makeNamespaces(2, 2 + N);
    const tNs = performance.now();
    const rss0 = rssKiB(ps.pid);
    await Promise.all(Array.from({ length: N }, (_, k) => ps.add({
      pod: `bulk-${k}`, ip: nsIp(2 + k), netns: `/run/netns/${nsName(2 + k)}`, ports: PORTS, healthy: true,
    })));
    const tAdd = performance.now();
    const statuses: number[] = [];
    for (let k = 0; k < N; k += 25) {
      statuses.push(...await Promise.all(Array.from({ length: Math.min(25, N - k) }, (_, j) => httpStatus(nsIp(2 + k + j), 18080))));
    }
    const tHttp = performance.now();
    const stats = await ps.stats();
    const tStats = performance.now();
    const rss1 = rssKiB(ps.pid);
    assert.equal(statuses.length, N);
    assert.ok(statuses.every((s) => s === 200));
    assert.equal(stats.size, N);
    assert.ok([...stats.values()].every((c) => c.http === 1));
    await Promise.all(Array.from({ length: N }, (_, k) => ps.remove(`bulk-${k}`)));
    const tRemove = performance.now();
    t.diagnostic(`namespaces+veths ${Math.round(tNs - t0)} ms; add ${N} pods x ${PORTS.length} ports ${Math.round(tAdd - tNs)} ms; ` +
      `HTTP to all ${Math.round(tHttp - tAdd)} ms; stats ${Math.round(tStats - tHttp)} ms; remove ${Math.round(tRemove - tStats)} ms; ` +
      `podserve RSS ${rss0} KiB before, ${rss1} KiB serving ${N} pods`);
  });
});
