import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GateWriter } from '../../../src/writeback/gate-writer.ts';
import type { GateCondition, GatePatchResult, PodRef } from '../../../src/writeback/gate-writer.ts';
import { FakeClock } from '../../support/fake-clock.ts';

const pod: PodRef = { uid: 'u1', namespace: 'ns', name: 'p' };
const cond = (status: 'True' | 'False', message = '', at = '2026-11-23T00:00:00Z'): GateCondition => ({
  type: 'outprobe.io/web',
  status,
  reason: status === 'True' ? 'ProbeSucceeded' : 'ProbeFailed',
  message,
  lastTransitionTime: at,
  lastProbeTime: at,
});

/** A patch whose calls the test completes by hand, in any order. */
interface Call {
  condition: GateCondition;
  /** 'ok' stands for the server's answer at resourceVersion `rv` or "rv<n>", n counting the calls from 1. */
  resolve: (r: 'ok' | 'gone', rv?: string) => void;
  reject: (e: Error) => void;
}
function manualPatch(): { calls: Call[]; patch: (p: PodRef, c: GateCondition) => Promise<GatePatchResult> } {
  const calls: Call[] = [];
  return {
    calls,
    patch: (_p, condition) =>
      new Promise((resolve, reject) => {
        const resourceVersion = `rv${calls.length + 1}`;
        calls.push({ condition, resolve: (r, rv) => resolve(r === 'gone' ? 'gone' : { resourceVersion: rv ?? resourceVersion }), reject });
      }),
  };
}
const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('GateWriter', () => {
  it('times each write from the desire it sent (held by the guard or queued meanwhile) and from its request', async () => {
    const clock = new FakeClock();
    const m = manualPatch();
    const timings: [string, string, number, number][] = [];
    let allow = false;
    const w = new GateWriter({
      clock, patch: m.patch, mayWrite: () => allow,
      onWrite: (_p, c, result, _e, t) => timings.push([c.status, result, t.sinceDesiredMs, t.requestMs]),
    });
    w.desire(pod, cond('False', 'x'), 'True');
    clock.advance(400);
    allow = true;
    w.sweep();
    assert.equal(m.calls.length, 1);
    clock.advance(250);
    m.calls[0]?.resolve('ok');
    await tick();
    w.desire(pod, cond('True'), 'False');
    clock.advance(30);
    m.calls[1]?.reject(new Error('boom'));
    await tick();
    assert.deepEqual(timings, [['False', 'written', 650, 250], ['True', 'failed', 30, 30]]);
  });

  it('writes a new desired condition once and nothing in steady state', async () => {
    const m = manualPatch();
    const w = new GateWriter({ clock: new FakeClock(), patch: m.patch });
    w.desire(pod, cond('False'), undefined);
    w.desire(pod, cond('False'), undefined);
    assert.equal(m.calls.length, 1);
    m.calls[0]!.resolve('ok');
    await tick();
    w.desire(pod, cond('False'), 'False');
    assert.equal(m.calls.length, 1);
    assert.equal(w.pending, 0);
  });

  it('writes nothing when the server already has the desired status (restart)', () => {
    const m = manualPatch();
    const w = new GateWriter({ clock: new FakeClock(), patch: m.patch });
    w.desire(pod, cond('True'), 'True');
    assert.equal(m.calls.length, 0);
    assert.equal(w.pending, 0);
  });

  it('keeps one write in flight and sends the newest desire after it: a stale write never wins', async () => {
    const m = manualPatch();
    const w = new GateWriter({ clock: new FakeClock(), patch: m.patch });
    w.desire(pod, cond('False'), undefined);
    w.desire(pod, cond('True'), undefined);
    w.desire(pod, cond('False', 'again'), undefined);
    assert.equal(m.calls.length, 1, 'no second write while one is in flight');
    m.calls[0]!.resolve('ok');
    await tick();
    assert.equal(m.calls.length, 2);
    assert.deepEqual(m.calls[1]!.condition, cond('False', 'again'));
    m.calls[1]!.resolve('ok');
    await tick();
    assert.equal(w.pending, 0);
    assert.equal(m.calls.length, 2);
  });

  it('drops the entry when the pod is gone (404 or a UID mismatch)', async () => {
    const m = manualPatch();
    const w = new GateWriter({ clock: new FakeClock(), patch: m.patch });
    w.desire(pod, cond('True'), undefined);
    m.calls[0]!.resolve('gone');
    await tick();
    assert.equal(w.desired(pod.uid, 'outprobe.io/web'), undefined);
    assert.equal(w.pending, 0);
  });

  it('a sweep retries only what waits: not a forgotten pod, not a written one, not a failure that was then sent again', async () => {
    const clock = new FakeClock();
    const m = manualPatch();
    const w = new GateWriter({ clock, patch: m.patch });
    const other: PodRef = { uid: 'u2', namespace: 'ns', name: 'q' };
    const third: PodRef = { uid: 'u3', namespace: 'ns', name: 'r' };
    w.desire(pod, cond('True'), undefined);
    w.desire(other, cond('True'), undefined);
    w.desire(third, cond('True'), undefined);
    m.calls[0]!.reject(new Error('503'));
    m.calls[1]!.reject(new Error('503'));
    m.calls[2]!.resolve('ok');
    await tick();
    w.forget(other.uid);
    // A newer desire sends the failed entry again at once: it no longer waits for the sweep.
    w.desire(pod, cond('False'), 'True');
    assert.equal(m.calls.length, 4);
    clock.advance(5000);
    w.sweep(1000);
    assert.equal(m.calls.length, 4, 'nothing else waits');
    m.calls[3]!.reject(new Error('503'));
    await tick();
    clock.advance(1000);
    w.sweep(1000);
    assert.equal(m.calls.length, 5);
    assert.deepEqual(m.calls[4]!.condition, cond('False'));
  });

  it('retries a failed write from the sweep after the backoff', async () => {
    const clock = new FakeClock();
    const m = manualPatch();
    const w = new GateWriter({ clock, patch: m.patch });
    w.desire(pod, cond('True'), undefined);
    m.calls[0]!.reject(new Error('503'));
    await tick();
    w.sweep(1000);
    assert.equal(m.calls.length, 1, 'not before the backoff');
    clock.advance(1000);
    w.sweep(1000);
    assert.equal(m.calls.length, 2);
    m.calls[1]!.resolve('ok');
    await tick();
    assert.equal(w.pending, 0);
  });

  it('writes a confirmed condition again when the server shows another status (a late write of a previous owner)', async () => {
    const clock = new FakeClock();
    const m = manualPatch();
    const w = new GateWriter({ clock, patch: m.patch });
    // Taken over with the informer showing True: nothing to write.
    w.desire(pod, cond('True'), 'True');
    assert.equal(m.calls.length, 0);
    // The previous owner's False lands; the same verdict desired again repairs it, restamped.
    w.desire(pod, cond('True', '', '2026-11-23T00:00:09Z'), 'False');
    assert.equal(m.calls.length, 1);
    assert.equal(m.calls[0]!.condition.lastTransitionTime, '2026-11-23T00:00:09Z');
    m.calls[0]!.resolve('ok');
    await tick();
    assert.equal(w.pending, 0);
    // The informer shows the write (rv1); a later other writer is repaired again.
    w.observe(pod.uid, 'rv1');
    w.desire(pod, cond('True'), 'False');
    assert.equal(m.calls.length, 2);
  });

  it('takes a differing status for a lagging informer until it shows the write or echoWaitMs passes', async () => {
    const clock = new FakeClock();
    const m = manualPatch();
    const w = new GateWriter({ clock, patch: m.patch, echoWaitMs: 5000 });
    w.desire(pod, cond('False'), 'True');
    m.calls[0]!.resolve('ok');
    await tick();
    // The informer still shows the pod before the write: not a change by anyone else.
    w.observe(pod.uid, 'rv0');
    w.desire(pod, cond('False'), 'True');
    assert.equal(m.calls.length, 1);
    clock.advance(5000);
    w.desire(pod, cond('False'), 'True');
    assert.equal(m.calls.length, 2, 'after echoWaitMs without the echo, the differing status is believed');
  });

  it('with comparable resourceVersions, waits for the write or a newer version however long the informer lags', async () => {
    const clock = new FakeClock();
    const calls: string[] = [];
    let rv = 100;
    const w = new GateWriter({
      clock,
      echoWaitMs: 5000,
      patch: (_p, c) => {
        calls.push(c.status);
        return Promise.resolve({ resourceVersion: String(++rv) }); // the write lands at 101
      },
    });
    w.desire(pod, cond('True'), 'False');
    await tick();
    assert.equal(calls.length, 1);
    // A watch 30 s behind keeps delivering versions older than the write (99, then 100): never a repair.
    for (const seen of ['99', '100']) {
      clock.advance(15_000);
      w.observe(pod.uid, seen);
      w.desire(pod, cond('True'), 'False');
    }
    assert.equal(calls.length, 1, 'a version older than the write is the informer lagging, past echoWaitMs too');
    // A newer version than the write (another writer changed it after us): repaired.
    w.observe(pod.uid, '102');
    w.desire(pod, cond('True'), 'False');
    assert.equal(calls.length, 2);
  });

  it('with comparable resourceVersions, a newer version seen while the write is in flight is its echo', async () => {
    const clock = new FakeClock();
    const m = manualPatch();
    const w = new GateWriter({ clock, patch: m.patch, echoWaitMs: 5000 });
    w.desire(pod, cond('True'), 'False');
    for (let i = 0; i < 20; i++) w.observe(pod.uid, String(500 + i)); // more events than the list keeps; 519 is newest
    m.calls[0]!.resolve('ok', '518');
    await tick();
    w.desire(pod, cond('True'), 'False'); // what the informer shows (519) is newer than the write: a real change
    assert.equal(m.calls.length, 2);
  });

  it('never repairs while a write is pending, and forgets a pod it no longer owns', async () => {
    const clock = new FakeClock();
    const m = manualPatch();
    const w = new GateWriter({ clock, patch: m.patch });
    w.desire(pod, cond('True'), undefined);
    w.desire(pod, cond('True'), 'False');
    assert.equal(m.calls.length, 1, 'in flight: one write');
    m.calls[0]!.reject(new Error('503'));
    await tick();
    w.desire(pod, cond('True'), 'False');
    assert.equal(m.calls.length, 1, 'failed: the sweep retries it, not desire');
    w.forget(pod.uid);
    clock.advance(5000);
    w.sweep(1000);
    assert.equal(m.calls.length, 1, 'a forgotten pod is never written');
    assert.equal(w.pending, 0);
  });

  it('knows its write is shown when the watch delivers it before the patch call returns', async () => {
    const clock = new FakeClock();
    const m = manualPatch();
    const w = new GateWriter({ clock, patch: m.patch, echoWaitMs: 5000 });
    w.desire(pod, cond('True'), 'False');
    w.observe(pod.uid, 'rv1'); // the watch event of the write (rv1) beats the response
    m.calls[0]!.resolve('ok');
    await tick();
    w.desire(pod, cond('True'), 'False'); // a later other writer: no echo to wait for
    assert.equal(m.calls.length, 2);
  });
});
