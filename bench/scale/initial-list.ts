// `npm run bench:scale:initial-list -- [--pods 30000] [--policies 1] [--probes hung|instant]`: issue 31 item 1. What the
// initial LIST of many pods does to the event loop, with the real Controller (reflectors,
// target set, scheduler) against the in-memory API (memory-api.ts: pages of the reflector's
// `limit`, each parsed as one response body) already holding every pod: the event loop's
// longest block and delay histogram from start until the pod informer is synced and every
// target planned, and how late a 1 s timer fired (what a shard Lease renewal, a timer of its
// own, would wait). Then two shard membership changes through a real ShardMembership (its
// Leases in memory, test/support/memory-leases.ts): the recompute and the resync it runs,
// measured together (issue 31, ADR 0072, 0073). Prints JSON on the last line of stdout.
import { PerformanceObserver, monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Controller } from '../../src/controller/index.ts';
import { KubeClient, fromKubeconfig } from '../../src/kube/index.ts';
import type { Pod } from '../../src/kube/index.ts';
import { LeaseWriter } from '../../src/sharding/lease-writer.ts';
import { ShardMembership } from '../../src/sharding/index.ts';
import type { ShardEvent } from '../../src/sharding/index.ts';
import { podSpread } from '../../src/vantage/index.ts';
import { startControlPlane } from '../../test/support/cluster/index.ts';
import { MemoryLeases } from '../../test/support/memory-leases.ts';
import { systemClock, systemRandom } from '../../src/kernel/index.ts';
import type { Outcome } from '../../src/probing/index.ts';
import { MemoryApi } from './memory-api.ts';

const { values } = parseArgs({ options: {
  pods: { type: 'string', default: '30000' }, policies: { type: 'string', default: '1' }, probes: { type: 'string', default: 'hung' },
  // `--sync-resync`: the resync as it was before ADR 0072 (every pod replanned in one turn), for the before/after.
  'sync-resync': { type: 'boolean', default: false },
  // `--renew-api`: a real kube-apiserver (etcd + kube-apiserver, no nodes) for a real shard Lease renewed every second.
  'renew-api': { type: 'boolean', default: false },
} });
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


const rd = (x: number): number => Math.round(x * 10) / 10;
const pct = (xs: readonly number[], q: number): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return rd(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? 0);
};

/** One measured window: the loop's longest block, blocks over 50/200 ms, a 1 s timer's (or renewal's) lateness. */
class Window {
  longestBlockMs = 0;
  /** The longest single call of the readiness cap's fleet view (its owner recompute after a change). */
  fleetNoteMs = 0;
  /** The longest garbage-collection pause and the longest `Controller.step` (its periodic work), for telling blocks apart. */
  gcMs = 0;
  stepMs = 0;
  readonly blocks: number[] = [];
  readonly timerLateMs: number[] = [];
  /** Renewals: due -> timer fired, the request's own time, due -> written. */
  readonly renews: { late: number; request: number; total: number }[] = [];
  summary(): Record<string, unknown> {
    return {
      longest_block_ms: rd(this.longestBlockMs),
      fleet_view_longest_ms: rd(this.fleetNoteMs),
      gc_longest_ms: rd(this.gcMs),
      controller_step_longest_ms: rd(this.stepMs),
      blocks_over_50ms: this.blocks.length,
      blocks_over_200ms: this.blocks.filter((b) => b > 200).length,
      timer_1s_late_ms: { count: this.timerLateMs.length, max: pct(this.timerLateMs, 1), p50: pct(this.timerLateMs, 0.5) },
      ...(this.renews.length === 0 ? {} : {
        lease_renew_ms: {
          count: this.renews.length,
          total: { p50: pct(this.renews.map((r) => r.total), 0.5), max: pct(this.renews.map((r) => r.total), 1) },
          timer_late: { p50: pct(this.renews.map((r) => r.late), 0.5), max: pct(this.renews.map((r) => r.late), 1) },
          request: { p50: pct(this.renews.map((r) => r.request), 0.5), max: pct(this.renews.map((r) => r.request), 1) },
        },
      }),
    };
  }
}
let win = new Window();

