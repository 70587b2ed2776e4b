import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compareResourceVersions } from '../../../src/kube/index.ts';

describe('compareResourceVersions (KEP-5504)', () => {
  it('orders decimal versions by value, not as strings', () => {
    assert.ok(compareResourceVersions('9', '10')! < 0);
    assert.ok(compareResourceVersions('100', '99')! > 0);
    assert.ok(compareResourceVersions('12345', '12346')! < 0);
    assert.equal(compareResourceVersions('777', '777'), 0);
  });
  it('refuses what an API server that keeps versions opaque may send', () => {
    for (const [a, b] of [['rv1', '2'], ['1', ''], ['01', '2'], ['0', '1'], ['1.5', '2'], ['-1', '2'], ['1 ', '1']] as const) {
      assert.equal(compareResourceVersions(a, b), null, `${a} vs ${b}`);
      assert.equal(compareResourceVersions(b, a), null, `${b} vs ${a}`);
    }
  });
});
