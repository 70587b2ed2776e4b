import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeApiError } from '../../../src/kube/index.ts';
import { GateWriter } from '../../../src/writeback/gate-writer.ts';
import type { GateCondition, GatePatchResult, PodRef } from '../../../src/writeback/gate-writer.ts';
import { WriteQueue } from '../../../src/writeback/write-queue.ts';
import type { WriteOutcome } from '../../../src/writeback/write-queue.ts';
import { FakeClock } from '../../support/fake-clock.ts';

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

/** Writes the test settles by hand; `sent` in the order the queue sent them. */
function manual(): { sent: { name: string; resolve: () => void; reject: (e: Error) => void }[]; write: (name: string) => { run: () => Promise<unknown> } } {
  const sent: { name: string; resolve: () => void; reject: (e: Error) => void }[] = [];
  return {
    sent,
    write: (name) => ({
      run: () => new Promise<void>((resolve, reject) => sent.push({ name, resolve, reject })),
    }),
  };
}

const throttle = (retryAfterMs?: number): KubeApiError =>
  new KubeApiError({ code: 'TooManyRequests', status: 429, reason: 'TooManyRequests', message: 'slow down', ...(retryAfterMs === undefined ? {} : { retryAfterMs }), priorityLevelUid: 'pl-1', flowSchemaUid: 'fs-1' });