const plane = values['renew-api'] ? await startControlPlane({ log: say }) : undefined;
const leaseClient = plane === undefined ? undefined : new KubeClient({ connection: fromKubeconfig(plane.kubeconfigPath), clock: systemClock, random: systemRandom });
const lease = leaseClient === undefined ? undefined : new LeaseWriter({ client: leaseClient, clock: systemClock, namespace: 'default', identity: 'bench-replica', durationMs: 15_000 });
const timerStop = new AbortController();
const stopped = (): boolean => timerStop.signal.aborted;
/** When the next timer (renewal) is due: a membership change starts 50 ms before it, so a renewal falls due inside every resync. */
let nextDue = 0;
// A timer every second, as a Lease renewal is (a real renew with --renew-api): how late each fired, how long each took.
void (async () => {
  for (let due = performance.now() + 1000; !stopped(); due += 1000) {
    nextDue = due;
    await sleep(Math.max(0, due - performance.now()));
    const fired = performance.now();
    const w = win;
    w.timerLateMs.push(fired - due);
    if (lease === undefined) continue;
    try {
      await lease.renew(new Map(), timerStop.signal);
      const written = performance.now();
      w.renews.push({ late: fired - due, request: written - fired, total: written - due });
    } catch (err: unknown) {
      if (!stopped()) say(`renew failed: ${String(err)}`);
    }
    due = Math.max(due, performance.now() - 1000);
  }
})();

// The longest single block: a 10 ms interval's gaps.
let last = performance.now();
const tick = setInterval(() => {
  const now = performance.now();
  const block = now - last - 10;
  if (block > win.longestBlockMs) win.longestBlockMs = block;
  if (block > 50) win.blocks.push(Math.round(block));
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
// Sharding as main.ts wires it (ADR 0073): a real ShardMembership for replica 'a', its Leases (and
// the other replicas') in memory, each pod's vantage spread from the policies as in production.
// Until it joins (after the LIST) it owns every pod, so the LIST plans every pod as before.
const leases = new MemoryLeases('outprobe');
const shardEvents: ShardEvent[] = [];
const late: { controller?: Controller } = {};
const membership = new ShardMembership({
  client: leases.client, clock: systemClock, random: systemRandom, namespace: 'outprobe', identity: 'a', leaseDurationMs: 600_000, renewIntervalMs: 60_000,
  observe: (e) => shardEvents.push(e),
  vantage: { spreadOf: (p) => podSpread(late.controller?.policies.values() ?? [], p), zoneOf: () => null },
});
const owns = (pod: Pod): boolean => membership.members === undefined || membership.owns(pod);
const controller = new Controller({ client: api.client, clock: systemClock, random: systemRandom, observe: () => undefined, probers: { httpGet: ok, tcpSocket: ok, grpc: ok }, namespaces: [ns], owns,
  // The hooks fleet/sharding.ts gives a sharded controller (the readiness cap's fleet view, NoVantage).
  gainedAt: (p) => membership.gainedAt(p), mayRemediate: (p) => membership.mayRemediate(p),
  fleet: { members: () => membership.members, owner: (m, uid) => membership.responsibleAmong(m, uid) },
  vantage: { noVantage: (p) => membership.noVantage(p), here: () => undefined },
});
late.controller = controller;
// The readiness cap's fleet view (ADR 0032) computes every gated pod's owner again at the first pod
// it is told of after a change, in one call: the longest such call in the window, apart.
const fleetGates = controller.targets.readiness.fleet as unknown as { note: (...a: unknown[]) => unknown };
const note = fleetGates.note.bind(fleetGates);
fleetGates.note = (...a: unknown[]): unknown => {
  const t = performance.now();
  const r = note(...a);
  win.fleetNoteMs = Math.max(win.fleetNoteMs, performance.now() - t);
  return r;
};
const step = controller.step.bind(controller);
controller.step = (): void => {
  const t = performance.now();
  step();
  win.stepMs = Math.max(win.stepMs, performance.now() - t);
};
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) win.gcMs = Math.max(win.gcMs, e.duration);
}).observe({ entryTypes: ['gc'] });
const stop = new AbortController();
const start = performance.now();
const cpu0 = process.cpuUsage();
const done = controller.run(stop.signal);
while (!controller.ready || controller.targets.size < podCount) await sleep(10);
const syncedMs = performance.now() - start;
const cpu = process.cpuUsage(cpu0);
const listWindow = win.summary();
const delay = { p50: rd(eld.percentile(50) / 1e6), p99: rd(eld.percentile(99) / 1e6), max: rd(eld.max / 1e6) };

