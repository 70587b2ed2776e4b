import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { budgetDecisionFromCounts, fleetBudgetDecision, shareOf } from '../../../src/writeback/index.ts';
import type { BudgetSpec, EntryPod, FleetBudgetInput, LedgerEntry } from '../../../src/writeback/index.ts';

const spec: BudgetSpec = { maxUnavailable: 3, haltAbovePercentFailing: 40 };

function input(over: Partial<FleetBudgetInput> & { readonly where?: Readonly<Record<string, EntryPod>> } = {}): FleetBudgetInput {
  const where = over.where ?? {};
  return { self: 'r1', candidateUid: 'cand', pods: 12, ownedPods: 4, failing: 1, unavailable: 0, entries: [], podOf: (e) => where[e.uid] ?? 'gone', ...over };
}
const entry = (uid: string, replica = 'r2'): LedgerEntry => ({ uid, key: `shop/${uid}`, replica, at: 0 });

void describe('fleet-wide remediation budget (ADR 0033)', () => {
  void it('issue 26: all 12 pods fail, this replica owns 4: its own view (4 of 12, 33%) allowed eviction; the fleet count (12 of 12) halts', () => {
    assert.deepEqual(budgetDecisionFromCounts({ pods: 12, failing: 4, unavailable: 0 }, spec), { allow: true }, 'the old, per-replica view');
    const d = fleetBudgetDecision(input({ failing: 12 }), spec);
    assert.equal(d.allow ? '' : d.reason, 'halted');
  });

  void it('an evicted pod and its replacement do not reset the count: remediated pods of the window stay counted', () => {
    // 3 still fail, 3 were evicted and replaced by healthy pods: 12 pods again.
    const entries = [entry('a', 'r1'), entry('b', 'r1'), entry('c', 'r2')];
    assert.deepEqual(budgetDecisionFromCounts({ pods: 12, failing: 3, unavailable: 0 }, spec), { allow: true }, 'the old view: 25%');
    const d = fleetBudgetDecision(input({ failing: 3, entries, where: { a: 'gone', b: 'terminating', c: 'gone' } }), spec);
    assert.equal(d.allow ? '' : d.reason, 'halted', '6 of 12 (50%)');
  });

  void it('every replica\'s remediations in flight count against maxUnavailable', () => {
    const entries = [entry('a', 'r2'), entry('b', 'r3'), entry('c', 'r3')];
    const where = { a: 'available', b: 'available', c: 'available' } as const;
    const d = fleetBudgetDecision(input({ failing: 4, entries, where }), spec);
    assert.equal(d.allow ? '' : d.reason, 'budget');
    assert.equal(fleetBudgetDecision(input({ failing: 4, entries: entries.slice(0, 2), where }), spec).allow, true);
    // A pod already not Ready is in `unavailable` already: its entry does not count it twice.
    assert.equal(fleetBudgetDecision(input({ failing: 4, unavailable: 1, entries: entries.slice(0, 2), where: { a: 'unavailable', b: 'available' } }), spec).allow, true);
  });

  void it('one replica alone never takes more than its share: ⌈maxUnavailable × owned / pods⌉, at least 1', () => {
    assert.equal(shareOf(3, 4, 12), 1);
    assert.equal(shareOf(5, 6, 12), 3);
    assert.equal(shareOf(1, 1, 100), 1);
    assert.equal(shareOf(0, 1, 100), 1);
    const d = fleetBudgetDecision(input({ failing: 2, entries: [entry('a', 'r1')], where: { a: 'terminating' } }), spec);
    assert.equal(d.allow ? '' : d.reason, 'share', 'its one remediation is not over yet');
    assert.equal(fleetBudgetDecision(input({ failing: 2, entries: [entry('a', 'r1')], where: { a: 'gone' } }), spec).allow, true, 'over once the pod is gone');
    assert.equal(fleetBudgetDecision(input({ failing: 2, ownedPods: 8, entries: [entry('a', 'r1')], where: { a: 'terminating' } }), spec).allow, true, 'owning 8 of 12, its share is 2');
  });

  void it('the candidate\'s own entry (a retry) does not count against it', () => {
    assert.equal(fleetBudgetDecision(input({ entries: [{ ...entry('cand', 'r1') }], where: { cand: 'available' } }), { maxUnavailable: 1, haltAbovePercentFailing: 40 }).allow, true);
  });
});
