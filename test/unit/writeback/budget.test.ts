import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { budgetDecision, resolveMaxUnavailable } from '../../../src/writeback/budget.ts';
import type { BudgetPod } from '../../../src/writeback/budget.ts';

const pod = (uid: string, over: Partial<BudgetPod> = {}): BudgetPod => ({ uid, ready: true, failing: false, remediating: false, ...over });

describe('remediation budget', () => {
  it('resolves maxUnavailable: integers as is, percents rounded down with a floor of 1', () => {
    assert.equal(resolveMaxUnavailable(2, 10), 2);
    assert.equal(resolveMaxUnavailable(0, 10), 0);
    assert.equal(resolveMaxUnavailable('50%', 5), 2);
    assert.equal(resolveMaxUnavailable('10%', 5), 1);
    assert.equal(resolveMaxUnavailable('0%', 5), 0);
    assert.equal(resolveMaxUnavailable('100%', 7), 7);
  });

  it('allows one failing pod among healthy ones', () => {
    const pods = [pod('a', { failing: true, ready: false }), pod('b'), pod('c'), pod('d'), pod('e')];
    assert.deepEqual(budgetDecision('a', pods, { maxUnavailable: 1, haltAbovePercentFailing: 50 }), { allow: true });
  });

  it('defers when another pod is already being remediated or not ready', () => {
    const spec = { maxUnavailable: 1, haltAbovePercentFailing: 50 };
    const remediating = [pod('a', { failing: true }), pod('b', { remediating: true }), pod('c'), pod('d'), pod('e')];
    assert.equal(budgetDecision('a', remediating, spec).allow, false);
    const unready = [pod('a', { failing: true }), pod('b', { ready: false }), pod('c'), pod('d'), pod('e')];
    const d = budgetDecision('a', unready, spec);
    assert.deepEqual(d.allow ? null : d.reason, 'budget');
    assert.equal(budgetDecision('a', unready, { ...spec, maxUnavailable: 2 }).allow, true);
  });

  it('halts when 60% of the pods fail at once (above 50%)', () => {
    const pods = [pod('a', { failing: true }), pod('b', { failing: true }), pod('c', { failing: true }), pod('d'), pod('e')];
    const d = budgetDecision('a', pods, { maxUnavailable: 5, haltAbovePercentFailing: 50 });
    assert.ok(!d.allow);
    assert.equal(d.reason, 'halted');
    assert.match(d.message, /3 of 5 pods \(60%\) fail at once/);
  });

  it('exactly at the threshold is not a halt', () => {
    const pods = [pod('a', { failing: true }), pod('b')];
    assert.equal(budgetDecision('a', pods, { maxUnavailable: 1, haltAbovePercentFailing: 50 }).allow, true);
  });

  it('maxUnavailable 0 never remediates', () => {
    assert.equal(budgetDecision('a', [pod('a', { failing: true }), pod('b'), pod('c')], { maxUnavailable: 0, haltAbovePercentFailing: 100 }).allow, false);
  });
});
