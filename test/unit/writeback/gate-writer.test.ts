import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GateWriter } from '../../../src/writeback/gate-writer.ts';
import type { GateCondition, PodRef } from '../../../src/writeback/gate-writer.ts';
import { FakeClock } from '../../support/fake-clock.ts';

const pod: PodRef = { uid: 'u1', namespace: 'ns', name: 'p' };
const cond = (status: 'True' | 'False', message = ''): GateCondition => ({
  type: 'outprobe.io/web',
  status,
  reason: status === 'True' ? 'ProbeSucceeded' : 'ProbeFailed',
  message,
  lastTransitionTime: '2026-11-23T00:00:00Z',
  lastProbeTime: '2026-11-23T00:00:00Z',
});

/** A patch whose calls the test completes by hand, in any order. */
function manualPatch(): { calls: { condition: GateCondition; resolve: (r: 'ok' | 'gone') => void; reject: (e: Error) => void }[]; patch: (p: PodRef, c: GateCondition) => Promise<'ok' | 'gone'> } {
  const calls: { condition: GateCondition; resolve: (r: 'ok' | 'gone') => void; reject: (e: Error) => void }[] = [];
  return {
    calls,
    patch: (_p, condition) => new Promise((resolve, reject) => calls.push({ condition, resolve, reject })),
  };
}
const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('GateWriter', () => {
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
});
