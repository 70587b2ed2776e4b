import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { spreadDueAt } from '../../../src/probing/index.ts';

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
