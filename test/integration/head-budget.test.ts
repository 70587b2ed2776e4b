// Issue 27 (ADR 0056): 256 hostile targets that answer every probe with a response head of just
// under 10 MiB (Go's limit, which the kubelet keeps, ADR 0013) must not push the controller past
// its memory limit (the chart's 512Mi), and healthy targets probed alongside keep their period.
// Real servers on loopback, in a child process (test/support/hostile-heads/server.ts); this
// process runs the product's HTTP prober (raw TCP, the shared head budget) with a loop per target
// like the scheduler's: probe, then wait for the next period. Before ADR 0056 each hostile probe
// held its whole head: the watchdog below stops the run once this process has grown by 1 GiB.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createHttpProber, sharedHeadBudget } from '../../src/probing/index.ts';
import type { Outcome } from '../../src/probing/index.ts';
import { claimLoopbackBlock } from '../support/ports/index.ts';

const serverPath = fileURLToPath(new URL('../support/hostile-heads/server.ts', import.meta.url));
const hostileCount = 256;
const healthyCount = 16;
const port = 8080;
/** Healthy targets: every second, 1 s timeout. Hostile ones: the kubelet's default period, 10 s, and a 10 s timeout. */
const periodMs = 1000;
const hostilePeriodMs = 10_000;
const runMs = Number(process.env['HEAD_BUDGET_RUN_MS'] ?? 25_000);
const MiB = 1 << 20;
/**
 * The stated bounds: what the run may add to this process's live memory (heap and buffers after a
 * full collection: the budget's 32 MiB pool, 256 × 64 KiB free, their parse overhead), and to its
 * resident memory (garbage included, in a process with no memory limit to make V8 collect early;
 * measured 152-221 MiB, which V8 varies with when it collects).
 */
const liveBoundMiB = 96;
const rssBoundMiB = 288;
const watchdogMiB = 1024;

setFlagsFromString('--expose-gc');
/** A full collection: what is left is what the probes hold, not garbage V8 has not collected yet. */
const gc = runInNewContext('gc') as () => void;

const hostAt = (octet: number, block: number, k: number): string => `127.${octet}.${block + Math.floor(k / 250)}.${(k % 250) + 1}`;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const text = (o: Outcome): string => ('output' in o ? o.output : o.error);
const pct = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? 0;

