import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { aggregateCounts, decodeCounts, encodeCounts, isLive, liveMembers, microTime, nextExpiry, parseTime, projectLease } from '../../../src/sharding/index.ts';
import type { ShardLease } from '../../../src/sharding/index.ts';

const t0 = Date.parse('2026-11-23T01:02:03.123Z');
const lease = (holder: string, renewedAt: number, durationMs = 15_000, counts?: string): ShardLease => ({ name: `outprobe-shard-${holder}`, holder, renewedAt, durationMs, counts });

describe('shard leases', () => {
  it('formats MicroTime with exactly six fractional digits, and parses it back', () => {
    assert.equal(microTime(t0), '2026-11-23T01:02:03.123000Z');
    assert.match(microTime(0), /^1970-01-01T00:00:00\.\d{6}Z$/);
    assert.equal(parseTime('2026-11-23T01:02:03.123456Z'), t0);
    assert.equal(parseTime('2026-11-23T01:02:03Z'), t0 - 123);
    assert.ok(Number.isNaN(parseTime(undefined)));
  });

  it('projects a Lease object', () => {
    const l = projectLease({
      metadata: { name: 'outprobe-shard-r1', annotations: { 'outprobe.io/counts': '{}', 'outprobe.io/peer': '{"a":"10.0.0.5:8080"}' } },
      spec: { holderIdentity: 'r1', leaseDurationSeconds: 4, renewTime: '2026-11-23T01:02:03.123456Z' },
    });
    assert.deepEqual(l, { name: 'outprobe-shard-r1', uid: '', holder: 'r1', renewedAt: t0, durationMs: 4000, counts: '{}', peer: '{"a":"10.0.0.5:8080"}', member: undefined });
  });

  it('a member is live until renewTime + duration; released (no holder) never', () => {
    assert.ok(isLive(lease('r1', t0), t0 + 14_999));
    assert.ok(!isLive(lease('r1', t0), t0 + 15_000));
    assert.ok(!isLive(lease('', t0), t0));
    assert.ok(!isLive(lease('r1', Number.NaN), t0));
    const leases = [lease('r2', t0), lease('r1', t0 - 10_000), lease('r3', t0 - 20_000)];
    assert.deepEqual(liveMembers(leases, t0), ['r1', 'r2']);
    assert.equal(nextExpiry(leases, t0), t0 + 5000);
    assert.deepEqual(liveMembers(leases, t0 + 5000), ['r2']);
    assert.equal(nextExpiry([], t0), Number.POSITIVE_INFINITY);
  });

  it('aggregates counts: own fresh numbers plus what the other live members published', () => {
    const enc = (f: number, e: number, r: number): string => encodeCounts(new Map([['ns/web', { failing: f, erroring: e, remediations: r }]]));
    assert.equal(enc(1, 2, 3), '{"ns/web":[1,2,3]}');
    assert.deepEqual(decodeCounts('not json', 'ns/web'), { failing: 0, erroring: 0, remediations: 0 });
    const leases = [lease('r1', t0, 15_000, enc(9, 9, 9)), lease('r2', t0, 15_000, enc(1, 0, 2)), lease('r3', t0 - 20_000, 15_000, enc(5, 5, 5)), lease('r4', t0)];
    const local = { failing: 2, erroring: 1, remediations: 0 };
    assert.deepEqual(aggregateCounts({ self: 'r1', leases, now: t0, policyKey: 'ns/web', local }), { failing: 3, erroring: 1, remediations: 2 });
  });
});

