import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Scheduler } from '../../../src/probing/index.ts';
import type { ScheduledTarget } from '../../../src/probing/index.ts';
import { FakeClock } from '../../support/fake-clock.ts';

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

interface Recorder {
  readonly runs: number[];
  target(key: string, periodMs: number, firstDueAt: number, extra?: Partial<ScheduledTarget>): ScheduledTarget;
}

function recorder(clock: FakeClock): Recorder {
  const runs: number[] = [];
  return {
    runs,
    target: (key, periodMs, firstDueAt, extra = {}) => ({
      key,
      periodMs,
      firstDueAt,
      run: () => {
        runs.push(clock.now());
        return Promise.resolve();
      },
      ...extra,
    }),
  };
}

function setup(concurrency = 8): { clock: FakeClock; scheduler: Scheduler; rec: Recorder } {
  const clock = new FakeClock(0);
  return { clock, scheduler: new Scheduler({ clock, random: () => 0.5, concurrency }), rec: recorder(clock) };
}

/** Steps the scheduler every `stepMs` up to and including `untilMs`, letting passes complete between steps. */
async function runUntil(clock: FakeClock, scheduler: Scheduler, untilMs: number, stepMs = 100): Promise<void> {
  for (;;) {
    await flush();
    scheduler.step();
    await flush();
    if (clock.now() + stepMs > untilMs) return;
    clock.advance(stepMs);
  }
}

