import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InternCache, StringInterner } from '../../../src/kube/index.ts';

describe('InternCache', () => {
  it('gives the value first cached under a key', () => {
    const c = new InternCache<{ n: number }>(16);
    const first = { n: 1 };
    assert.equal(c.intern('a', first), first);
    assert.equal(c.intern('a', { n: 2 }), first);
    assert.notEqual(c.intern('b', { n: 1 }), first);
  });

  it('treats keys as plain text (prototype names included)', () => {
    const c = new InternCache<string>(16);
    for (const k of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) assert.equal(c.intern(k, `v-${k}`), `v-${k}`);
    assert.equal(c.intern('__proto__', 'other'), 'v-__proto__');
    assert.equal(c.size, 4);
  });

  it('holds at most maxEntries, however many distinct keys come', () => {
    const c = new InternCache<number>(100);
    for (let i = 0; i < 10_000; i++) {
      c.intern(`k${i}`, i);
      assert.ok(c.size <= 100, `size ${c.size} after ${i + 1} keys`);
    }
  });

  it('keeps a value in use across generations, and forgets one no longer asked for', () => {
    const c = new InternCache<object>(4);
    const kept = {};
    const dropped = {};
    c.intern('kept', kept);
    c.intern('dropped', dropped);
    for (let i = 0; i < 20; i++) {
      assert.equal(c.intern('kept', {}), kept);
      c.intern(`filler-${i}`, {});
    }
    assert.notEqual(c.intern('dropped', {}), dropped);
  });
});

describe('StringInterner', () => {
  it('returns equal text, bounded, and leaves long strings alone', () => {
    const s = new StringInterner({ maxEntries: 10, maxLength: 8 });
    assert.equal(s.intern('web'), 'web');
    const long = 'x'.repeat(9);
    assert.equal(s.intern(long), long);
    const sizes = [s.size];
    for (let i = 0; i < 1000; i++) s.intern(`v${i}`);
    sizes.push(s.size);
    assert.deepEqual(sizes.map((n) => n <= 10), [true, true]);
    assert.equal(sizes[0], 1);
  });
});
