import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DeadlineSweep } from '../../../src/probing/deadline.ts';
import type { DeadlineEntry, DeadlineList, DeadlineTimer } from '../../../src/probing/deadline.ts';
import { maxTimerMs } from '../../../src/kernel/index.ts';
import { createHttpProber, Scheduler, tcpProbe } from '../../../src/probing/index.ts';
import { systemClock, systemRandom } from '../../../src/kernel/index.ts';
import { httpServer, stalledListener } from '../../support/loopback.ts';

/** A hand-driven clock and timer: `advance` fires what is due, in order. */
class FakeTimer implements DeadlineTimer {
  time = 0;
  readonly timers: { at: number; callback: () => void; live: boolean }[] = [];
  readonly now = (): number => this.time;
  readonly arm = (callback: () => void, ms: number): (() => void) => {
    const timer = { at: this.time + ms, callback, live: true };
    this.timers.push(timer);
    return () => {
      timer.live = false;
    };
  };
  get live(): number {
    return this.timers.filter((t) => t.live).length;
  }
  advance(to: number): void {
    for (;;) {
      const next = this.timers.filter((t) => t.live && t.at <= to).sort((a, b) => a.at - b.at)[0];
      if (next === undefined) break;
      this.time = next.at;
      next.live = false;
      next.callback();
    }
    this.time = to;
  }
}

class Entry implements DeadlineEntry {
  firedAt: number | undefined;
  deadlineAt = 0;
  deadlineNext: DeadlineEntry | undefined = undefined;
  deadlinePrev: DeadlineEntry | undefined = undefined;
  deadlineList: DeadlineList | undefined = undefined;
  readonly #timer: FakeTimer;
  readonly #then: (() => void) | undefined;
  constructor(timer: FakeTimer, then?: () => void) {
    this.#timer = timer;
    this.#then = then;
  }
  onDeadline(): void {
    assert.equal(this.firedAt, undefined, 'fired twice');
    this.firedAt = this.#timer.now();
    this.#then?.();
  }
}

describe('DeadlineSweep (one timer for every probe deadline)', () => {
  it('fires each entry at its deadline, never before, in order across timeouts', () => {
    const timer = new FakeTimer();
    const sweep = new DeadlineSweep(timer);
    const a = new Entry(timer);
    const b = new Entry(timer);
    const c = new Entry(timer);
    sweep.add(a, 1000);
    timer.advance(10);
    sweep.add(b, 1000);
    sweep.add(c, 300); // another timeout: its own list, an earlier deadline
    assert.equal(timer.live, 1, 'one timer, however many entries');
    timer.advance(309);
    assert.equal(c.firedAt, undefined);
    timer.advance(310);
    assert.equal(c.firedAt, 310);
    timer.advance(999);
    assert.equal(a.firedAt, undefined);
    timer.advance(1000);
    assert.equal(a.firedAt, 1000);
    assert.equal(b.firedAt, undefined);
    timer.advance(2000);
    assert.equal(b.firedAt, 1010);
    assert.equal(sweep.pending, 0);
    assert.equal(timer.live, 0, 'no timer left once nothing is pending');
  });

  it('a removed entry never fires, and removing the last one clears the timer', () => {
    const timer = new FakeTimer();
    const sweep = new DeadlineSweep(timer);
    const a = new Entry(timer);
    const b = new Entry(timer);
    sweep.add(a, 100);
    sweep.add(b, 100);
    sweep.remove(a);
    sweep.remove(a); // harmless twice
    assert.equal(sweep.pending, 1);
    assert.equal(sweep.armed, true);
    sweep.remove(b);
    assert.equal(sweep.armed, false);
    assert.equal(timer.live, 0);
    timer.advance(1000);
    assert.equal(a.firedAt, undefined);
    assert.equal(b.firedAt, undefined);
  });

  it('an armed timer made early by a removal re-arms for the next entry instead of firing it', () => {
    const timer = new FakeTimer();
    const sweep = new DeadlineSweep(timer);
    const a = new Entry(timer);
    const b = new Entry(timer);
    sweep.add(a, 100);
    timer.advance(50);
    sweep.add(b, 100);
    sweep.remove(a); // the timer still points at 100
    timer.advance(100);
    assert.equal(b.firedAt, undefined);
    timer.advance(150);
    assert.equal(b.firedAt, 150);
  });

  it('a deadline beyond setTimeout range fires at its time, after re-arming in steps', () => {
    const timer = new FakeTimer();
    const sweep = new DeadlineSweep(timer);
    const a = new Entry(timer);
    sweep.add(a, 2 ** 31);
    assert.ok(timer.timers.every((t) => t.at <= maxTimerMs), 'never armed past setTimeout range');
    timer.advance(maxTimerMs);
    assert.equal(a.firedAt, undefined);
    timer.advance(2 ** 31);
    assert.equal(a.firedAt, 2 ** 31);
  });

  it('an infinite timeout never fires; NaN and negative ones fire on the next sweep', () => {
    const timer = new FakeTimer();
    const sweep = new DeadlineSweep(timer);
    const never = new Entry(timer);
    const nan = new Entry(timer);
    const negative = new Entry(timer);
    sweep.add(never, Number.POSITIVE_INFINITY);
    assert.equal(sweep.pending, 0);
    sweep.add(nan, Number.NaN);
    sweep.add(negative, -5);
    timer.advance(1);
    assert.equal(nan.firedAt, 1);
    assert.equal(negative.firedAt, 1);
    assert.equal(never.firedAt, undefined);
  });

  it('a callback may add entries (a retry starting at once)', () => {
    const timer = new FakeTimer();
    const sweep = new DeadlineSweep(timer);
    const retry = new Entry(timer);
    const first = new Entry(timer, () => sweep.add(retry, 100));
    sweep.add(first, 100);
    timer.advance(100);
    assert.equal(first.firedAt, 100);
    assert.equal(sweep.pending, 1);
    timer.advance(200);
    assert.equal(retry.firedAt, 200);
  });
});

