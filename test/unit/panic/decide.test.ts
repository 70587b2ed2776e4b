import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decidePanic, maxUnready, panicCounts, panicExitLimit, panicMessage } from '../../../src/panic/index.ts';
import type { FailingPod, PanicState } from '../../../src/panic/index.ts';

/** Pods p0..p(n-1), p0 failing first. */
const failing = (n: number, from = 0): FailingPod[] => Array.from({ length: n }, (_, i) => ({ uid: `p${i + from}`, since: 1000 + (i + from) * 10 }));
const sorted = (s: ReadonlySet<string>): string[] => [...s].sort();

describe('panic threshold decision', () => {
  void it('holds every failing pod while they fit within the threshold (no panic)', () => {
    const s = decidePanic({ maxUnreadyPercent: 50, gated: 10, failing: failing(2) }, undefined);
    assert.equal(s.panic, false);
    assert.deepEqual(sorted(s.held), ['p0', 'p1']);
    assert.deepEqual(s.failOpen, []);
  });

  void it('exactly at the threshold is not panic: 5 of 10 at 50%', () => {
    const s = decidePanic({ maxUnreadyPercent: 50, gated: 10, failing: failing(5) }, undefined);
    assert.equal(s.panic, false);
    assert.equal(s.held.size, 5);
  });

  void it('one more than the threshold: panic, the oldest failures held, the newest fail open first', () => {
    const s = decidePanic({ maxUnreadyPercent: 50, gated: 10, failing: failing(10) }, undefined);
    assert.equal(s.panic, true);
    assert.deepEqual(sorted(s.held), ['p0', 'p1', 'p2', 'p3', 'p4']);
    assert.deepEqual(s.failOpen, ['p9', 'p8', 'p7', 'p6', 'p5']);
    assert.equal(s.maxUnready, 5);
  });

  void it('orders by failure time, then by UID, whatever the input order', () => {
    const pods = [{ uid: 'b', since: 5 }, { uid: 'c', since: 1 }, { uid: 'a', since: 5 }, { uid: 'd', since: 9 }];
    const s = decidePanic({ maxUnreadyPercent: 50, gated: 4, failing: pods.reverse() }, undefined);
    assert.deepEqual(sorted(s.held), ['a', 'c']);
    assert.deepEqual(s.failOpen, ['d', 'b']);
  });

  void it('100 disables the guard: every gated pod may be held False', () => {
    const s = decidePanic({ maxUnreadyPercent: 100, gated: 10, failing: failing(10) }, undefined);
    assert.equal(s.panic, false);
    assert.equal(s.held.size, 10);
  });

  void it('0 never holds a pod False: any failure is panic, and panic ends only when none fail', () => {
    const s1 = decidePanic({ maxUnreadyPercent: 0, gated: 10, failing: failing(1) }, undefined);
    assert.equal(s1.panic, true);
    assert.equal(s1.held.size, 0);
    assert.deepEqual(s1.failOpen, ['p0']);
    assert.equal(decidePanic({ maxUnreadyPercent: 0, gated: 10, failing: failing(1) }, s1).panic, true);
    const s2 = decidePanic({ maxUnreadyPercent: 0, gated: 10, failing: [] }, s1);
    assert.equal(s2.panic, false);
  });

  void it('rounds the threshold down: one gated pod at 50% is never held False', () => {
    assert.equal(maxUnready(50, 1), 0);
    assert.equal(maxUnready(50, 3), 1);
    assert.equal(maxUnready(33, 100), 33);
    const s = decidePanic({ maxUnreadyPercent: 50, gated: 1, failing: failing(1) }, undefined);
    assert.equal(s.panic, true);
    assert.deepEqual(s.failOpen, ['p0']);
  });

  void it('hysteresis: panic lasts until the failing share is at most the threshold less 10 points', () => {
    let s: PanicState = decidePanic({ maxUnreadyPercent: 50, gated: 10, failing: failing(7) }, undefined);
    assert.equal(s.panic, true);
    assert.equal(panicExitLimit(50, 10), 4);
    s = decidePanic({ maxUnreadyPercent: 50, gated: 10, failing: failing(5) }, s); // 50%: would be calm from scratch
    assert.equal(s.panic, true, 'still in panic at 5 of 10');
    s = decidePanic({ maxUnreadyPercent: 50, gated: 10, failing: failing(5) }, s);
    assert.equal(s.panic, true);
    s = decidePanic({ maxUnreadyPercent: 50, gated: 10, failing: failing(4) }, s);
    assert.equal(s.panic, false, 'ends at 40%');
    assert.equal(s.held.size, 4);
    assert.deepEqual(s.failOpen, []);
  });

  void it('in panic the held set only shrinks: a pod that failed open stays True though a slot freed', () => {
    const s1 = decidePanic({ maxUnreadyPercent: 50, gated: 10, failing: failing(7) }, undefined);
    assert.deepEqual(sorted(s1.held), ['p0', 'p1', 'p2', 'p3', 'p4']);
    // p0 recovers: 6 fail, p5 and p6 stay open though only 4 are held.
    const s2 = decidePanic({ maxUnreadyPercent: 50, gated: 10, failing: failing(6, 1) }, s1);
    assert.equal(s2.panic, true);
    assert.deepEqual(sorted(s2.held), ['p1', 'p2', 'p3', 'p4']);
    assert.deepEqual(s2.failOpen, ['p6', 'p5']);
  });

  void it('in panic, fewer gated pods lower the cap: the most recently failed held pods are released first', () => {
    const s1 = decidePanic({ maxUnreadyPercent: 50, gated: 10, failing: failing(7) }, undefined);
    const s2 = decidePanic({ maxUnreadyPercent: 50, gated: 8, failing: failing(7) }, s1);
    assert.equal(s2.maxUnready, 4);
    assert.deepEqual(sorted(s2.held), ['p0', 'p1', 'p2', 'p3']);
    assert.deepEqual(s2.failOpen, ['p6', 'p5', 'p4']);
  });

  void it('with no gated pods nothing is held and there is no panic', () => {
    const s = decidePanic({ maxUnreadyPercent: 50, gated: 0, failing: [] }, undefined);
    assert.equal(s.panic, false);
    assert.equal(s.held.size, 0);
  });

  void it('with a limit (a replica\'s allowance, ADR 0032): in panic a pod already False may stay held, one kept True never turns False', () => {
    // Entered with nothing to hold (the others' pods took the cap): everything failed open.
    const s1 = decidePanic({ maxUnreadyPercent: 50, gated: 10, failing: failing(4), limit: 0, share: 2 }, undefined);
    assert.deepEqual([s1.panic, s1.held.size, s1.maxUnready], [true, 0, 2]);
    // The allowance grew to 2. p3's gate is False already (a previous owner's): it may stay held; p0–p2 stay True.
    const s2 = decidePanic({ maxUnreadyPercent: 50, gated: 10, failing: failing(4), limit: 2, alreadyFalse: new Set(['p3']) }, s1);
    assert.deepEqual(sorted(s2.held), ['p3']);
    assert.deepEqual(s2.failOpen, ['p2', 'p1', 'p0']);
  });

  void it('says the counts in words', () => {
    const s = decidePanic({ maxUnreadyPercent: 50, gated: 10, failing: failing(7) }, undefined);
    assert.equal(panicMessage(panicCounts(s)), '7 of 10 gated pods fail readiness; at most 50% (5) may be held unready: failing open (5 held unready, 2 kept ready)');
  });
});
