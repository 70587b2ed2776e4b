// `npm run bench:scale:initial-list -- [--pods 30000] [--policies 1] [--probes hung|instant]`: issue 31 item 1. What the
// initial LIST of many pods does to the event loop, with the real Controller (reflectors,
// target set, scheduler) against the in-memory API (memory-api.ts: pages of the reflector's
// `limit`, each parsed as one response body) already holding every pod: the event loop's
// longest block and delay histogram from start until the pod informer is synced and every
// target planned, and how late a 1 s timer fired (what a shard Lease renewal, a timer of its
// own, would wait). Prints JSON on the last line of stdout.
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Controller } from '../../src/controller/index.ts';
import { systemClock, systemRandom } from '../../src/kernel/index.ts';
import type { Outcome } from '../../src/probing/index.ts';
import { MemoryApi } from './memory-api.ts';

const { values } = parseArgs({ options: { pods: { type: 'string', default: '30000' }, policies: { type: 'string', default: '1' }, probes: { type: 'string', default: 'hung' } } });
const podCount = Number(values.pods);
const policies = Number(values.policies);
const ns = 'bench';
const say = (m: string): void => {
  process.stderr.write(`${m}\n`);
};

const api = new MemoryApi();
const startedAt = new Date(Date.now() - 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z');
for (let p = 0; p < policies; p++) {
  const policy = {
    apiVersion: 'outprobe.io/v1alpha1', kind: 'ProbePolicy',
    metadata: { name: `web-${p}`, namespace: ns, uid: `policy-${p}`, generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: { selector: { matchLabels: { app: `app-${p}` } }, readiness: { conditionType: `outprobe.io/web-${p}`, probe: { httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 10 } } },
  };
  api.put('policies', policy);
}
for (let i = 0; i < podCount; i++) {
  const p = i % policies;
  const pod = {
    metadata: { name: `pod-${i}`, namespace: ns, uid: `uid-${i}`, labels: { app: `app-${p}` } },
    spec: { nodeName: 'n1', readinessGates: [{ conditionType: `outprobe.io/web-${p}` }], containers: [{ name: 'web', ports: [{ name: 'http', containerPort: 8080 }] }] },
    status: {
      phase: 'Running', podIP: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
      conditions: [{ type: 'ContainersReady', status: 'True' }],
      containerStatuses: [{ name: 'web', containerID: `containerd://c${i}`, restartCount: 0, started: true, ready: true, state: { running: { startedAt } } }],
    },
  };
  api.put('pods', pod);
}
say(`${podCount} pods in the in-memory API`);

// A timer every second, as a Lease renewal is: how late each fired.
const timerLateMs: number[] = [];
let timerStop = false;
void (async () => {
  for (let due = performance.now() + 1000; !timerStop; due += 1000) {
    await sleep(Math.max(0, due - performance.now()));
    timerLateMs.push(performance.now() - due);
  }
})();

// The longest single block: a 10 ms interval's gaps.
let last = performance.now();
let longestBlockMs = 0;
const blocks: number[] = [];
const tick = setInterval(() => {
  const now = performance.now();
  const block = now - last - 10;
  if (block > longestBlockMs) longestBlockMs = block;
  if (block > 50) blocks.push(Math.round(block));
  last = now;
}, 10);

const eld = monitorEventLoopDelay({ resolution: 10 });
eld.enable();
// `--probes hung` (default): probes never answer, so the figures are the LIST's and the planning's
// alone (no pass completes, no gate is written); `instant`: every probe succeeds at once.
const ok = (_req: unknown, signal: AbortSignal): Promise<Outcome> =>
  values.probes === 'instant'
    ? Promise.resolve({ kind: 'success', output: '' })
    : new Promise((resolve) => signal.addEventListener('abort', () => resolve({ kind: 'errored', error: 'aborted' }), { once: true }));
const controller = new Controller({ client: api.client, clock: systemClock, random: systemRandom, observe: () => undefined, probers: { httpGet: ok, tcpSocket: ok, grpc: ok }, namespaces: [ns],
});
const stop = new AbortController();
const start = performance.now();
const cpu0 = process.cpuUsage();
const done = controller.run(stop.signal);
while (!controller.ready || controller.targets.size < podCount) await sleep(10);
const syncedMs = performance.now() - start;
const cpu = process.cpuUsage(cpu0);
// A shard membership change replans every pod (`resync`, synchronous): its cost at this size.
const resyncFrom = performance.now();
controller.resync();
const resyncMs = performance.now() - resyncFrom;
eld.disable();
clearInterval(tick);
timerStop = true;
stop.abort();
await done.catch(() => undefined);
const r = (x: number): number => Math.round(x * 10) / 10;
const sorted = [...timerLateMs].sort((a, b) => a - b);
const figures = {
  pods: podCount,
  policies,
  synced_and_planned_s: r(syncedMs / 1000),
  cpu_s: r((cpu.user + cpu.system) / 1e6),
  event_loop_delay_ms: { p50: r(eld.percentile(50) / 1e6), p99: r(eld.percentile(99) / 1e6), max: r(eld.max / 1e6) },
  longest_block_ms: r(longestBlockMs),
  resync_ms: r(resyncMs),
  blocks_over_50ms: blocks.length,
  blocks_over_200ms: blocks.filter((b) => b > 200).length,
  timer_1s_late_ms: { count: sorted.length, max: r(sorted.at(-1) ?? 0), p50: r(sorted[Math.floor(sorted.length / 2)] ?? 0) },
};
say(JSON.stringify(figures, null, 1));
process.stdout.write(`${JSON.stringify(figures)}\n`);
process.exit(0);
