/**
 * Where a probe's CPU goes, layer by layer, in one process against the same
 * loopback targets (`npm run bench:http-layers`, `npm run bench:tcp-layers`):
 *
 * HTTP (default):
 *   minimal    a bare HTTP/1.1 GET over node:net (the floor for a fresh connection with net.Socket)
 *   raw        the same GET on Node's TCP handle (tcp_wrap), no net.Socket (the floor below it, ADR 0025)
 *   dispatcher outprobe's ProbeDispatcher with a trivial handler (node:net)
 *   prober     createHttpProber (deadline, headers, redirects, outcome), no scheduler
 *   scheduler  the prober run by outprobe's Scheduler, as the controller runs it
 * TCP (`--tcp`):
 *   minimal    net.connect, then resetAndDestroy() on connect
 *   raw        the same on Node's TCP handle: connect, then reset()
 *   prober     tcpProbe, no scheduler
 *   scheduler  tcpProbe run by the Scheduler
 *
 * Layers run in alternation, round after round, so they share JIT state and
 * the kernel's TIME-WAIT load. Probes per CPU-second of this process, and
 * the user/system split (system time is the kernel's connect/write/read/close
 * work, most of it the floor no user-space change removes); loopback only;
 * bounded by --probes × --rounds per layer. Prints one JSON line last.
 */
import net from 'node:net';
import { createHttpProber, ProbeDispatcher, tcpProbe } from '../../src/probing/index.ts';
import type { HttpProbeRequest } from '../../src/probing/index.ts';
import { loadRawTcp } from '../../src/probing/rawtcp/index.ts';
import type { ConnectReq, RawTcp, TcpHandle, WriteReq } from '../../src/probing/rawtcp/index.ts';
import { killAll } from './children.ts';
import { rawConnect } from './floor.ts';
import { startFleet } from './fleet.ts';
import { runQuota } from './saturate.ts';
import type { Probe } from './saturate.ts';

type Layer = 'minimal' | 'raw' | 'dispatcher' | 'prober' | 'scheduler';

function flag(name: string, fallback: number): number {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  const value = arg === undefined ? fallback : Number(arg.slice(name.length + 3));
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer`);
  return value;
}

const tcp = process.argv.includes('--tcp');
const probes = flag('probes', 20_000);
const rounds = flag('rounds', 3);
const concurrency = flag('concurrency', 64);
const userAgent = 'kube-probe/1.37';

/** One probe of target i; resolves whatever happens (failures are counted by the caller). */
type OneProbe = (i: number, signal: AbortSignal) => Promise<boolean>;
type Target = { readonly ip: string; readonly port: number };

interface Layers {
  readonly direct: Partial<Record<Exclude<Layer, 'scheduler'>, OneProbe>>;
  /** One probe per target for the Scheduler. */
  readonly scheduled: readonly Probe[];
}

const rawBuffer = Buffer.allocUnsafe(64 * 1024);

/** A bare GET on Node's TCP handle: connect, write, read to EOF, close (no parser). */
function rawGet(raw: RawTcp, ip: string, port: number, head: string): Promise<boolean> {
  return new Promise((resolve) => {
    const handle: TcpHandle = raw.newHandle();
    const req: ConnectReq = raw.newConnectReq();
    let got = '';
    const done = (ok: boolean): void => {
      handle.onread = () => undefined;
      handle.close();
      resolve(ok);
    };
    req.oncomplete = (status) => {
      if (status !== 0) {
        done(false);
        return;
      }
      handle.useUserBuffer(rawBuffer);
      handle.onread = () => {
        const n = raw.readResult();
        if (n > 0) got += rawBuffer.toString('latin1', 0, n);
        else if (n < 0) done(got.startsWith('HTTP/1.1 200'));
      };
      handle.readStart();
      const write: WriteReq = raw.newWriteReq();
      write.handle = handle;
      write.oncomplete = () => undefined;
      if (handle.writeLatin1String(write, head) !== 0) done(false);
    };
    if (handle.connect(req, ip, port) !== 0) done(false);
  });
}

function httpLayers(targets: readonly Target[], raw: RawTcp | undefined): Layers {
  const at = (i: number): Target => {
    const target = targets[i % targets.length];
    if (target === undefined) throw new Error('no targets');
    return target;
  };
  const dispatcher = new ProbeDispatcher();
  const prober = createHttpProber({ userAgent });
  const head = (ip: string, port: number): string => `GET /healthz HTTP/1.1\r\nHost: ${ip}:${port}\r\nUser-Agent: ${userAgent}\r\nAccept: */*\r\nConnection: close\r\n\r\n`;
  const requests: HttpProbeRequest[] = targets.map(({ ip, port }) => ({ scheme: 'HTTP', ip, port, path: '/healthz', headers: [], timeoutMs: 1000 }));
  const direct: Layers['direct'] = {
    minimal: (i) =>
      new Promise((resolve) => {
        const { ip, port } = at(i);
        const socket = net.connect({ host: ip, port });
        let got = '';
        socket.once('connect', () => socket.write(head(ip, port)));
        socket.on('data', (data: Buffer) => (got += data.toString('latin1')));
        socket.on('end', () => {
          socket.destroy();
          resolve(got.startsWith('HTTP/1.1 200'));
        });
        socket.on('error', () => resolve(false));
      }),
    ...(raw === undefined
      ? {}
      : {
          raw: (i: number) => {
            const { ip, port } = at(i);
            return rawGet(raw, ip, port, head(ip, port));
          },
        }),
    dispatcher: (i) =>
      new Promise((resolve) => {
        const { ip, port } = at(i);
        let code = 0;
        dispatcher.dispatch(
          { origin: `http://${ip}:${port}`, path: '/healthz', method: 'GET', headers: ['Host', `${ip}:${port}`, 'User-Agent', userAgent, 'Accept', '*/*', 'Connection', 'close'], reset: true },
          {
            onResponseStart: (_ctl, statusCode) => (code = statusCode),
            onResponseEnd: () => resolve(code === 200),
            onResponseError: () => resolve(false),
          },
        );
      }),
    prober: async (i, signal) => {
      const req = requests[i % requests.length];
      if (req === undefined) throw new Error('no targets');
      return (await prober(req, signal)).kind === 'success';
    },
  };
  return { direct, scheduled: requests.map((req) => (signal: AbortSignal) => prober(req, signal)) };
}

