import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FairShare } from '../../../src/probing/index.ts';
import type { Share } from '../../../src/probing/index.ts';

const share = (namespace: string, policy = 'p'): Share => ({ namespace, policy });

/** Admits everything the pool lets start now; returns the items in admission order. */
function drain<T>(pool: FairShare<T>): { readonly items: T[]; readonly slots: Parameters<FairShare<T>['done']>[0][] } {
  const items: T[] = [];
  const slots: Parameters<FairShare<T>['done']>[0][] = [];
  for (let a = pool.next(); a !== undefined; a = pool.next()) {
    items.push(a.item);
    slots.push(a.slot);
  }
  return { items, slots };
}

describe('FairShare admission', () => {
  it('is work-conserving: one busy namespace alone uses every slot', () => {
    const pool = new FairShare<string>(4);
    for (let i = 0; i < 10; i++) pool.push(share('a'), `a${i}`);
    assert.deepEqual(drain(pool).items, ['a0', 'a1', 'a2', 'a3']);
    assert.deepEqual({ inFlight: pool.inFlight, queued: pool.queued }, { inFlight: 4, queued: 6 });
  });

  it('gives a free slot to the namespace with the fewest passes in flight, FIFO within a policy', () => {
    const pool = new FairShare<string>(4);
    pool.push(share('a'), 'a0');
    pool.push(share('a'), 'a1');
    const a = drain(pool).slots[0];
    assert.ok(a !== undefined);
    pool.push(share('a'), 'a2');
    pool.push(share('a'), 'a3');
    for (let i = 0; i < 3; i++) pool.push(share('b'), `b${i}`);
    // Two free slots, both to b (0, then 1 in flight, against a's 2); then each at its share.
    const b = drain(pool);
    assert.deepEqual(b.items, ['b0', 'b1']);
    pool.done(a); // a: 1 in flight, b: 2
    assert.deepEqual(drain(pool).items, ['a2']);
    const bSlot = b.slots[0];
    assert.ok(bSlot !== undefined);
    pool.done(bSlot); // a: 2, b: 1
    assert.deepEqual(drain(pool).items, ['b2']);
    pool.done(a);
    assert.deepEqual(drain(pool).items, ['a3']);
  });

  it('shares slots between policies of one namespace the same way', () => {
    const pool = new FairShare<string>(4);
    for (let i = 0; i < 6; i++) pool.push(share('a', 'hog'), `hog${i}`);
    for (let i = 0; i < 6; i++) pool.push(share('a', 'small'), `small${i}`);
    assert.deepEqual(drain(pool).items.sort(), ['hog0', 'hog1', 'small0', 'small1']);
  });

  it('reclaims a share held by passes that never end: the newcomer starts at once, the borrower waits', () => {
    const pool = new FairShare<string>(4);
    for (let i = 0; i < 20; i++) pool.push(share('hostile'), `h${i}`);
    assert.equal(drain(pool).items.length, 4); // alone: all four slots, lent
    for (let i = 0; i < 5; i++) pool.push(share('victim'), `v${i}`);
    // The pool is full of borrowed slots: the victim gets its share (2 of 4) beyond it.
    assert.deepEqual(drain(pool).items, ['v0', 'v1']);
    assert.equal(pool.inFlight, 6);
    assert.deepEqual(pool.inFlightByNamespace(), new Map([['hostile', 4], ['victim', 2]]));
  });

  it('reclaims within a namespace for a policy below its share', () => {
    const pool = new FairShare<string>(4);
    for (let i = 0; i < 20; i++) pool.push(share('a', 'hog'), `h${i}`);
    drain(pool);
    pool.push(share('a', 'other'), 'o0');
    pool.push(share('a', 'other'), 'o1');
    pool.push(share('a', 'other'), 'o2');
    assert.deepEqual(drain(pool).items, ['o0', 'o1']);
  });

  it('never goes beyond the pool when nobody holds more than its share', () => {
    const pool = new FairShare<string>(4);
    for (let n = 0; n < 10; n++) pool.push(share(`ns${n}`), `n${n}`);
    assert.equal(drain(pool).items.length, 4);
    assert.equal(pool.inFlight, 4);
  });

  it('never holds more than twice the pool, however many namespaces reclaim', () => {
    const pool = new FairShare<number>(4);
    for (let i = 0; i < 4; i++) pool.push(share('hog', `p${i}`), i);
    drain(pool);
    for (let n = 0; n < 50; n++) pool.push(share(`ns${n}`), n);
    drain(pool);
    assert.ok(pool.inFlight <= 8, `in flight ${pool.inFlight}`);
  });

  it('forgets idle namespaces and policies; clear() drops what waits', () => {
    const pool = new FairShare<string>(2);
    pool.push(share('a'), 'a0');
    pool.push(share('b'), 'b0');
    pool.push(share('b'), 'b1');
    const { slots } = drain(pool);
    pool.clear();
    assert.equal(pool.queued, 0);
    for (const s of slots) pool.done(s);
    assert.equal(pool.inFlight, 0);
    assert.equal(pool.inFlightByNamespace().size, 0);
  });
});