describe('WriteQueue', () => {
  it('starts at the initial limit and grows by one per fast success up to the ceiling', async () => {
    const clock = new FakeClock();
    const m = manual();
    const q = new WriteQueue({ clock, maxInflight: 12, initialInflight: 4 });
    for (let i = 0; i < 100; i++) q.submit(m.write(`w${i}`), 'initial');
    assert.equal(m.sent.length, 4);
    assert.equal(q.inflight, 4);
    let maxSeen = 0;
    for (let done = 0; done < 60; done++) {
      m.sent[done]?.resolve();
      await tick();
      const inflight: number = q.inflight;
      maxSeen = Math.max(maxSeen, inflight);
      assert.ok(inflight <= 12, `in flight ${inflight} above the ceiling`);
    }
    assert.equal(q.limit, 12);
    assert.equal(maxSeen, 12);
  });

  it('does not grow on slow successes', async () => {
    const clock = new FakeClock();
    const m = manual();
    const q = new WriteQueue({ clock, maxInflight: 64, initialInflight: 4, slowMs: 1000 });
    for (let i = 0; i < 20; i++) q.submit(m.write(`w${i}`), 'initial');
    clock.advance(1500);
    for (let i = 0; i < 4; i++) m.sent[i]?.resolve();
    await tick();
    assert.equal(q.limit, 4);
  });

  it('halves on a 429 once per round, waits exactly the Retry-After, then resends the throttled write first', async () => {
    const clock = new FakeClock();
    const m = manual();
    const outcomes: WriteOutcome[] = [];
    const q = new WriteQueue({ clock, maxInflight: 64, initialInflight: 16, onOutcome: (o) => outcomes.push(o) });
    for (let i = 0; i < 40; i++) q.submit(m.write(`w${i}`), 'initial');
    assert.equal(m.sent.length, 16);
    // Three of the 16 sent in the same round are throttled: one halving, not three.
    m.sent[0]?.reject(throttle(3000));
    m.sent[1]?.reject(throttle(3000));
    m.sent[2]?.reject(throttle(3000));
    await tick();
    assert.equal(q.limit, 8);
    assert.equal(q.pausedUntil, clock.now() + 3000);
    assert.equal(m.sent.length, 16, 'nothing sent while paused');
    // Successes while paused do not send either.
    for (let i = 3; i < 16; i++) m.sent[i]?.resolve();
    await tick();
    assert.equal(m.sent.length, 16);
    clock.advance(2999);
    await tick();
    assert.equal(m.sent.length, 16, 'still paused 1 ms before Retry-After');
    clock.advance(1);
    await tick();
    const sentNow: number = m.sent.length;
    assert.ok(sentNow > 16, 'sent again when Retry-After has passed');
    assert.deepEqual(
      m.sent.slice(16, 19).map((s) => s.name),
      ['w2', 'w1', 'w0'],
      'throttled writes go back to the front',
    );
    const t = outcomes.find((o) => o.kind === 'throttled');
    assert.deepEqual(t, { kind: 'throttled', latencyMs: 0, retryAfterMs: 3000, pauseMs: 3000, priorityLevelUid: 'pl-1', flowSchemaUid: 'fs-1' });
  });

  it('halves again on a throttle from a later round, down to 1, and backs off without Retry-After (1 s doubling)', async () => {
    const clock = new FakeClock();
    const m = manual();
    const q = new WriteQueue({ clock, maxInflight: 64, initialInflight: 8 });
    for (let i = 0; i < 200; i++) q.submit(m.write(`w${i}`), 'initial');
    const limits: number[] = [];
    const pauses: number[] = [];
    const inflight: number[] = [];
    for (let round = 0; round < 5; round++) {
      // Every write in flight is throttled: one halving and one pause step per round, not one per write.
      const before = clock.now();
      for (const s of m.sent.filter((x) => !('done' in x))) {
        Object.assign(s, { done: true });
        s.reject(throttle());
      }
      await tick();
      limits.push(q.limit);
      pauses.push(q.pausedUntil - before);
      clock.set(q.pausedUntil - 1);
      await tick();
      assert.equal(q.inflight, 0, 'nothing sent before the pause ends');
      clock.set(q.pausedUntil);
      await tick();
      inflight.push(q.inflight);
    }
    assert.deepEqual(limits, [4, 2, 1, 1, 1]);
    assert.deepEqual(inflight, [4, 2, 1, 1, 1]);
    assert.deepEqual(pauses, [1000, 2000, 4000, 8000, 16000]);
  });

  it('grows additively (1/limit per success) after the first throttle', async () => {
    const clock = new FakeClock();
    const m = manual();
    const q = new WriteQueue({ clock, maxInflight: 64, initialInflight: 8, slowMs: 5000 });
    for (let i = 0; i < 500; i++) q.submit(m.write(`w${i}`), 'initial');
    Object.assign(m.sent[0] ?? {}, { done: true });
    m.sent[0]?.reject(throttle(1000));
    await tick();
    assert.equal(q.limit, 4);
    clock.advance(1000);
    await tick();
    // 5 successes from limit 4: +1 in total (4 + 1/4 + 1/4.25 + ... ≈ 5.1, additive), not +5 (slow start).
    for (let i = 0; i < 5; i++) {
      const s = m.sent.filter((x) => !('done' in x))[0];
      Object.assign(s ?? {}, { done: true });
      s?.resolve();
      await tick();
    }
    assert.equal(q.limit, 5);
  });

  it('sends a False queued behind 1,000 first-time Trues within the next few writes', async () => {
    const clock = new FakeClock();
    const m = manual();
    const q = new WriteQueue({ clock, maxInflight: 4, initialInflight: 4 });
    for (let i = 0; i < 1000; i++) q.submit(m.write(`true${i}`), 'initial');
    q.submit(m.write('false'), 'false');
    assert.equal(m.sent.length, 4);
    m.sent[0]?.resolve();
    await tick();
    assert.equal(m.sent[4]?.name, 'false', 'the next write sent is the False');
  });

  it('orders False, repair, recovery, initial and raises a queued write', async () => {
    const clock = new FakeClock();
    const m = manual();
    const q = new WriteQueue({ clock, maxInflight: 1, initialInflight: 1 });
    q.submit(m.write('busy'), 'initial');
    q.submit(m.write('i1'), 'initial');
    const h = q.submit(m.write('i2'), 'initial');
    q.submit(m.write('rec'), 'recovery');
    q.submit(m.write('rep'), 'repair');
    q.submit(m.write('f'), 'false');
    q.raise(h, 'false');
    assert.deepEqual(q.waitingBy(), { false: 2, repair: 1, recovery: 1, initial: 1 });
    for (let i = 0; i < 6; i++) {
      m.sent[i]?.resolve();
      await tick();
    }
    assert.deepEqual(
      m.sent.map((s) => s.name),
      ['busy', 'f', 'i2', 'rep', 'rec', 'i1'],
    );
    assert.equal(q.waiting, 0);
  });
});