describe('Scheduler', () => {
  it('runs the first pass at firstDueAt (container start + initial delay), not before', async () => {
    const { clock, scheduler, rec } = setup();
    scheduler.upsert(rec.target('a', 10_000, 5_000));
    assert.equal(scheduler.step().nextDueAt, 5_000);
    clock.set(4_999);
    assert.equal(scheduler.step().dispatched, 0);
    clock.set(5_000);
    assert.equal(scheduler.step().dispatched, 1);
    await flush();
    assert.deepEqual(rec.runs, [5_000]);
  });

  it('runs passes on ticks of one period from the first pass, whatever each pass takes (time.Ticker)', async () => {
    const { clock, scheduler } = setup();
    const runs: number[] = [];
    scheduler.upsert({
      key: 'slow',
      periodMs: 1_000,
      firstDueAt: 0,
      run: async () => {
        runs.push(clock.now());
        await clock.sleepUntil(clock.now() + 300); // the probe takes 300 ms
      },
    });
    await runUntil(clock, scheduler, 4_000);
    assert.deepEqual(runs, [0, 1_000, 2_000, 3_000, 4_000]);
  });

  it('phaseAt keeps the ticks on a phase before the first pass: a catch-up pass now, then the next slot (shard handover)', async () => {
    const { clock, scheduler, rec } = setup();
    clock.advance(1_300);
    // The slot at 1,000 was lost in a hand-off: run now, then on 2,000, 3,000, ...
    scheduler.upsert(rec.target('gained', 1_000, 1_300, { phaseAt: 1_000 }));
    await runUntil(clock, scheduler, 4_000);
    assert.deepEqual(rec.runs, [1_300, 2_000, 3_000, 4_000]);
  });

  it('a pass longer than the period is followed at once by one more, then the ticks resume in phase (as measured on Go 1.26)', async () => {
    // Measured with a real time.Ticker (100 ms, work 250/30/30/130/30 ms):
    // passes at 0, 250, 300, 400, 530. Scaled ×10 here.
    const { clock, scheduler } = setup();
    const runs: number[] = [];
    const work = [2_500, 300, 300, 1_300, 300, 300];
    scheduler.upsert({
      key: 'long',
      periodMs: 1_000,
      firstDueAt: 0,
      run: async () => {
        const ms = work[runs.length] ?? 300;
        runs.push(clock.now());
        await clock.sleepUntil(clock.now() + ms);
      },
    });
    await runUntil(clock, scheduler, 6_000);
    assert.deepEqual(runs, [0, 2_500, 3_000, 4_000, 5_300, 6_000]);
  });

  it('a pass that waited for a probe slot restarts its ticks from its start: the next one a whole period later, never a short gap (ADR 0064)', async () => {
    const { clock, scheduler } = setup(1);
    const runs: number[] = [];
    let first = true;
    // 'hog' holds the only slot from 0 to 4,000 once; 'b' is due at 1,000 and waits for it.
    scheduler.upsert({
      key: 'hog',
      periodMs: 10_000,
      firstDueAt: 0,
      run: async () => {
        if (first) await clock.sleepUntil(clock.now() + 4_000);
        first = false;
      },
    });
    scheduler.upsert({
      key: 'b',
      periodMs: 10_000,
      firstDueAt: 1_000,
      run: () => {
        runs.push(clock.now());
        return Promise.resolve();
      },
    });
    await runUntil(clock, scheduler, 35_000);
    // On the old phase it ran at 4,000 then 11,000: 7 s apart with a 10 s period.
    assert.deepEqual(runs, [4_000, 14_000, 24_000, 34_000]);
  });

  it('a pass at most 1 % of its period late that did not wait for a slot keeps its phase (timer and event-loop lateness)', async () => {
    const { clock, scheduler, rec } = setup();
    scheduler.upsert(rec.target('a', 10_000, 1_050));
    await runUntil(clock, scheduler, 32_000, 100);
    // Started 50 ms late each time (stepped every 100 ms): the ticks stay at 1,050 + k·10,000.
    assert.deepEqual(rec.runs, [1_100, 11_100, 21_100, 31_100]);
    const late = setup();
    late.scheduler.upsert(late.rec.target('a', 10_000, 1_050));
    await runUntil(late.clock, late.scheduler, 32_000, 500);
    // 450 ms late (more than 1 %): the ticks restart from the start.
    assert.deepEqual(late.rec.runs, [1_500, 11_500, 21_500, 31_500]);
  });

  it('a pass that asks for a time runs the next one then and phases the ticks from it', async () => {
    const { clock, scheduler } = setup();
    const runs: number[] = [];
    scheduler.upsert({
      key: 'delayed',
      periodMs: 10_000,
      firstDueAt: 0,
      run: () => {
        runs.push(clock.now());
        return Promise.resolve(runs.length === 1 ? { nextDueAt: 3_500 } : {});
      },
    });
    await runUntil(clock, scheduler, 24_000);
    assert.deepEqual(runs, [0, 3_500, 13_500, 23_500]);
  });

  it('never runs two passes of one target at once, however late it is', async () => {
    const { clock, scheduler } = setup();
    let active = 0;
    let maxActive = 0;
    let passes = 0;
    scheduler.upsert({
      key: 'hung',
      periodMs: 100,
      firstDueAt: 0,
      run: async () => {
        passes++;
        active++;
        maxActive = Math.max(maxActive, active);
        await clock.sleepUntil(clock.now() + 5_000);
        active--;
      },
    });
    await runUntil(clock, scheduler, 12_000, 50);
    assert.equal(maxActive, 1);
    assert.equal(passes, 3); // at 0, 5_100 and 10_200
  });

  it('a trigger runs an idle target at once and restarts its period', async () => {
    const { clock, scheduler, rec } = setup();
    scheduler.upsert(rec.target('a', 10_000, 0));
    await runUntil(clock, scheduler, 3_000);
    scheduler.trigger('a');
    await runUntil(clock, scheduler, 13_000);
    assert.deepEqual(rec.runs, [0, 3_000, 13_000]);
  });

  it('a trigger during a pass runs another pass right after it', async () => {
    const { clock, scheduler } = setup();
    const runs: number[] = [];
    scheduler.upsert({
      key: 'a',
      periodMs: 10_000,
      firstDueAt: 0,
      run: async () => {
        runs.push(clock.now());
        await clock.sleepUntil(clock.now() + 500);
      },
    });
    scheduler.step();
    await flush();
    scheduler.trigger('a');
    await runUntil(clock, scheduler, 2_000);
    assert.deepEqual(runs, [0, 500]);
  });

  it('remove aborts the in-flight pass and stops the target', async () => {
    const { clock, scheduler } = setup();
    let aborted = false;
    let passes = 0;
    scheduler.upsert({
      key: 'a',
      periodMs: 1_000,
      firstDueAt: 0,
      run: (signal) => {
        passes++;
        return new Promise<void>((resolve) => {
          signal.addEventListener('abort', () => {
            aborted = true;
            resolve();
          });
        });
      },
    });
    scheduler.step();
    await flush();
    assert.equal(scheduler.remove('a'), true);
    await runUntil(clock, scheduler, 5_000);
    assert.equal(aborted, true);
    assert.equal(passes, 1);
    assert.equal(scheduler.stats().targets, 0);
  });

  it('hands every pass of a target one signal until the target goes, and a new one after a stop (issue 31 item 6)', async () => {
    const { clock, scheduler } = setup();
    const signals: AbortSignal[] = [];
    const target = (key: string): ScheduledTarget => ({
      key,
      periodMs: 1_000,
      firstDueAt: 0,
      run: (signal) => {
        signals.push(signal);
        return Promise.resolve();
      },
    });
    scheduler.upsert(target('a'));
    await runUntil(clock, scheduler, 3_000);
    assert.equal(signals.length, 4);
    assert.equal(new Set(signals).size, 1, 'one AbortController per target, not per pass');
    const first = signals[0];
    assert.ok(first !== undefined && !first.aborted);
    scheduler.upsert(target('a')); // replaced: the old target's signal aborts, the new one gets its own
    assert.equal(first.aborted, true);
    await runUntil(clock, scheduler, 5_000);
    const replaced = signals.at(-1);
    assert.ok(replaced !== undefined && replaced !== first && !replaced.aborted);
    scheduler.remove('a');
    assert.equal(replaced.aborted, true);
  });

  it('a pass that rejects or throws is reported to onPassError and the target keeps its ticks, and the slot is handed back (concurrency 1)', async () => {
    const clock = new FakeClock(0);
    const errors: string[] = [];
    const scheduler = new Scheduler({
      clock,
      random: () => 0.5,
      concurrency: 1,
      onPassError: (key, error) => {
        errors.push(`${key}: ${(error as Error).message}`);
      },
    });
    let passes = 0;
    scheduler.upsert({
      key: 'a',
      periodMs: 1_000,
      firstDueAt: 0,
      run: (): Promise<void> => {
        passes++;
        if (passes === 1) return Promise.reject(new Error('rejected'));
        if (passes === 2) throw new Error('thrown');
        return Promise.resolve();
      },
    });
    await runUntil(clock, scheduler, 3_000);
    assert.deepEqual(errors, ['a: rejected', 'a: thrown']);
    assert.equal(passes, 4, 'one pass per period, the failed ones included');
    assert.equal(scheduler.stats().inFlight, 0);
  });

  it('a stop aborts the signal of the pass in flight, and the next start hands the target a fresh one', async () => {
    const clock = new FakeClock(0);
    const scheduler = new Scheduler({ clock, random: () => 0.5 });
    const signals: AbortSignal[] = [];
    scheduler.upsert({
      key: 'a',
      periodMs: 1_000,
      firstDueAt: 0,
      run: (signal) => {
        signals.push(signal);
        if (signals.length > 1) return Promise.resolve();
        return new Promise<void>((resolve) => {
          const done = (): void => {
            signal.removeEventListener('abort', done);
            resolve();
          };
          signal.addEventListener('abort', done);
        });
      },
    });
    const first = new AbortController();
    const loop = scheduler.start(first.signal);
    await flush();
    first.abort();
    await loop;
    assert.equal(signals.length, 1);
    assert.equal(signals[0]?.aborted, true);
    clock.advance(1_000);
    const second = new AbortController();
    const again = scheduler.start(second.signal);
    await flush();
    second.abort();
    await again;
    assert.equal(signals.length, 2);
    assert.notEqual(signals[1], signals[0]);
    assert.equal(signals[1]?.aborted, false, 'a pass that ended before the stop keeps its signal unaborted');
  });

  it('upsert of an existing key replaces it and cancels the old pass', async () => {
    const { clock, scheduler, rec } = setup();
    let oldAborted = false;
    scheduler.upsert({
      key: 'a',
      periodMs: 1_000,
      firstDueAt: 0,
      run: (signal) =>
        new Promise<void>((resolve) => {
          signal.addEventListener('abort', () => {
            oldAborted = true;
            resolve();
          });
        }),
    });
    scheduler.step();
    await flush();
    scheduler.upsert(rec.target('a', 2_000, 0));
    await runUntil(clock, scheduler, 4_000);
    assert.equal(oldAborted, true);
    assert.deepEqual(rec.runs, [0, 2_000, 4_000]);
  });

  it('jitter spreads the first pass over one period using the injected random source', async () => {
    const clock = new FakeClock(0);
    const values = [0, 0.25, 0.999];
    const scheduler = new Scheduler({ clock, random: () => values.shift() ?? 0, concurrency: 8 });
    const rec = recorder(clock);
    for (const key of ['a', 'b', 'c']) scheduler.upsert(rec.target(key, 10_000, 0, { jitter: true }));
    await runUntil(clock, scheduler, 9_999, 1);
    assert.deepEqual(rec.runs, [0, 2_500, 9_990]);
  });

  it('bounds concurrency across all targets with one queue', async () => {
    const { clock, scheduler } = setup(3);
    let active = 0;
    let maxActive = 0;
    for (let i = 0; i < 20; i++) {
      scheduler.upsert({
        key: `t${i}`,
        periodMs: 10_000,
        firstDueAt: 0,
        run: async () => {
          active++;
          maxActive = Math.max(maxActive, active);
          await clock.sleepUntil(clock.now() + 100);
          active--;
        },
      });
    }
    assert.equal(scheduler.step().dispatched, 20);
    await flush();
    assert.deepEqual({ inFlight: scheduler.stats().inFlight, queued: scheduler.stats().queued }, { inFlight: 3, queued: 17 });
    await runUntil(clock, scheduler, 1_000, 100);
    assert.equal(maxActive, 3);
  });

  it('holds 50,000 targets and runs each exactly once per period', async () => {
    const { clock, scheduler } = setup(256);
    const count = new Map<string, number>();
    for (let i = 0; i < 50_000; i++) {
      const key = `pod-${i}`;
      scheduler.upsert({
        key,
        periodMs: 10_000,
        firstDueAt: ((i * 7919) % 200) * 50, // spread over the period in 50 ms steps
        run: () => {
          count.set(key, (count.get(key) ?? 0) + 1);
          return Promise.resolve();
        },
      });
    }
    assert.equal(scheduler.stats().targets, 50_000);
    await runUntil(clock, scheduler, 9_999, 50);
    await scheduler.idle();
    assert.equal(count.size, 50_000);
    assert.ok([...count.values()].every((n) => n === 1));
  });

  it('start() sleeps on the clock between passes and stops cleanly on abort', async () => {
    const { clock, scheduler, rec } = setup();
    scheduler.upsert(rec.target('a', 1_000, 0));
    const stop = new AbortController();
    const loop = scheduler.start(stop.signal);
    for (let i = 0; i < 30; i++) {
      await flush();
      clock.advance(100);
    }
    // A target added while the loop sleeps wakes it when it is due earlier.
    scheduler.upsert(rec.target('b', 1_000, clock.now()));
    await flush();
    stop.abort();
    await loop;
    assert.deepEqual(rec.runs, [0, 1_000, 2_000, 3_000, 3_000]);
  });

  it('start(): triggers while the loop sleeps run at once, one pass per burst, and the period restarts from it', async () => {
    const { clock, scheduler, rec } = setup();
    scheduler.upsert(rec.target('a', 10_000, 0));
    scheduler.upsert(rec.target('b', 4_000, 0));
    const stop = new AbortController();
    const loop = scheduler.start(stop.signal);
    await flush(); // both pass at 0; the loop sleeps until 4 000
    clock.advance(2_500);
    scheduler.trigger('a');
    scheduler.trigger('a');
    await flush();
    assert.deepEqual(rec.runs, [0, 0, 2_500], 'the loop slept on; the trigger ran at once, once');
    for (let i = 0; i < 21; i++) {
      clock.advance(500); // 3 000 ... 13 000
      await flush();
    }
    stop.abort();
    await loop;
    // b keeps its own timetable (4 000, 8 000, 12 000); a runs again a period after the triggered pass.
    assert.deepEqual(rec.runs, [0, 0, 2_500, 4_000, 8_000, 12_000, 12_500]);
  });
});