describe('panic shares in the counts annotation (ADR 0015)', () => {
  const at = (holder: string, counts: string): ShardLease => lease(holder, t0, 15_000, counts);

  it('round-trips a replica\'s panic share and reads the older three-number form without one', () => {
    const share = { gated: 10, failing: 7, held: 5, maxUnready: 5, panic: true };
    const text = encodeCounts(new Map([['ns/web', { failing: 7, erroring: 0, remediations: 1, panic: share }]]));
    assert.equal(text, '{"ns/web":[7,0,1,10,7,5,5,1]}');
    assert.deepEqual(decodeCounts(text, 'ns/web'), { failing: 7, erroring: 0, remediations: 1, panic: share });
    assert.deepEqual(decodeCounts('{"ns/web":[7,0,1]}', 'ns/web'), { failing: 7, erroring: 0, remediations: 1 });
    assert.deepEqual(decodeCounts('{"ns/web":[7,0,1,-4,"x",2.7,1e400,1]}', 'ns/web').panic, { gated: 0, failing: 0, held: 2, maxUnready: 0, panic: true });
  });

  it('sums the live replicas\' shares; the policy is in panic where any replica fails open', () => {
    const calm = { gated: 10, failing: 2, held: 2, maxUnready: 5, panic: false };
    const peer = encodeCounts(new Map([['ns/web', { failing: 8, erroring: 0, remediations: 0, panic: { gated: 10, failing: 8, held: 5, maxUnready: 5, panic: true } }]]));
    const old = encodeCounts(new Map([['ns/web', { failing: 1, erroring: 0, remediations: 0 }]]));
    const agg = aggregateCounts({ self: 'r1', leases: [at('r2', peer), at('r3', old)], now: t0, policyKey: 'ns/web', local: { failing: 2, erroring: 0, remediations: 0, panic: calm } });
    assert.deepEqual(agg, { failing: 11, erroring: 0, remediations: 0, panic: { gated: 20, failing: 10, held: 7, maxUnready: 10, panic: true } });
    // No replica applies the threshold (no gates): no share at all.
    assert.equal(aggregateCounts({ self: 'r1', leases: [at('r3', old)], now: t0, policyKey: 'ns/web', local: { failing: 0, erroring: 0, remediations: 0 } }).panic, undefined);
  });
});

describe('diverged counts in the counts annotation (ADR 0023)', () => {
  const at = (holder: string, counts: string): ShardLease => lease(holder, t0, 15_000, counts);
  const share = { gated: 4, failing: 1, held: 1, maxUnready: 2, panic: false };

  it('writes the diverged count only when there is one, after the panic share when there is one', () => {
    assert.equal(encodeCounts(new Map([['ns/web', { failing: 1, erroring: 0, remediations: 2, diverged: 0 }]])), '{"ns/web":[1,0,2]}');
    assert.equal(encodeCounts(new Map([['ns/web', { failing: 1, erroring: 0, remediations: 2, diverged: 3 }]])), '{"ns/web":[1,0,2,3]}');
    assert.equal(encodeCounts(new Map([['ns/web', { failing: 1, erroring: 0, remediations: 2, diverged: 3, panic: share }]])), '{"ns/web":[1,0,2,4,1,1,2,0,3]}');
  });

  it('round-trips both forms, and reads an older replica\'s three- and eight-number forms as 0 diverged', () => {
    for (const c of [{ failing: 1, erroring: 0, remediations: 2, diverged: 3 }, { failing: 1, erroring: 0, remediations: 2, diverged: 3, panic: share }]) {
      assert.deepEqual(decodeCounts(encodeCounts(new Map([['ns/web', c]])), 'ns/web'), c);
    }
    assert.equal(decodeCounts('{"ns/web":[7,0,1]}', 'ns/web').diverged, undefined);
    assert.equal(decodeCounts('{"ns/web":[7,0,1,10,7,5,5,1]}', 'ns/web').diverged, undefined);
    assert.equal(decodeCounts('{"ns/web":[7,0,1,-2]}', 'ns/web').diverged, undefined, 'a negative count reads as 0');
  });

  it('sums the live replicas\' diverged counts, old Leases without the field counting 0, expired ones left out', () => {
    const peer = encodeCounts(new Map([['ns/web', { failing: 0, erroring: 0, remediations: 0, diverged: 2, panic: share }]]));
    const old = '{"ns/web":[1,0,0]}';
    const expired = lease('r4', t0 - 20_000, 15_000, encodeCounts(new Map([['ns/web', { failing: 0, erroring: 0, remediations: 0, diverged: 9 }]])));
    const agg = aggregateCounts({ self: 'r1', leases: [at('r2', peer), at('r3', old), expired], now: t0, policyKey: 'ns/web', local: { failing: 0, erroring: 0, remediations: 0, diverged: 1 } });
    assert.equal(agg.diverged, 3);
    assert.equal(aggregateCounts({ self: 'r1', leases: [at('r3', old)], now: t0, policyKey: 'ns/web', local: { failing: 0, erroring: 0, remediations: 0 } }).diverged, undefined);
  });
});
