import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EventLoopMonitor, StallLog, errored, failure, guardedAttempt, judgeAttempt, success, warning } from '../../../src/probing/index.ts';
import type { ArmTimer, Outcome, StallNote } from '../../../src/probing/index.ts';

const F = failure('Get "http://10.0.0.5:8080/healthz": context deadline exceeded (Client.Timeout exceeded while awaiting headers)');
const bound = 500;

void describe('judgeAttempt: the pure decision', () => {
  void it('counts a failure that ended at its deadline with no stall', () => {
    assert.equal(judgeAttempt(F, { startedAt: 0, endedAt: 1_000, timeoutMs: 1_000, stalledMs: 0 }, bound), null);
  });

  void it('voids a failure whose deadline fired more than the bound late', () => {
    const note = judgeAttempt(F, { startedAt: 0, endedAt: 3_100, timeoutMs: 1_000, stalledMs: 0 }, bound);
    assert.deepEqual(note, { cause: 'late-deadline', stallMs: 2_100, boundMs: bound, failure: F.kind === 'failure' ? F.output : '' });
  });

  void it('counts a failure whose deadline fired late by no more than the bound', () => {
    assert.equal(judgeAttempt(F, { startedAt: 0, endedAt: 1_500, timeoutMs: 1_000, stalledMs: 0 }, bound), null);
    assert.notEqual(judgeAttempt(F, { startedAt: 0, endedAt: 1_501, timeoutMs: 1_000, stalledMs: 0 }, bound), null);
  });

  void it('voids a failure that ended in time but overlapped a stall above the bound (the reply sat unread)', () => {
    const note = judgeAttempt(F, { startedAt: 0, endedAt: 900, timeoutMs: 1_000, stalledMs: 700 }, bound);
    assert.equal(note?.cause, 'loop-stall');
    assert.equal(note.stallMs, 700);
  });

  void it('counts a failure that overlapped only a stall within the bound', () => {
    assert.equal(judgeAttempt(F, { startedAt: 0, endedAt: 1_000, timeoutMs: 1_000, stalledMs: 500 }, bound), null);
  });

  void it('never voids a success or a warning, however late or stalled', () => {
    const timing = { startedAt: 0, endedAt: 10_000, timeoutMs: 1_000, stalledMs: 9_000 };
    assert.equal(judgeAttempt(success(''), timing, bound), null);
    assert.equal(judgeAttempt(warning('Probe terminated redirects'), timing, bound), null);
  });

  void it('leaves an errored attempt as it is (already void)', () => {
    assert.equal(judgeAttempt(errored('unresolvable port'), { startedAt: 0, endedAt: 10_000, timeoutMs: 1_000, stalledMs: 9_000 }, bound), null);
  });

  void it('names the larger of the two measures as the cause', () => {
    assert.equal(judgeAttempt(F, { startedAt: 0, endedAt: 4_000, timeoutMs: 1_000, stalledMs: 3_500 }, bound)?.cause, 'loop-stall');
    assert.equal(judgeAttempt(F, { startedAt: 0, endedAt: 4_000, timeoutMs: 1_000, stalledMs: 2_000 }, bound)?.cause, 'late-deadline');
  });
});

void describe('StallLog', () => {
  void it('answers the longest part of one stall inside a window', () => {
    const log = new StallLog(60_000);
    log.add(1_000, 1_600);
    log.add(5_000, 8_000);
    assert.equal(log.longestWithin(0, 900), 0);
    assert.equal(log.longestWithin(0, 2_000), 600);
    assert.equal(log.longestWithin(1_400, 2_000), 200);
    assert.equal(log.longestWithin(7_500, 9_000), 500);
    assert.equal(log.longestWithin(0, 10_000), 3_000);
    // A window that starts as a stall ends does not inherit it.
    assert.equal(log.longestWithin(8_000, 9_000), 0);
  });

  void it('does not add up short stalls: only one stall in one piece counts', () => {
    const log = new StallLog(60_000);
    for (let t = 0; t < 1_000; t += 100) log.add(t, t + 90);
    assert.equal(log.longestWithin(0, 1_000), 90);
  });

  void it('counts a stall still going on up to the end of the window', () => {
    const log = new StallLog(60_000);
    assert.equal(log.longestWithin(100, 3_100, 120), 2_980);
    assert.equal(log.longestWithin(3_000, 3_100, 120), 100);
  });

  void it('forgets stalls that ended more than the horizon before the latest', () => {
    const log = new StallLog(1_000);
    log.add(0, 600);
    log.add(700, 1_300);
    assert.equal(log.size, 2);
    log.add(2_000, 2_700); // both earlier ones ended before 1700
    assert.equal(log.size, 1);
    assert.equal(log.longestWithin(0, 3_000), 700);
  });
});

/** A monitor on a fake monotonic clock whose sampler timer the test fires. */
function fakeMonitor(boundMs: number) {
  const t = { now: 0 };
  let pending: (() => void) | undefined;
  const arm: ArmTimer = (callback) => {
    pending = callback;
    return () => {
      pending = undefined;
    };
  };
  const delays: number[] = [];
  const monitor = new EventLoopMonitor({ boundMs, now: () => t.now, arm, intervalMs: 20, onDelay: (ms) => delays.push(ms) });
  /** Time passes; the sampler fires at `at` (on time, or late when the loop was blocked). */
  const fireAt = (at: number): void => {
    t.now = at;
    const cb = pending;
    assert.ok(cb !== undefined, 'the sampler is armed');
    cb();
  };
  return { t, monitor, fireAt, delays, armed: () => pending !== undefined };
}

