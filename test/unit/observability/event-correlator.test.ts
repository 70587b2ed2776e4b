import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EventCorrelator, correlationKey, decideEvent, defaultCorrelatorConfig, refill } from '../../../src/observability/index.ts';
import type { CorrelatorConfig } from '../../../src/observability/index.ts';

const config: CorrelatorConfig = defaultCorrelatorConfig;
const t0 = 1_700_000_000_000;

describe('decideEvent', () => {
  it('creates the first event and spends a token', () => {
    const d = decideEvent(undefined, undefined, t0, config);
    assert.deepEqual(d, { action: 'create', bucket: { tokens: 24, atMs: t0 } });
  });

  it('bumps an identical event within the window', () => {
    const seen = { name: 'web-1.0123456789abcdef', count: 3, firstMs: t0, lastMs: t0 + 1000 };
    const d = decideEvent(seen, { tokens: 10, atMs: t0 + 1000 }, t0 + 1000 + 600_000, config);
    assert.deepEqual(d, { action: 'bump', seen: { name: seen.name, count: 4, firstMs: t0, lastMs: t0 + 601_000 }, bucket: { tokens: 24, atMs: t0 + 601_000 } }); // 600 s refilled the bucket
  });

  it('creates a new event once the window since the last one has passed', () => {
    const seen = { name: 'web-1.0123456789abcdef', count: 3, firstMs: t0, lastMs: t0 };
    assert.equal(decideEvent(seen, undefined, t0 + 600_001, config).action, 'create');
  });

  it('drops when the object’s bucket is empty, and does not spend', () => {
    const d = decideEvent(undefined, { tokens: 0.5, atMs: t0 }, t0 + 1000, config);
    assert.deepEqual(d, { action: 'drop', bucket: { tokens: 0.7, atMs: t0 + 1000 } });
  });
});

describe('refill', () => {
  it('adds one token per refill interval up to the burst', () => {
    assert.deepEqual(refill({ tokens: 0, atMs: t0 }, t0 + 12_500, config), { tokens: 2.5, atMs: t0 + 12_500 });
    assert.equal(refill({ tokens: 20, atMs: t0 }, t0 + 3_600_000, config).tokens, 25);
  });

  it('adds nothing when time runs backwards', () => {
    assert.deepEqual(refill({ tokens: 3, atMs: t0 }, t0 - 10_000, config), { tokens: 3, atMs: t0 });
  });
});

describe('EventCorrelator', () => {
  const key = (uid: string, message = 'Readiness probe failed'): string => correlationKey({ uid, type: 'Warning', reason: 'Unhealthy', message });
  const names = (): (() => string) => {
    let n = 0;
    return () => `pod.${String(n++).padStart(16, '0')}`;
  };

  it('aggregates identical events into one name with a growing count', () => {
    const c = new EventCorrelator();
    const newName = names();
    const first = c.correlate('u1', key('u1'), t0, newName);
    const second = c.correlate('u1', key('u1'), t0 + 10_000, newName);
    assert.deepEqual(first, { action: 'create', seen: { name: 'pod.0000000000000000', count: 1, firstMs: t0, lastMs: t0 } });
    assert.deepEqual(second, { action: 'bump', seen: { name: 'pod.0000000000000000', count: 2, firstMs: t0, lastMs: t0 + 10_000 } });
  });

  it('keeps different messages, types and objects apart', () => {
    const c = new EventCorrelator();
    const newName = names();
    assert.equal(c.correlate('u1', key('u1'), t0, newName).action, 'create');
    assert.equal(c.correlate('u1', key('u1', 'other'), t0, newName).action, 'create');
    assert.equal(c.correlate('u2', key('u2'), t0, newName).action, 'create');
    assert.equal(c.correlate('u1', correlationKey({ uid: 'u1', type: 'Normal', reason: 'Unhealthy', message: 'Readiness probe failed' }), t0, newName).action, 'create');
  });

  it('allows a burst of 25 per object, then one per 5 s; other objects are unaffected', () => {
    const c = new EventCorrelator();
    const newName = names();
    const actions = Array.from({ length: 30 }, (_, i) => c.correlate('u1', key('u1', `m${i}`), t0, newName).action);
    assert.equal(actions.filter((a) => a === 'create').length, 25);
    assert.deepEqual(actions.slice(25), ['drop', 'drop', 'drop', 'drop', 'drop']);
    assert.equal(c.correlate('u2', key('u2'), t0, newName).action, 'create');
    assert.equal(c.correlate('u1', key('u1', 'late'), t0 + 4_999, newName).action, 'drop');
    assert.equal(c.correlate('u1', key('u1', 'late'), t0 + 5_000, newName).action, 'create');
    assert.equal(c.correlate('u1', key('u1', 'late'), t0 + 5_001, newName).action, 'drop');
  });

  it('a dropped event does not advance the count; the next allowed one bumps', () => {
    const c = new EventCorrelator({ burst: 1, refillMs: 10_000 });
    const newName = names();
    assert.equal(c.correlate('u1', key('u1'), t0, newName).action, 'create');
    assert.equal(c.correlate('u1', key('u1'), t0 + 1_000, newName).action, 'drop');
    assert.deepEqual(c.correlate('u1', key('u1'), t0 + 10_000, newName), { action: 'bump', seen: { name: 'pod.0000000000000000', count: 2, firstMs: t0, lastMs: t0 + 10_000 } });
  });

  it('forget makes the next identical event create anew (its create failed)', () => {
    const c = new EventCorrelator();
    const newName = names();
    c.correlate('u1', key('u1'), t0, newName);
    c.forget(key('u1'), 'not-this-one');
    assert.equal(c.correlate('u1', key('u1'), t0 + 1, newName).action, 'bump');
    c.forget(key('u1'), 'pod.0000000000000000');
    assert.deepEqual(c.correlate('u1', key('u1'), t0 + 2, newName), { action: 'create', seen: { name: 'pod.0000000000000001', count: 1, firstMs: t0 + 2, lastMs: t0 + 2 } });
  });

  it('stays bounded: oldest keys out first, stale ones pruned as time passes', () => {
    const c = new EventCorrelator({ maxKeys: 10 });
    const newName = names();
    for (let i = 0; i < 50; i++) c.correlate(`u${i}`, key(`u${i}`), t0, newName);
    assert.deepEqual(c.size, { events: 10, objects: 10 });
    const later = new EventCorrelator({ maxKeys: 10_000 });
    for (let i = 0; i < 255; i++) later.correlate(`u${i}`, key(`u${i}`), t0, newName);
    later.correlate('fresh', key('fresh'), t0 + 3_600_000, newName);
    assert.deepEqual(later.size, { events: 1, objects: 1 });
  });
});
