// `node bench/partition/run.ts [--cuts N]` (root, pod network): issue 12's measurement.
// Builds the partition world (test/support/partition: 4 nodes, 3 gated pods behind a
// Service, outprobe readiness period 1 s, failureThreshold 3, timeout 1 s), then N
// times: cuts one pod (rotating) from every other node, waits until kube-proxy on the
// client's node no longer routes to it, heals, waits until the pod answers again.
// Prints each cut's breakdown and p50/p99 of every term as JSON on the last line.
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { breakdown, startPartitionWorld } from '../../test/support/partition/index.ts';

const { values } = parseArgs({ options: { cuts: { type: 'string', default: '20' }, verbose: { type: 'boolean', default: false } } });
const cuts = Number(values.cuts);
const say = (m: string): void => { process.stderr.write(`${new Date().toISOString()} ${m}\n`); };

function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] ?? Number.NaN;
}

const world = await startPartitionWorld(values.verbose ? { log: say } : {});
const rows: ReturnType<typeof breakdown>[] = [];
const heals: { total: number; gate: number; ready: number; slice: number; proxy: number }[] = [];
try {
  for (let i = 0; i < cuts; i++) {
    const victim = world.pods[i % world.pods.length];
    if (victim === undefined) throw new Error('no pod');
    const { result, heal } = await world.cut(victim);
    const b = breakdown(result);
    rows.push(b);
    say(`cut ${i + 1}/${cuts} ${victim.name} (${victim.node}): ${JSON.stringify(b)} ContainersReady during cut: ${result.containersReadyDuringCut ?? '?'}`);
    const h = await heal();
    heals.push({ total: h.firstAnswer - h.healStart, gate: h.gate - h.healStart, ready: h.ready - h.gate, slice: h.slice - h.ready, proxy: h.proxy - h.slice });
    say(`heal ${i + 1}/${cuts}: first answer ${h.firstAnswer - h.healStart} ms after the heal`);
    await sleep(1500);
  }
} finally {
  await world.stop();
}
const keys = Object.keys(rows[0] ?? {}) as (keyof ReturnType<typeof breakdown>)[];
const summary = Object.fromEntries(keys.map((k) => [k, { p50: quantile(rows.map((r) => r[k]), 0.5), p99: quantile(rows.map((r) => r[k]), 0.99) }]));
const healKeys = ['total', 'gate', 'ready', 'slice', 'proxy'] as const;
const healSummary = Object.fromEntries(healKeys.map((k) => [k, { p50: quantile(heals.map((r) => r[k]), 0.5), p99: quantile(heals.map((r) => r[k]), 0.99) }]));
process.stdout.write(`${JSON.stringify({ cuts: rows.length, cut: summary, heal: healSummary })}\n`);