/**
 * The noisy neighbour on the scheduler and a fake clock: a hostile namespace
 * with 65 policies whose passes never end (targets that accept and never
 * answer, timeoutSeconds 3600), more than the concurrency, beside a victim
 * namespace with one 1 s probe.
 */
describe('Scheduler fair share (fake clock)', () => {
  it("a hostile namespace's endless passes do not stop a victim namespace's 1 s probe", async () => {
    const clock = new FakeClock(0);
    const scheduler = new Scheduler({ clock, random: () => 0.5, concurrency: 8 });
    const hostileStarts: number[] = [];
    for (let i = 0; i < 65; i++) {
      scheduler.upsert({
        key: `hostile-${i}`,
        periodMs: 1_000,
        firstDueAt: 0,
        share: { namespace: 'hostile', policy: `policy-${i}` },
        run: (signal) => {
          hostileStarts.push(clock.now());
          return new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
        },
      });
    }
    const victimStarts: number[] = [];
    scheduler.upsert({
      key: 'victim',
      periodMs: 1_000,
      firstDueAt: 0,
      share: { namespace: 'victim', policy: 'web' },
      run: () => {
        victimStarts.push(clock.now());
        return Promise.resolve();
      },
    });
    for (let t = 0; t <= 15_000; t += 100) {
      clock.set(t);
      scheduler.step();
      await new Promise((resolve) => setImmediate(resolve));
    }
    assert.deepEqual(victimStarts, Array.from({ length: 16 }, (_, i) => i * 1_000));
    assert.equal(hostileStarts.length, 8, 'the hostile namespace keeps the slots it holds and gets no more');
    for (let i = 0; i < 65; i++) scheduler.remove(`hostile-${i}`);
    await scheduler.idle();
  });

  it("a namespace that saturates the pool without malice (2,000 targets at 1 s) does not stretch a victim namespace's 1 s period", async () => {
    const clock = new FakeClock(0);
    const scheduler = new Scheduler({ clock, random: () => 0.5, concurrency: 8 });
    let busyPasses = 0;
    for (let i = 0; i < 2_000; i++) {
      scheduler.upsert({
        key: `busy-${i}`,
        periodMs: 1_000,
        firstDueAt: i % 1_000,
        share: { namespace: 'busy', policy: 'busy/web' },
        run: async () => {
          busyPasses++;
          await clock.sleepUntil(clock.now() + 100); // 8 slots × 10 passes/s: far below the 2,000/s asked for
        },
      });
    }
    const victimStarts: number[] = [];
    scheduler.upsert({
      key: 'victim',
      periodMs: 1_000,
      firstDueAt: 0,
      share: { namespace: 'victim', policy: 'victim/web' },
      run: async () => {
        victimStarts.push(clock.now());
        await clock.sleepUntil(clock.now() + 10);
      },
    });
    for (let t = 0; t <= 15_000; t += 10) {
      clock.set(t);
      await new Promise((resolve) => setImmediate(resolve));
      scheduler.step();
      await new Promise((resolve) => setImmediate(resolve));
    }
    const gaps = victimStarts.slice(1).map((s, i) => s - (victimStarts[i] ?? 0));
    assert.ok(victimStarts.length >= 14, `victim starts: ${victimStarts.join(', ')}`);
    assert.ok(gaps.every((g) => g >= 900 && g <= 1_100), `gaps between victim starts: ${gaps.join(', ')}`);
    assert.ok(busyPasses >= 1_000, `the busy namespace still uses the rest of the pool: ${busyPasses} passes`);
    for (let i = 0; i < 2_000; i++) scheduler.remove(`busy-${i}`);
    scheduler.remove('victim');
    clock.advance(1_000);
    await scheduler.idle();
  });
});