describe('probe deadlines on the shared sweep (real timers, loopback)', () => {
  it('a TCP probe that cannot connect times out at its deadline, and no timer stays behind', async () => {
    const stalled = await stalledListener();
    const fillers = await stalled.fill();
    const baseline = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const t0 = performance.now();
    const outcome = await tcpProbe({ ip: '127.0.0.1', port: stalled.port, timeoutMs: 200 });
    const took = performance.now() - t0;
    for (const f of fillers) f.destroy();
    await stalled.close();
    assert.deepEqual(outcome, { kind: 'failure', output: `dial tcp 127.0.0.1:${stalled.port}: i/o timeout` });
    assert.ok(took >= 199, `timed out after ${took} ms, before its 200 ms deadline`);
    assert.ok(process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length <= baseline, JSON.stringify(process.getActiveResourcesInfo()));
  });

  it('an HTTP probe of a server that never answers times out at its deadline', async () => {
    const server = await httpServer(() => undefined);
    const probe = createHttpProber({ userAgent: 'kube-probe/1.37' });
    const t0 = performance.now();
    const outcome = await probe({ scheme: 'HTTP', ip: '127.0.0.1', port: server.port, path: '/', headers: [], timeoutMs: 200 });
    const took = performance.now() - t0;
    await server.close();
    assert.deepEqual(outcome, { kind: 'failure', output: `Get "http://127.0.0.1:${server.port}/": context deadline exceeded (Client.Timeout exceeded while awaiting headers)` });
    assert.ok(took >= 199, `timed out after ${took} ms`);
  });

  it('removing a target cancels its probe at once and releases its slot for the next pass', async () => {
    const server = await httpServer(() => undefined); // never answers: only a cancel ends the probe early
    const probe = createHttpProber({ userAgent: 'kube-probe/1.37' });
    const scheduler = new Scheduler({ clock: systemClock, random: systemRandom, concurrency: 1 });
    const outcomes: string[] = [];
    let secondRan = false;
    const stop = new AbortController();
    scheduler.upsert({
      key: 'hangs',
      periodMs: 60_000,
      firstDueAt: systemClock.now(),
      run: async (signal) => {
        const o = await probe({ scheme: 'HTTP', ip: '127.0.0.1', port: server.port, path: '/', headers: [], timeoutMs: 30_000 }, signal);
        outcomes.push(o.kind === 'errored' ? o.error : o.kind);
      },
    });
    scheduler.upsert({
      key: 'next',
      periodMs: 60_000,
      firstDueAt: systemClock.now(),
      run: () => {
        secondRan = true;
        stop.abort();
        return Promise.resolve();
      },
    });
    const loop = scheduler.start(stop.signal);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(secondRan, false, 'the only slot is held by the hanging probe');
    const t0 = performance.now();
    scheduler.remove('hangs');
    await loop;
    assert.ok(performance.now() - t0 < 1000, 'the slot came back at once, not at the 30 s deadline');
    assert.equal(secondRan, true);
    assert.deepEqual(outcomes, ['probe cancelled']);
    await server.close();
  });
});