function tcpLayers(targets: readonly Target[], raw: RawTcp | undefined): Layers {
  const at = (i: number): Target => {
    const target = targets[i % targets.length];
    if (target === undefined) throw new Error('no targets');
    return target;
  };
  const direct: Layers['direct'] = {
    minimal: (i) =>
      new Promise((resolve) => {
        const { ip, port } = at(i);
        const socket = net.connect({ host: ip, port });
        socket.once('connect', () => {
          socket.resetAndDestroy();
          resolve(true);
        });
        socket.once('error', () => resolve(false));
      }),
    ...(raw === undefined
      ? {}
      : {
          raw: (i: number) => {
            const { ip, port } = at(i);
            return rawConnect(raw, ip, port);
          },
        }),
    prober: async (i, signal) => {
      const { ip, port } = at(i);
      return (await tcpProbe({ ip, port, timeoutMs: 1000 }, signal)).kind === 'success';
    },
  };
  return { direct, scheduled: targets.map(({ ip, port }) => (signal: AbortSignal) => tcpProbe({ ip, port, timeoutMs: 1000 }, signal)) };
}

interface Cost {
  readonly userUs: number;
  readonly systemUs: number;
  readonly failures: number;
}

/** `quota` probes with `concurrency` in flight; CPU µs of this process and the failures. */
async function direct(probe: OneProbe, quota: number): Promise<Cost> {
  let next = 0;
  let failures = 0;
  const signal = new AbortController().signal;
  const before = process.cpuUsage();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < quota) {
        if (!(await probe(next++, signal))) failures++;
      }
    }),
  );
  const cpu = process.cpuUsage(before);
  return { userUs: cpu.user, systemUs: cpu.system, failures };
}

/** The executor through the Scheduler, saturated, exactly as `bench:probes` runs it. */
async function scheduled(probes: readonly Probe[], quota: number): Promise<Cost> {
  const { cpu, outcomes } = await runQuota(probes, quota, tcp ? 'tcp' : 'http', { concurrency, periodMs: 0 });
  return { userUs: cpu.user, systemUs: cpu.system, failures: outcomes.failure + outcomes.errored };
}

async function main(): Promise<void> {
  const fleet = await startFleet({ httpPorts: tcp ? 0 : 500, tcpPorts: tcp ? 500 : 0, grpcPorts: 0, targetProcs: 1, ips: 10 });
  try {
    const loaded = loadRawTcp();
    if (loaded.raw === undefined) console.log(`raw layer skipped: ${loaded.why}`);
    const byLayer = tcp ? tcpLayers(fleet.tcp, loaded.raw) : httpLayers(fleet.http, loaded.raw);
    const order = [...(Object.keys(byLayer.direct) as Exclude<Layer, 'scheduler'>[]), 'scheduler' as const];
    const run = (layer: Layer, quota: number): Promise<Cost> => {
      if (layer === 'scheduler') return scheduled(byLayer.scheduled, quota);
      const one = byLayer.direct[layer];
      if (one === undefined) throw new Error(`no layer ${layer}`);
      return direct(one, quota);
    };
    for (const layer of order) await run(layer, Math.min(2000, probes)); // warm-up
    const results = new Map<Layer, Cost[]>(order.map((l) => [l, []]));
    for (let round = 0; round < rounds; round++) {
      for (const layer of order) {
        const cost = await run(layer, probes);
        if (cost.failures > 0) throw new Error(`${layer}: ${String(cost.failures)} of ${String(probes)} probes failed`);
        results.get(layer)?.push(cost);
        const us = (cost.userUs + cost.systemUs) / probes;
        console.log(
          `round ${String(round + 1)} ${layer.padEnd(10)} ${String(Math.round(1e6 / us)).padStart(6)} probes/CPU-s (${us.toFixed(1)} µs per probe: user ${(cost.userUs / probes).toFixed(1)}, system ${(cost.systemUs / probes).toFixed(1)})`,
        );
      }
    }
    const summary: Record<string, unknown> = { kind: tcp ? 'tcp' : 'http', probes, rounds, concurrency, node: process.versions.node };
    for (const [layer, costs] of results) {
      const user = costs.reduce((a, c) => a + c.userUs, 0);
      const system = costs.reduce((a, c) => a + c.systemUs, 0);
      const n = probes * costs.length;
      summary[`${layer}_probes_per_cpu_s`] = Math.round(n / ((user + system) / 1e6));
      summary[`${layer}_rounds`] = costs.map((c) => Math.round(probes / ((c.userUs + c.systemUs) / 1e6)));
      summary[`${layer}_user_us_per_probe`] = Math.round((user / n) * 10) / 10;
      summary[`${layer}_system_us_per_probe`] = Math.round((system / n) * 10) / 10;
    }
    console.log(JSON.stringify(summary));
  } finally {
    killAll();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`http-layers: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    killAll();
    process.exit(1);
  },
);
