import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { handoverFirstPass, spreadDueAt } from '../../../src/probing/index.ts';

describe('spreadDueAt (ADR 0019)', () => {
  it('falls within one period from now, at the same phase for the same key whenever it is asked', () => {
    const period = 10_000;
    for (const now of [0, 1_700_000_000_123, 1_700_000_004_999]) {
      for (let i = 0; i < 100; i++) {
        const key = `shop/web/uid-${i}/web/readiness`;
        const due = spreadDueAt(key, period, now);
        assert.ok(due >= now && due < now + period);
        assert.equal(due % period, spreadDueAt(key, period, now + 123_456) % period, 'the phase does not depend on when');
      }
    }
  });

  it('spreads many keys evenly over the period', () => {
    const period = 10_000;
    const slices = new Array<number>(10).fill(0);
    for (let i = 0; i < 10_000; i++) {
      const s = Math.floor((spreadDueAt(`ns/p/uid-${i}/c/liveness`, period, 0) / period) * 10);
      slices[s] = (slices[s] ?? 0) + 1;
    }
    assert.ok(Math.max(...slices) < 1_150 && Math.min(...slices) > 850, JSON.stringify(slices));
  });

  it('a zero period is due now', () => {
    assert.equal(spreadDueAt('k', 0, 42), 42);
  });
});

describe('handoverFirstPass (ADR 0019: a slot lost in a shard hand-off is caught up)', () => {
  const period = 10_000;
  const key = 'shop/web/uid-7/web/readiness';
  const phase = spreadDueAt(key, period, 0);
  const base = 1_700_000_000_000 - (1_700_000_000_000 % period) + phase; // a slot of this key

  it('a slot that fell within the last second runs now, and the ticks stay on its phase', () => {
    for (const late of [0, 1, 400, 1_000]) {
      assert.deepEqual(handoverFirstPass(key, period, base + late), { dueAt: base + late, phaseAt: base }, `${late} ms after the slot`);
    }
  });

  it('an older slot is not caught up: the first pass waits for the next slot', () => {
    for (const late of [1_001, 5_000, 9_999]) {
      assert.deepEqual(handoverFirstPass(key, period, base + late), { dueAt: base + period, phaseAt: base + period }, `${late} ms after the slot`);
    }
  });

  it('catches up at most half a period (short periods)', () => {
    assert.deepEqual(handoverFirstPass(key, 1_000, 500_000 + spreadDueAt(key, 1_000, 0) + 500), { dueAt: 500_000 + spreadDueAt(key, 1_000, 0) + 500, phaseAt: 500_000 + spreadDueAt(key, 1_000, 0) });
    const next = handoverFirstPass(key, 1_000, 500_000 + spreadDueAt(key, 1_000, 0) + 501);
    assert.deepEqual(next, { dueAt: 501_000 + spreadDueAt(key, 1_000, 0), phaseAt: 501_000 + spreadDueAt(key, 1_000, 0) });
  });
});
