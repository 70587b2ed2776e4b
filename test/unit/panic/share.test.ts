import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { allowanceOf, holding, maxUnready, noHold, splitCap, stepHold } from '../../../src/panic/index.ts';
import type { HoldState } from '../../../src/panic/index.ts';

// The fleet-wide readiness cap (issue 26, ADR 0032): the policy's cap split between the replicas.
const byOwner = (o: Record<string, number>): Map<string, number> => new Map(Object.entries(o));

describe('splitCap: the policy\'s cap split by largest remainder', () => {
  it('24 pods, 8 each, cap 7: 3 + 2 + 2, the extra seat to the smallest identity on a tie', () => {
    assert.deepEqual([...splitCap(7, ['r2', 'r3', 'r1'], byOwner({ r1: 8, r2: 8, r3: 8 }))], [['r1', 3], ['r2', 2], ['r3', 2]]);
  });

  it('12 pods owned 5/4/3, cap 3: 1 each (the largest remainders win, not the largest owner)', () => {
    assert.deepEqual(Object.fromEntries(splitCap(3, ['r1', 'r2', 'r3'], byOwner({ r1: 5, r2: 4, r3: 3 }))), { r1: 1, r2: 1, r3: 1 });
  });

  it('a member owning no gated pod gets nothing; pods no member owns are not split', () => {
    assert.deepEqual(Object.fromEntries(splitCap(4, ['r1', 'r2'], byOwner({ r1: 10, '': 5 }))), { r1: 4, r2: 0 });
    assert.deepEqual(Object.fromEntries(splitCap(4, ['r1', 'r2'], new Map())), { r1: 0, r2: 0 });
  });

  it('the shares always sum to the cap and never go over a member\'s exact quota rounded up (2,000 random cases)', () => {
    let seed = 7;
    const rnd = (n: number): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n);
    for (let i = 0; i < 2000; i++) {
      const members = ['a', 'b', 'c', 'd', 'e'].slice(0, 1 + rnd(5));
      const weights = new Map(members.map((m) => [m, rnd(40)]));
      const total = [...weights.values()].reduce((x, y) => x + y, 0);
      const cap = maxUnready(rnd(101), total);
      const split = splitCap(cap, [...members].reverse(), weights);
      const sum = [...split.values()].reduce((x, y) => x + y, 0);
      assert.equal(sum, total === 0 ? 0 : cap, JSON.stringify({ cap, weights: [...weights] }));
      for (const m of members) assert.ok((split.get(m) ?? 0) <= Math.ceil((cap * (weights.get(m) ?? 0)) / Math.max(1, total)));
      assert.deepEqual(split, splitCap(cap, members, weights), 'the same split whatever the order of the members');
    }
  });
});

describe('allowanceOf: what one replica may hold False now', () => {
  const members = ['r1', 'r2', 'r3'];

  it('web: 24 gated pods at 33 %: cap 7; r1\'s share is 3, but with 6 False on the others\' pods it may add only 1', () => {
    const a = allowanceOf({ maxUnreadyPercent: 33, self: 'r1', members, gatedBy: byOwner({ r1: 8, r2: 8, r3: 8 }), falseElsewhere: 6 });
    assert.deepEqual({ gated: a.gated, cap: a.cap, share: a.share, allowance: a.allowance }, { gated: 24, cap: 7, share: 3, allowance: 1 });
    // The per-replica rule of ADR 0015 would let r1 hold ⌊33 % × 8⌋ = 2 whatever the others hold: 6 + 2 = 8 > 7.
    assert.equal(maxUnready(33, 8), 2);
  });

  it('the three replicas\' allowances never sum above the cap, whoever holds what', () => {
    for (const falses of [[0, 0, 0], [3, 2, 2], [7, 0, 0], [0, 5, 4], [2, 2, 2]]) {
      const gatedBy = byOwner({ r1: 8, r2: 8, r3: 8 });
      const sum = members.reduce((n, self, i) => {
        const elsewhere = falses.reduce((x, f, j) => (j === i ? x : x + f), 0);
        const a = allowanceOf({ maxUnreadyPercent: 33, self, members, gatedBy, falseElsewhere: elsewhere });
        return n + a.allowance;
      }, 0);
      assert.ok(sum <= 7, `${JSON.stringify(falses)}: ${sum}`);
    }
  });

  it('api: 12 pods at 25 %: cap 3, one each; a replica that is no member (standing down, not joined) may hold none', () => {
    const gatedBy = byOwner({ r1: 5, r2: 4, r3: 3 });
    assert.equal(allowanceOf({ maxUnreadyPercent: 25, self: 'r3', members, gatedBy, falseElsewhere: 0 }).allowance, 1);
    assert.equal(allowanceOf({ maxUnreadyPercent: 25, self: 'r4', members, gatedBy, falseElsewhere: 0 }).allowance, 0);
  });

  it('alone (no sharding) it is ADR 0015\'s threshold: the cap, and the exit limit 10 points lower', () => {
    const a = allowanceOf({ maxUnreadyPercent: 50, self: 'outprobe', members: ['outprobe'], gatedBy: byOwner({ outprobe: 10 }), falseElsewhere: 0 });
    assert.deepEqual({ cap: a.cap, share: a.share, allowance: a.allowance, exit: a.exitAllowance }, { cap: 5, share: 5, allowance: 5, exit: 4 });
    const off = allowanceOf({ maxUnreadyPercent: 100, self: 'r1', members, gatedBy: byOwner({ r1: 8, r2: 8, r3: 8 }), falseElsewhere: 16 });
    assert.equal(off.allowance, 8, '100 % disables the cap: every pod of its own');
  });
});

describe('stepHold: the first moments of a mass failure are held', () => {
  const windowMs = 3000; // period 1 s × failureThreshold 3
  it('more failures within the window than the allowance: no new False for one window, then no second hold for the same burst', () => {
    let s: HoldState = noHold;
    s = stepHold(s, { now: 10_000, windowMs, since: [9_500, 9_800, 9_900], allowance: 2 });
    assert.ok(holding(s, 10_000));
    assert.equal(s.until, 13_000);
    s = stepHold(s, { now: 12_000, windowMs, since: [9_500, 9_800, 9_900, 11_900], allowance: 2 });
    assert.ok(holding(s, 12_000), 'held on while the window lasts');
    s = stepHold(s, { now: 13_000, windowMs, since: [9_500, 9_800, 9_900, 11_900, 12_900, 12_950], allowance: 2 });
    assert.ok(!holding(s, 13_000), 'the hold is bounded by the window, however fast failures keep arriving');
    s = stepHold(s, { now: 14_000, windowMs, since: [11_900, 12_900, 12_950, 13_900], allowance: 2 });
    assert.ok(!holding(s, 14_000), 'no second hold while the burst lasts');
    s = stepHold(s, { now: 20_000, windowMs, since: [11_900, 12_900, 12_950, 13_900], allowance: 2 });
    assert.deepEqual(s, noHold, 'the burst is over');
    s = stepHold(s, { now: 30_000, windowMs, since: [29_000, 29_500, 29_900], allowance: 2 });
    assert.ok(holding(s, 30_000), 'a new burst is held again');
  });

  it('failures within the allowance are not held', () => {
    const s = stepHold(noHold, { now: 10_000, windowMs, since: [9_500, 9_900], allowance: 2 });
    assert.deepEqual(s, noHold);
  });
});
