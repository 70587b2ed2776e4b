import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clusterPanic, localCountsOf } from '../../../src/controller/controller.ts';
import type { PolicyEntry } from '../../../src/controller/policies.ts';

// The policy status shows the panic threshold over every replica's share (ADR 0015), not only the status writer's.
describe('panic in the policy status, across replicas', () => {
  const entry = { policy: { spec: { readiness: { maxUnreadyPercent: 50 } } } } as unknown as PolicyEntry;
  const own = { panic: false, counts: { gated: 10, failing: 2, held: 2, maxUnready: 5, maxUnreadyPercent: 50 } };

  it('publishes this replica\'s share with its counts', () => {
    assert.deepEqual(localCountsOf({ failing: 2, erroring: 1, readinessPanic: own }, 3), {
      failing: 2,
      erroring: 1,
      remediations: 3,
      panic: { gated: 10, failing: 2, held: 2, maxUnready: 5, panic: false },
    });
    assert.equal(localCountsOf({ failing: 0, erroring: 0, readinessPanic: null }, 0).panic, undefined);
  });

  it('reports panic when another replica fails open although the status writer does not', () => {
    const agg = { failing: 10, erroring: 0, remediations: 0, panic: { gated: 20, failing: 10, held: 7, maxUnready: 10, panic: true } };
    assert.deepEqual(clusterPanic(entry, own, agg), { panic: true, counts: { gated: 20, failing: 10, held: 7, maxUnready: 10, maxUnreadyPercent: 50 } });
  });

  it('uses the policy\'s percent when the status writer owns no gated pod of it, and its own view without shares', () => {
    const agg = { failing: 6, erroring: 0, remediations: 0, panic: { gated: 10, failing: 6, held: 5, maxUnready: 5, panic: true } };
    assert.deepEqual(clusterPanic(entry, null, agg), { panic: true, counts: { gated: 10, failing: 6, held: 5, maxUnready: 5, maxUnreadyPercent: 50 } });
    assert.deepEqual(clusterPanic(entry, own, { failing: 2, erroring: 0, remediations: 0 }), own);
    assert.equal(clusterPanic(entry, undefined, { failing: 0, erroring: 0, remediations: 0 }), null);
  });
});
