/**
 * Runs a fixed number of probes through outprobe's Scheduler, kept saturated
 * at its concurrency bound, and measures the CPU of this process over exactly
 * that window. Shared by the probing worker of `bench:probes` and by
 * `bench:http-layers`.
 */
import { performance } from 'node:perf_hooks';
import { systemClock, systemRandom } from '../../src/kernel/index.ts';
import { Scheduler } from '../../src/probing/index.ts';
import type { Outcome } from '../../src/probing/index.ts';

/** One probe of one target; the signal aborts when the scheduler stops. */
export type Probe = (signal: AbortSignal) => Promise<Outcome>;

export interface OutcomeCounts {
  success: number;
  warning: number;
  failure: number;
  errored: number;
}

export interface RunResult {
  readonly cpu: NodeJS.CpuUsage;
  readonly wallMs: number;
  readonly outcomes: OutcomeCounts;
  /** Up to 5 distinct failure/errored texts, to see what went wrong. */
  readonly problems: readonly string[];
}

export interface SaturateOptions {
  readonly concurrency: number;
  /** The period of every target; 0 keeps the scheduler saturated. */
  readonly periodMs: number;
}

/**
 * Every target is due at once and again `periodMs` after each completion, so
 * the scheduler stays saturated at its concurrency bound. Passes beyond the
 * quota remove their own target; the loop is stopped when the last probe of
 * the quota has completed, so nothing is cut short inside the window.
 */
export async function runQuota(probes: readonly Probe[], quota: number, keyPrefix: string, options: SaturateOptions): Promise<RunResult> {
  const scheduler = new Scheduler({ clock: systemClock, random: systemRandom, concurrency: options.concurrency });
  const stop = new AbortController();
  const outcomes: OutcomeCounts = { success: 0, warning: 0, failure: 0, errored: 0 };
  const problems = new Set<string>();
  let started = 0;
  let done = 0;
  const now = systemClock.now();
  probes.forEach((probe, i) => {
    const key = `${keyPrefix}/${String(i)}`;
    scheduler.upsert({
      key,
      periodMs: options.periodMs,
      firstDueAt: now,
      jitter: false,
      run: async (signal) => {
        if (started >= quota) {
          scheduler.remove(key);
          return;
        }
        started++;
        const outcome = await probe(signal);
        outcomes[outcome.kind]++;
        if (outcome.kind === 'failure' && problems.size < 5) problems.add(outcome.output);
        if (outcome.kind === 'errored' && problems.size < 5) problems.add(outcome.error);
        if (++done === quota) stop.abort();
      },
    });
  });
  const cpuBefore = process.cpuUsage();
  const wallBefore = performance.now();
  await scheduler.start(stop.signal);
  const wallMs = performance.now() - wallBefore;
  const cpu = process.cpuUsage(cpuBefore);
  return { cpu, wallMs, outcomes, problems: [...problems] };
}