const cond = (status: 'True' | 'False'): GateCondition => ({
  type: 'outprobe.io/web',
  status,
  reason: status === 'True' ? 'ProbeSucceeded' : 'ProbeFailed',
  message: '',
  lastTransitionTime: '2026-11-25T00:00:00Z',
  lastProbeTime: '2026-11-25T00:00:00Z',
});

describe('GateWriter with a WriteQueue', () => {
  function setup(maxInflight: number): { w: GateWriter; q: WriteQueue; sent: { pod: PodRef; c: GateCondition; resolve: () => void; reject: (e: Error) => void }[]; results: string[] } {
    const clock = new FakeClock();
    const sent: { pod: PodRef; c: GateCondition; resolve: () => void; reject: (e: Error) => void }[] = [];
    const results: string[] = [];
    const q = new WriteQueue({ clock, maxInflight, initialInflight: maxInflight });
    const w = new GateWriter({
      clock,
      queue: q,
      patch: (pod, c) =>
        new Promise<GatePatchResult>((resolve, reject) => {
          sent.push({ pod, c, resolve: () => resolve({ resourceVersion: `rv${sent.length}` }), reject });
        }),
      onWrite: (pod, c, result) => results.push(`${pod.name}:${c.status}:${result}`),
    });
    return { w, q, sent, results };
  }
  const pod = (i: number): PodRef => ({ uid: `u${i}`, namespace: 'ns', name: `p${i}` });

  it('a pod turning False is written within the next few writes although 1,000 first-time Trues wait', async () => {
    const { w, sent } = setup(8);
    for (let i = 0; i < 1000; i++) w.desire(pod(i), cond('True'), undefined);
    assert.equal(sent.length, 8);
    // Pod 999's first True is still queued; its probe fails.
    w.desire(pod(999), cond('False'), undefined);
    sent[0]?.resolve();
    await tick();
    assert.equal(sent.length, 9);
    const last = sent[8];
    assert.equal(last?.pod.name, 'p999');
    assert.equal(last.c.status, 'False', 'the queued write sends what is desired when it leaves the queue');
  });

  it('a True after a False goes before first-time Trues', async () => {
    const { w, sent } = setup(1);
    w.desire(pod(0), cond('False'), undefined);
    for (let i = 1; i < 50; i++) w.desire(pod(i), cond('True'), undefined);
    sent[0]?.resolve();
    await tick();
    w.desire(pod(0), cond('True'), 'False');
    sent[1]?.resolve();
    await tick();
    const third = sent[2];
    assert.equal(third?.pod.name, 'p0');
    assert.equal(third.c.status, 'True');
  });

  it('a throttled write is not a failure: the queue resends it after Retry-After and it lands', async () => {
    const clock = new FakeClock();
    const sent: { resolve: () => void; reject: (e: Error) => void }[] = [];
    const results: string[] = [];
    const q = new WriteQueue({ clock, maxInflight: 4, initialInflight: 4 });
    const w = new GateWriter({
      clock,
      queue: q,
      patch: () => new Promise<GatePatchResult>((resolve, reject) => sent.push({ resolve: () => resolve({ resourceVersion: '1' }), reject })),
      onWrite: (_p, _c, r) => results.push(r),
    });
    w.desire(pod(0), cond('True'), undefined);
    sent[0]?.reject(throttle(2000));
    await tick();
    assert.deepEqual(results, []);
    assert.equal(w.pending, 1);
    w.sweep(0); // the sweep does not resend it behind the queue's back
    assert.equal(sent.length, 1);
    clock.advance(2000);
    await tick();
    assert.equal(sent.length, 2);
    sent[1]?.resolve();
    await tick();
    assert.deepEqual(results, ['written']);
    assert.equal(w.pending, 0);
  });

  it('a forgotten pod\'s queued write is never sent', async () => {
    const { w, sent } = setup(1);
    w.desire(pod(0), cond('True'), undefined);
    w.desire(pod(1), cond('True'), undefined);
    w.forget('u1');
    sent[0]?.resolve();
    await tick();
    assert.equal(sent.length, 1);
  });
});
