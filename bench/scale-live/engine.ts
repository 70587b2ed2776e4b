/**
 * `bench:scale`'s engine-alone phase (issue 31 item 3): outprobe's probe
 * engine with nothing of the controller around it, a bare `Scheduler` calling
 * the HTTP or TCP executor, against the same pods' server, the same pod IPs,
 * port, path and period, and the controller's concurrency (256). The first
 * passes are jittered over one period (as after a start); after one period
 * to spread, `process.cpuUsage()` and the probes are counted over the
 * measured window. Prints one JSON line and exits.
 *
 * Protocol: argv `<config file>`, a JSON file: {"ips":[...],"port":N,"probe":"http"|"tcp","periodMs":N,"seconds":N};
 * exits when stdin closes (the benchmark died).
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { systemClock, systemRandom } from '../../src/kernel/index.ts';
import { createHttpProber, Scheduler, tcpProbe } from '../../src/probing/index.ts';

interface Config {
  readonly ips: readonly string[];
  readonly port: number;
  readonly probe: 'http' | 'tcp';
  readonly periodMs: number;
  readonly seconds: number;
}

const c = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as Config;
process.stdin.on('end', () => process.exit(1));
process.stdin.resume();
// The controller's own User-Agent form (kube-probe/<minor>); the pods' server does not read it.
const http = createHttpProber({ userAgent: 'kube-probe/1.34' });
let probes = 0;
const outcomes: Record<string, number> = {};
const scheduler = new Scheduler({ clock: systemClock, random: systemRandom, concurrency: 256 });
const now = systemClock.now();
for (const ip of c.ips) {
  const run = c.probe === 'http'
    ? (signal: AbortSignal) => http({ scheme: 'HTTP', ip, port: c.port, path: '/healthz', headers: [], timeoutMs: 1000 }, signal)
    : (signal: AbortSignal) => tcpProbe({ ip, port: c.port, timeoutMs: 1000 }, signal);
  scheduler.upsert({ key: ip, periodMs: c.periodMs, firstDueAt: now, jitter: true, run: async (signal) => {
    const o = await run(signal);
    probes++;
    outcomes[o.kind] = (outcomes[o.kind] ?? 0) + 1;
  } });
}
const stop = new AbortController();
const loop = scheduler.start(stop.signal);
await sleep(c.periodMs);
const probes0 = probes;
const cpu0 = process.cpuUsage();
const wall0 = performance.now();
await sleep(c.seconds * 1000);
const cpu = process.cpuUsage(cpu0);
const n = probes - probes0;
const wallS = (performance.now() - wall0) / 1000;
stop.abort();
await loop;
const cpuUs = cpu.user + cpu.system;
process.stdout.write(`${JSON.stringify({ targets: c.ips.length, seconds: Math.round(wallS * 10) / 10, probes: n, probes_per_s: Math.round((n / wallS) * 10) / 10, cpu_s: Math.round(cpuUs / 1e3) / 1e3, cpu_us_per_probe: n === 0 ? null : Math.round(cpuUs / n), outcomes })}\n`);
process.exit(0);
