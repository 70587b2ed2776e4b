import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatGoDuration } from '../../../src/probing/grpc/index.ts';

describe('formatGoDuration (Go time.Duration String)', () => {
  const cases: readonly (readonly [number, string])[] = [
    [0, '0s'],
    [1, '1ms'],
    [10, '10ms'],
    [300, '300ms'],
    [500, '500ms'],
    [999, '999ms'],
    [1000, '1s'],
    [1001, '1.001s'],
    [1500, '1.5s'],
    [10_000, '10s'],
    [59_999, '59.999s'],
    [60_000, '1m0s'],
    [61_500, '1m1.5s'],
    [120_000, '2m0s'],
    [3_600_000, '1h0m0s'],
    [3_661_500, '1h1m1.5s'],
    [90_061_001, '25h1m1.001s'],
    [1.5, '1.5ms'],
    [0.001, '1µs'],
    [0.0015, '1.5µs'],
    [0.000_001, '1ns'],
    [-1500, '-1.5s'],
    [-300, '-300ms'],
  ];
  for (const [ms, text] of cases) {
    it(`${ms} ms → ${text}`, () => {
      assert.equal(formatGoDuration(ms), text);
    });
  }
});