void describe('EventLoopMonitor (fake clock, fake timer)', () => {
  void it('reports each sample\'s delay and logs the stalls above the bound', () => {
    const { monitor, fireAt, delays } = fakeMonitor(bound);
    monitor.start();
    fireAt(20); // on time
    fireAt(41); // 1 ms late
    fireAt(3_061); // blocked: due at 61, fired 3 s later
    assert.deepEqual(delays, [0, 1, 3_000]);
  });

  void it('voids a failure whose window overlapped a logged stall, counts one after it', () => {
    const { t, monitor, fireAt } = fakeMonitor(bound);
    monitor.start();
    fireAt(20);
    t.now = 30;
    const during = monitor.open();
    fireAt(3_040); // the loop was blocked from 40 to 3040
    t.now = 3_041;
    const note = during(F, 5_000);
    assert.equal(note?.cause, 'loop-stall');
    assert.equal(note.stallMs, 3_000);
    const after = monitor.open();
    fireAt(3_060);
    fireAt(3_081);
    t.now = 3_090;
    assert.equal(after(F, 5_000), null);
    // Without the sampler firing for 600 ms, the loop is stalled now.
    const stuck = monitor.open();
    t.now = 3_700;
    assert.equal(stuck(F, 5_000)?.cause, 'loop-stall');
  });

  void it('sees a stall that just ended before the sampler fired (the probe\'s timer ran first)', () => {
    const { t, monitor, fireAt } = fakeMonitor(bound);
    monitor.start();
    fireAt(20); // next due at 40
    t.now = 25;
    const close = monitor.open();
    t.now = 3_025; // blocked until now; the probe's timeout callback runs before the sampler's
    const note = close(F, 5_000);
    assert.equal(note?.cause, 'loop-stall');
    assert.equal(note.stallMs, 2_985);
  });

  void it('never voids with bound 0 (the guard off)', () => {
    const { t, monitor, fireAt } = fakeMonitor(0);
    monitor.start();
    const close = monitor.open();
    fireAt(3_020);
    t.now = 3_021;
    assert.equal(close(F, 1_000), null);
  });

  void it('stop() cancels the sampler; start() again re-arms it', () => {
    const { monitor, armed } = fakeMonitor(bound);
    monitor.start();
    assert.ok(armed());
    monitor.stop();
    assert.ok(!armed());
    monitor.start();
    assert.ok(armed());
  });

  void it('stalledWithin (ADR 0033): a stall above the bound within the window, or one going on now; never with bound 0', () => {
    const { t, monitor, fireAt } = fakeMonitor(bound);
    monitor.start();
    fireAt(t.now + 20);
    assert.equal(monitor.stalledWithin(2000), false);
    fireAt(t.now + 20 + bound + 100); // a stall of bound + 100 ms
    assert.equal(monitor.stalledWithin(2000), true);
    t.now += 2500;
    assert.equal(monitor.stalledWithin(2000), true, 'the sampler is overdue by far more than the bound: stalled now');
    fireAt(t.now);
    t.now += 100;
    assert.equal(monitor.stalledWithin(2000), true, 'the stall that just ended is within the window');
    for (let i = 0; i < 150; i++) fireAt(t.now + 20); // 3 s on time
    assert.equal(monitor.stalledWithin(2000), false, 'older than the window');
    const off = fakeMonitor(0);
    off.monitor.start();
    off.fireAt(off.t.now + 5000);
    assert.equal(off.monitor.stalledWithin(10_000), false);
  });

  void it('on the real clock and timer, a 600 ms busy loop voids a failure that overlapped it', async () => {
    const monitor = new EventLoopMonitor({ boundMs: bound });
    monitor.start();
    try {
      await new Promise((resolve) => setTimeout(resolve, 50));
      const close = monitor.open();
      const until = performance.now() + 600;
      while (performance.now() < until) {
        // the deliberate stall
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
      const note = close(F, 10_000);
      assert.equal(note?.cause, 'loop-stall');
      assert.ok(note.stallMs > bound && note.stallMs < 1_000, `stall measured ${note.stallMs} ms`);
      const calm = monitor.open();
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(calm(F, 10_000), null);
    } finally {
      monitor.stop();
    }
  });
});

void describe('guardedAttempt', () => {
  const guardSaying = (note: StallNote | null) => ({ open: () => () => note });
  const stallNote: StallNote = { cause: 'loop-stall', stallMs: 3_000, boundMs: bound, failure: 'x' };

  void it('returns a voided failure as errored, marked, and tells onVoid', async () => {
    const heard: StallNote[] = [];
    const out: Outcome = await guardedAttempt(() => Promise.resolve(F), guardSaying(stallNote), 1_000, (n) => heard.push(n));
    assert.ok(out.kind === 'errored');
    assert.equal(out.stall, stallNote);
    assert.match(out.error, /^probe void: the event loop stalled for 3\.000s during it \(stall bound 0\.500s\); not counted$/);
    assert.deepEqual(heard, [stallNote]);
  });

  void it('passes a counted outcome through untouched', async () => {
    const heard: StallNote[] = [];
    assert.equal(await guardedAttempt(() => Promise.resolve(F), guardSaying(null), 1_000, (n) => heard.push(n)), F);
    assert.deepEqual(heard, []);
  });
});
