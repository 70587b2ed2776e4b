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

  it('applied pod by pod (ADR 0073): asking about a pod settles it first; changes in a row equal each applied whole', () => {
    const memberships: (readonly string[])[] = [['r1', 'r2'], ['r1', 'r2', 'r3'], ['r1', 'r3'], ['r1'], ['r1', 'r4'], ['r1', 'r2', 'r4']];
    const whole = new Handover('r1', lease);
    const lazy = new Handover('r1', lease);
    let before: readonly string[] | undefined;
    for (const [i, after] of memberships.entries()) {
      whole.update(before, after, uids, i);
      lazy.begin(before, after, i);
      // Some pods are asked about (or passed) between changes, the others only at the end.
      for (const u of uids.slice(0, 40 * i)) if (i % 2 === 0) lazy.settle(u);
      before = after;
    }
    for (const u of uids.slice(0, 100)) assert.deepEqual(lazy.gain(u), whole.gain(u), `${u} asked before the pass reached it`);
    assert.ok(!lazy.mayRemediate(uids.find((u) => whole.gain(u)?.previous === 'r2') ?? 'none', ['r1', 'r2', 'r4'], memberships.length - 1), 'a pod gained from r2, live, waits before the pass reaches it');
    assert.equal(lazy.unfinished, memberships.length);
    for (const u of uids.slice(0, 290)) lazy.settle(u);
    lazy.finish();
    assert.equal(lazy.unfinished, 0);
    for (const u of uids.slice(0, 290)) assert.deepEqual(lazy.gain(u), whole.gain(u), u);
    assert.equal(lazy.size, uids.slice(0, 290).filter((u) => whole.gain(u) !== undefined).length, 'pods the pass did not find (gone) are forgotten');
  });
});
