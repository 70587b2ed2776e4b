import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { fnv1a64, hash64, owner, ranked } from '../../../src/sharding/index.ts';
import { hash64Bytes } from '../../../src/sharding/hash.ts';

// Deterministic UUID-shaped strings, so the measured split is the same on every run.
const uuid = (i: number): string => createHash('sha1').update(`pod-${i}`).digest('hex').slice(0, 32).replace(/^(.{8})(.{4})(.{4})(.{4})/, '$1-$2-$3-$4-');
const uids = Array.from({ length: 10_000 }, (_, i) => uuid(i));
const owners = (members: readonly string[]): Map<string, string | undefined> => new Map(uids.map((u) => [u, owner(members, u)]));
const moved = (a: Map<string, string | undefined>, b: Map<string, string | undefined>): string[] => uids.filter((u) => a.get(u) !== b.get(u));

describe('rendezvous hashing', () => {
  it('FNV-1a 64 matches the published test vectors', () => {
    const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
    assert.equal(fnv1a64(enc('')), 0xcbf29ce484222325n);
    assert.equal(fnv1a64(enc('a')), 0xaf63dc4c8601ec8cn);
    assert.equal(fnv1a64(enc('foobar')), 0x85944171f73967e8n);
  });

  it('hash64 keeps its values (they are the protocol between replicas): the fast path equals the byte path (issue 31)', () => {
    // Pinned from the byte path as it was before the fast path existed.
    assert.equal(hash64('r1', 'abc'), 0x62b8e8f79b5b4737n);
    assert.equal(hash64('outprobe-7d9f8c6b5-abcde', '0b7c3a4e-1f2d-4c5b-9a8e-000000000042'), 0x6162d9276780e470n);
    assert.equal(hash64('', ''), 0xb9034ad37056f5fbn);
    assert.equal(hash64('zoné', 'ünïcode-✓'), 0x757822b7351c73ffn);
    // Deterministic strings of every ASCII code (and some not), every length up to 40.
    const str = (seed: number, len: number): string => Array.from({ length: len }, (_, i) => String.fromCharCode((seed * 131 + i * 17) % (seed % 7 === 0 ? 300 : 128))).join('');
    for (let i = 0; i < 3000; i++) {
      const a = str(i, i % 41);
      const b = str(i * 7 + 3, (i * 13) % 41);
      assert.equal(hash64(a, b), hash64Bytes(a, b), `${JSON.stringify(a)} ${JSON.stringify(b)}`);
    }
    // owner compares the same numbers as the BigInt values would.
    const byBigInt = (members: readonly string[], key: string): string | undefined => {
      let best: string | undefined;
      let h = -1n;
      for (const m of members) {
        const x = hash64Bytes(m, key);
        if (x > h || (x === h && best !== undefined && m < best)) [best, h] = [m, x];
      }
      return best;
    };
    for (const u of uids.slice(0, 2000)) assert.equal(owner(['r1', 'r2', 'r3', 'r4'], u), byBigInt(['r1', 'r2', 'r3', 'r4'], u));
  });

  it('is stable: same inputs, same owner, whatever the member order; separator keeps fields apart', () => {
    assert.equal(hash64('r1', 'abc'), hash64('r1', 'abc'));
    assert.notEqual(hash64('ab', 'c'), hash64('a', 'bc'));
    for (const u of uids.slice(0, 500)) assert.equal(owner(['r1', 'r2', 'r3'], u), owner(['r3', 'r1', 'r2'], u));
    assert.equal(owner([], 'x'), undefined);
    assert.equal(owner(['only'], 'x'), 'only');
  });

  it('splits 10,000 UIDs evenly across 3 members (each within 5 % of a third)', () => {
    const counts = new Map<string, number>();
    for (const o of owners(['r1', 'r2', 'r3']).values()) counts.set(o ?? '', (counts.get(o ?? '') ?? 0) + 1);
    assert.equal(counts.size, 3);
    for (const [m, n] of counts) assert.ok(Math.abs(n - uids.length / 3) < (uids.length / 3) * 0.05, `${m}: ${n}`);
  });

  it('adding a 4th member moves about a quarter, all of it to the new member', () => {
    const before = owners(['r1', 'r2', 'r3']);
    const after = owners(['r1', 'r2', 'r3', 'r4']);
    const m = moved(before, after);
    assert.ok(Math.abs(m.length / uids.length - 0.25) < 0.02, `moved ${m.length}`);
    for (const u of m) assert.equal(after.get(u), 'r4');
  });

  it('removing one of 4 moves only that member\'s pods', () => {
    const before = owners(['r1', 'r2', 'r3', 'r4']);
    const after = owners(['r1', 'r3', 'r4']);
    const m = moved(before, after);
    assert.deepEqual(m, uids.filter((u) => before.get(u) === 'r2'));
    assert.ok(Math.abs(m.length / uids.length - 0.25) < 0.02, `moved ${m.length}`);
  });

  it('ranked: the owner first, then who would own the pod without it (the replica a second opinion asks)', () => {
    const members = ['r1', 'r2', 'r3', 'r4'];
    for (const u of uids.slice(0, 500)) {
      const order = ranked(members, u);
      assert.deepEqual([...order].sort(), members);
      assert.equal(order[0], owner(members, u));
      assert.equal(order[1], owner(members.filter((m) => m !== order[0]), u));
      assert.deepEqual(ranked(members.filter((m) => m !== 'r3'), u), order.filter((m) => m !== 'r3'), 'dropping a member keeps the others\' order');
    }
  });
});