/** The resyncs membership started since the change: when it asked, and the promise (a newer one supersedes). */
let resyncs: { at: number; done: Promise<unknown> }[] = [];
const shardStop = new AbortController();
const shardDone = membership.run(shardStop.signal, {
  get ready() {
    return controller.ready;
  },
  pods: () => controller.pods.store.values(),
  localCounts: () => new Map(),
  // The pass (ADR 0073) is absent on the code before it: there the recompute ran whole before this call.
  resync: (pass?: { pod(p: Pod): void; done(): void }) => {
    const at = performance.now();
    if (!values['sync-resync']) {
      resyncs.push({ at, done: controller.resync(pass) });
      return;
    }
    // `--sync-resync`: the resync before ADR 0072, every pod replanned in one synchronous turn (with
    // the membership's pass). `losses_ms`: the part spent on the pods it lost.
    const held = new Set<string>();
    for (const t of controller.targets.all()) held.add(t.plan.podKey);
    let lossesMs = 0;
    for (const [key, pod] of controller.pods.store) {
      const lost = held.has(key) && !owns(pod);
      const t = lost ? performance.now() : 0;
      pass?.pod(pod);
      controller.targets.reconcilePod(pod, undefined);
      if (lost) lossesMs += performance.now() - t;
    }
    controller.release.sweep();
    pass?.done();
    resyncs.push({ at, done: Promise.resolve({ losses_ms: rd(lossesMs) }) });
  },
});
// Joined (alone): its first change and resync; then the renewals in the quiet between.
while (membership.members === undefined || resyncs.length === 0) await sleep(10);
await resyncs.at(-1)?.done;
await sleep(2500);

/**
 * A membership change as the Lease watch brings it (the others' Leases written or deleted),
 * measured from the write: `recompute_ms` until membership asked for the resync (the recompute
 * ran whole in that time before ADR 0073), `resync_ms` from there until the resync ended,
 * `total_ms` until the membership event (with the owned count) was reported.
 */
async function change(apply: () => void, expect: number): Promise<Record<string, unknown>> {
  while (nextDue - performance.now() < 50) await sleep(10);
  await sleep(nextDue - performance.now() - 50);
  win = new Window();
  resyncs = [];
  const events = shardEvents.length;
  const from = performance.now();
  apply();
  const reported = (): ShardEvent | undefined => shardEvents.slice(events).find((e) => e.type === 'membership' && e.members.length === expect);
  while (resyncs.length === 0) await sleep(1);
  const asked = resyncs[0]?.at ?? from;
  let last: Promise<unknown> | undefined;
  let result: unknown;
  while (last !== resyncs.at(-1)?.done) {
    last = resyncs.at(-1)?.done;
    result = await last;
  }
  const resynced = performance.now();
  while (reported() === undefined) await sleep(1);
  const total = performance.now() - from;
  const targets = controller.targets.size;
  const event = reported();
  await sleep(2500); // the renewals right after
  return {
    members: expect, recompute_ms: rd(asked - from), resync_ms: rd(resynced - asked), total_ms: rd(total), resyncs: resyncs.length, targets_after: targets,
    owned: event?.type === 'membership' ? event.owned : undefined, result, ...win.summary(),
  };
}
const lose = await change(() => {
  leases.hold('b', Date.now());
  leases.hold('c', Date.now());
}, 3);
const gain = await change(() => {
  leases.drop('b');
  leases.drop('c');
}, 1);
shardStop.abort();
await shardDone;
eld.disable();
clearInterval(tick);
timerStop.abort();
stop.abort();
await done.catch(() => undefined);
await leaseClient?.close();
await plane?.stop();
const load = (await import('node:os')).loadavg().map((x) => rd(x));
const figures = {
  pods: podCount,
  policies,
  resync: values['sync-resync'] ? 'synchronous (before ADR 0072)' : 'sliced (ADR 0072)',
  load_average: load,
  synced_and_planned_s: rd(syncedMs / 1000),
  cpu_s: rd((cpu.user + cpu.system) / 1e6),
  event_loop_delay_ms: delay,
  ...listWindow,
  resync_lose_two_thirds: lose,
  resync_gain_them_back: gain,
};
say(JSON.stringify(figures, null, 1));
process.stdout.write(`${JSON.stringify(figures)}\n`);
process.exit(0);
