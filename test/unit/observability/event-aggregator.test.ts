import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EventAggregator, combinedPrefix } from '../../../src/observability/index.ts';

const t0 = 1_700_000_000_000;
const e = (message: string, uid = 'u-1'): { uid: string; type: string; reason: string; message: string } => ({ uid, type: 'Normal', reason: 'ReadinessGateChanged', message });

describe('EventAggregator', () => {
  it('leaves the first 9 distinct messages alone and combines from the 10th within 10 minutes (client-go defaults)', () => {
    const a = new EventAggregator();
    const out = Array.from({ length: 11 }, (_, i) => a.aggregate(e(`m${i}`), t0 + i * 1000));
    assert.deepEqual(out.slice(0, 9).map((o) => o.combined), Array(9).fill(false));
    assert.equal(out[9]?.message, `${combinedPrefix}m9`);
    assert.equal(out[10]?.message, `${combinedPrefix}m10`);
    assert.equal(out[9].key, out[10].key, 'combined events share one key, so the recorder bumps one Event');
    assert.notEqual(out[0]?.key, out[1]?.key);
  });

  it('repeating one message never combines (identical events are the correlator\'s bump)', () => {
    const a = new EventAggregator();
    for (let i = 0; i < 50; i++) assert.equal(a.aggregate(e('same'), t0 + i).combined, false);
  });

  it('a similar event more than the interval after the last starts afresh', () => {
    const a = new EventAggregator({ maxSimilar: 3, intervalMs: 1000 });
    a.aggregate(e('a'), t0);
    a.aggregate(e('b'), t0 + 500);
    assert.equal(a.aggregate(e('c'), t0 + 2000).combined, false);
    assert.equal(a.aggregate(e('d'), t0 + 2500).combined, false);
    assert.equal(a.aggregate(e('f'), t0 + 2600).combined, true);
  });

  it('objects, types and reasons are aggregated apart, and the records are bounded', () => {
    const a = new EventAggregator({ maxSimilar: 2, maxKeys: 3 });
    assert.equal(a.aggregate(e('a', 'u-1'), t0).combined, false);
    assert.equal(a.aggregate(e('b', 'u-2'), t0).combined, false);
    assert.equal(a.aggregate({ ...e('c', 'u-1'), reason: 'Unhealthy' }, t0).combined, false);
    assert.equal(a.aggregate(e('d', 'u-3'), t0).combined, false);
    assert.equal(a.size, 3);
    assert.equal(a.aggregate(e('x', 'u-1'), t0).combined, false, 'u-1\'s record was the oldest and was forgotten');
  });
});