describe('shared response-head budget under 256 hostile 10 MiB heads (ADR 0056)', () => {
  it('keeps the prober within its memory bound, and healthy targets keep their period', async () => {
    const octet = await claimLoopbackBlock();
    const child = spawn(process.execPath, [serverPath, String(octet), String(hostileCount), String(healthyCount), String(port)], { stdio: ['pipe', 'pipe', 'inherit'] });
    try {
      const lines = createInterface({ input: child.stdout });
      const [first] = (await Promise.race([once(lines, 'line'), sleep(60_000).then(() => ['timeout'])])) as string[];
      assert.equal(first, 'ready', 'the target servers did not start');

      const prober = createHttpProber({ userAgent: 'kube-probe/1.37' });
      const stop = new AbortController();
      gc();
      const base = process.memoryUsage();
      const live = (m: NodeJS.MemoryUsage): number => m.heapUsed + m.external;
      let peakRss = base.rss;
      let peakLive = live(base);
      let tripped = false;
      let ticks = 0;
      const sampler = setInterval(() => {
        // Every second a full collection first, and the live bytes after it.
        if (++ticks % 50 === 0) gc();
        const m = process.memoryUsage();
        peakRss = Math.max(peakRss, m.rss);
        if (ticks % 50 === 0) peakLive = Math.max(peakLive, live(m));
        if (m.rss - base.rss > watchdogMiB * MiB) {
          tripped = true;
          stop.abort();
        }
      }, 20);

      const loopDelay = monitorEventLoopDelay({ resolution: 10 });
      loopDelay.enable();
      const hostileOutcomes = new Map<string, number>();
      const healthyLate: number[] = [];
      const healthyFailures: string[] = [];
      let healthyOk = 0;
      const started = performance.now();
      const loop = async (ip: string, k: number, period: number, onOutcome: (o: Outcome, lateMs: number) => void): Promise<void> => {
        // Spread the first passes over a second, as the scheduler does over the period: every hostile probe is then in flight at once.
        let due = started + (k * 1000) / (hostileCount + healthyCount);
        while (!stop.signal.aborted && due < started + runMs) {
          await sleep(Math.max(0, due - performance.now()));
          const late = performance.now() - due;
          const o = await prober({ scheme: 'HTTP', ip, port, path: '/', headers: [], timeoutMs: Math.min(period, 10_000) }, stop.signal);
          onOutcome(o, late);
          due += period;
        }
      };
      await Promise.all([
        ...Array.from({ length: hostileCount }, (_, k) => loop(hostAt(octet, 1, k), k, hostilePeriodMs, (o) => {
          const key = `${o.kind}: ${text(o).replace(/\d+/g, 'N').slice(0, 140)}`;
          hostileOutcomes.set(key, (hostileOutcomes.get(key) ?? 0) + 1);
        })),
        ...Array.from({ length: healthyCount }, (_, k) => loop(hostAt(octet, 10, k), hostileCount + k, periodMs, (o, late) => {
          healthyLate.push(late);
          if (o.kind === 'success') healthyOk++;
          else healthyFailures.push(`+${Math.round((performance.now() - started) / 100) / 10}s ${text(o)}`);
        })),
      ]);
      clearInterval(sampler);
      loopDelay.disable();
      const elapsed = performance.now() - started;
      const passesDue = healthyCount * Math.floor(runMs / periodMs);
      const report = {
        runSeconds: Math.round(elapsed / 100) / 10,
        rssGrowthMiB: Math.round((peakRss - base.rss) / MiB),
        peakRssMiB: Math.round(peakRss / MiB),
        liveGrowthMiB: Math.round((peakLive - live(base)) / MiB),
        budgetPeakMiB: Math.round((sharedHeadBudget.peakBytes / MiB) * 10) / 10,
        budgetRefused: sharedHeadBudget.refused,
        healthy: { ok: healthyOk, due: passesDue, failures: healthyFailures.length, lateP50Ms: Math.round(pct(healthyLate, 0.5)), lateP99Ms: Math.round(pct(healthyLate, 0.99)), lateMaxMs: Math.round(pct(healthyLate, 1)) },
        loopDelayMs: { p50: Math.round(loopDelay.percentile(50) / 1e6), p99: Math.round(loopDelay.percentile(99) / 1e6), max: Math.round(loopDelay.max / 1e6) },
        healthyFailureSamples: healthyFailures.slice(0, 20).map((f) => f.slice(0, 40)),
        hostile: Object.fromEntries(hostileOutcomes),
      };
      console.log(`head budget run: ${JSON.stringify(report, null, 1)}`);
      assert.equal(tripped, false, `this process grew by over ${watchdogMiB} MiB: the run was stopped`);
      assert.ok(peakLive - live(base) < liveBoundMiB * MiB, `live memory (heap and buffers after a full collection) grew by ${report.liveGrowthMiB} MiB (bound ${liveBoundMiB} MiB)`);
      assert.ok(peakRss - base.rss < rssBoundMiB * MiB, `resident memory grew by ${report.rssGrowthMiB} MiB (bound ${rssBoundMiB} MiB)`);
      assert.ok(sharedHeadBudget.peakBytes <= sharedHeadBudget.capacityBytes);
      assert.equal(sharedHeadBudget.heldBytes, 0, 'every probe gave its bytes back');
      assert.deepEqual(healthyFailures.slice(0, 3), [], 'a healthy target failed');
      assert.ok(healthyOk >= passesDue - healthyCount, `healthy targets kept their period: ${healthyOk} of ${passesDue} passes`);
      assert.ok(pct(healthyLate, 0.99) < 250, `healthy passes started late: p99 ${report.healthy.lateP99Ms} ms`);
    } finally {
      child.kill('SIGTERM');
      await once(child, 'exit').catch(() => undefined);
    }
  });
});
