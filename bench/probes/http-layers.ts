/**
 * Where an HTTP probe's CPU goes, layer by layer, in one process against the
 * same loopback targets (`npm run bench:http-layers`):
 *
 *   minimal    a bare HTTP/1.1 GET over node:net (the floor for a fresh connection)
 *   dispatcher outprobe's ProbeDispatcher with a trivial handler
 *   prober     createHttpProber (deadline, headers, redirects, outcome), no scheduler
 *   scheduler  the prober run by outprobe's Scheduler, as the controller runs it
 *
 * Layers run in alternation, round after round, so they share JIT state and
 * the kernel's TIME-WAIT load. Probes per CPU-second of this process; loopback
 * only; bounded by --probes × --rounds per layer. Prints one JSON line last.
 */
import net from 'node:net';
import { createHttpProber, ProbeDispatcher } from '../../src/probing/index.ts';
import type { HttpProbeRequest } from '../../src/probing/index.ts';
import { killAll } from './children.ts';
import { startFleet } from './fleet.ts';
import { runQuota } from './saturate.ts';
import type { Probe } from './saturate.ts';

type Layer = 'minimal' | 'dispatcher' | 'prober' | 'scheduler';

function flag(name: string, fallback: number): number {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  const value = arg === undefined ? fallback : Number(arg.slice(name.length + 3));
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer`);
  return value;
}

const probes = flag('probes', 20_000);
const rounds = flag('rounds', 3);
const concurrency = flag('concurrency', 64);
const userAgent = 'kube-probe/1.37';

/** One probe of target i; resolves whatever happens (failures are counted by the caller). */
type OneProbe = (i: number, signal: AbortSignal) => Promise<boolean>;

interface Layers {
  readonly direct: Record<Exclude<Layer, 'scheduler'>, OneProbe>;
  /** One probe per target for the Scheduler. */
  readonly scheduled: readonly Probe[];
}

function layers(targets: readonly { readonly ip: string; readonly port: number }[]): Layers {
  const at = (i: number): { readonly ip: string; readonly port: number } => {
    const target = targets[i % targets.length];
    if (target === undefined) throw new Error('no targets');
    return target;
  };
  const dispatcher = new ProbeDispatcher();
  const prober = createHttpProber({ userAgent });
  const requests: HttpProbeRequest[] = targets.map(({ ip, port }) => ({ scheme: 'HTTP', ip, port, path: '/healthz', headers: [], timeoutMs: 1000 }));
  const direct: Layers['direct'] = {
    minimal: (i) =>
      new Promise((resolve) => {
        const { ip, port } = at(i);
        const socket = net.connect({ host: ip, port });
        let got = '';
        socket.once('connect', () => socket.write(`GET /healthz HTTP/1.1\r\nHost: ${ip}:${port}\r\nUser-Agent: ${userAgent}\r\nAccept: */*\r\nConnection: close\r\n\r\n`));
        socket.on('data', (data: Buffer) => (got += data.toString('latin1')));
        socket.on('end', () => {
          socket.destroy();
          resolve(got.startsWith('HTTP/1.1 200'));
        });
        socket.on('error', () => resolve(false));
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

/** `quota` probes with `concurrency` in flight; returns CPU µs of this process and the failures. */
async function direct(probe: OneProbe, quota: number): Promise<{ cpuUs: number; failures: number }> {
  let next = 0;
  let failures = 0;
  const before = process.cpuUsage();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < quota) {
        if (!(await probe(next++, new AbortController().signal))) failures++;
      }
    }),
  );
  const cpu = process.cpuUsage(before);
  return { cpuUs: cpu.user + cpu.system, failures };
}

/** The prober through the Scheduler, saturated, exactly as `bench:probes` runs it. */
async function scheduled(probes: readonly Probe[], quota: number): Promise<{ cpuUs: number; failures: number }> {
  const { cpu, outcomes } = await runQuota(probes, quota, 'http', { concurrency, periodMs: 0 });
  return { cpuUs: cpu.user + cpu.system, failures: outcomes.failure + outcomes.errored };
}

async function main(): Promise<void> {
  const fleet = await startFleet({ httpPorts: 500, tcpPorts: 0, grpcPorts: 0, targetProcs: 1, ips: 10 });
  try {
    const byLayer = layers(fleet.http);
    const run = (layer: Layer, quota: number): Promise<{ cpuUs: number; failures: number }> =>
      layer === 'scheduler' ? scheduled(byLayer.scheduled, quota) : direct(byLayer.direct[layer], quota);
    const order: Layer[] = ['minimal', 'dispatcher', 'prober', 'scheduler'];
    for (const layer of order) await run(layer, Math.min(2000, probes)); // warm-up
    const results = new Map<Layer, number[]>(order.map((l) => [l, []]));
    for (let round = 0; round < rounds; round++) {
      for (const layer of order) {
        const { cpuUs, failures } = await run(layer, probes);
        if (failures > 0) throw new Error(`${layer}: ${String(failures)} of ${String(probes)} probes failed`);
        const rate = Math.round(probes / (cpuUs / 1e6));
        results.get(layer)?.push(rate);
        console.log(`round ${String(round + 1)} ${layer.padEnd(10)} ${String(rate).padStart(6)} probes/CPU-s (${(cpuUs / probes).toFixed(1)} µs per probe)`);
      }
    }
    const summary: Record<string, unknown> = { probes, rounds, concurrency, node: process.versions.node };
    for (const [layer, rates] of results) {
      summary[`${layer}_probes_per_cpu_s`] = Math.round(rates.reduce((a, b) => a + b, 0) / rates.length);
      summary[`${layer}_rounds`] = rates;
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
