import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Handover, owner } from '../../../src/sharding/index.ts';
import { FakeClock } from '../../support/fake-clock.ts';

const uids = Array.from({ length: 300 }, (_, i) => `pod-${i}`);
const lease = 4000;

describe('handover gating', () => {
  it('scale-up: pods gained from a live owner wait one lease duration', () => {
    const clock = new FakeClock();
    const h = new Handover('r3', lease);
    h.update(undefined, ['r1', 'r2', 'r3'], uids, clock.now());
    const mine = uids.filter((u) => owner(['r1', 'r2', 'r3'], u) === 'r3');
    assert.equal(h.size, mine.length, 'every pod r3 owns was gained from r1 or r2');
    const u = mine[0]!;
    assert.equal(h.gain(u)?.previous, owner(['r1', 'r2'], u));
    assert.ok(!h.mayRemediate(u, ['r1', 'r2', 'r3'], clock.now()));
    clock.advance(lease - 1);
    assert.ok(!h.mayRemediate(u, ['r1', 'r2', 'r3'], clock.now()));
    clock.advance(1);
    assert.ok(h.mayRemediate(u, ['r1', 'r2', 'r3'], clock.now()));
  });

  it('failover: once the previous owner expired or released, at once', () => {
    const clock = new FakeClock();
    const h = new Handover('r1', lease);
    h.update(['r1', 'r2'], ['r1', 'r2'], uids, clock.now());
    assert.equal(h.size, 0, 'nothing changed hands');
    h.update(['r1', 'r2'], ['r1'], uids, clock.now());
    const gained = uids.filter((u) => owner(['r1', 'r2'], u) === 'r2');
    for (const u of gained) {
      assert.equal(h.gain(u)?.previous, 'r2');
      assert.ok(h.mayRemediate(u, ['r1'], clock.now()), 'r2 is no longer live');
      assert.ok(!h.mayRemediate(u, ['r1', 'r2'], clock.now()), 'had r2 still been live, it would wait');
    }
  });

  it('pods never handed over, lost, or gone carry no gate', () => {
    const clock = new FakeClock();
    const h = new Handover('r1', lease);
    h.update(undefined, ['r1'], uids, clock.now());
    assert.equal(h.size, 0, 'sole member from the start: no previous owner');
    h.update(['r1'], ['r1', 'r2'], uids, clock.now());
    assert.equal(h.size, 0, 'r1 only lost pods');
    h.update(['r1', 'r2'], ['r1'], uids, clock.now());
    assert.ok(uids.some((u) => h.gain(u)?.previous === 'r2'), 'r2 left: its pods were gained');
    h.update(['r1'], ['r1'], [], clock.now());
    assert.equal(h.size, 0, 'deleted pods are forgotten');
    assert.ok(h.mayRemediate('unknown', ['r1'], clock.now()));
  });
});
