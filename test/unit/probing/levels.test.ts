import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Levels } from '../../../src/probing/scheduler/levels.ts';

describe('Levels', () => {
  it('answers "borrowed beyond share exceeds n" as a walk over every member would', () => {
    let seed = 7;
    const random = (n: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed % n;
    };
    const members = new Array<number>(20).fill(0);
    const levels = new Levels();
    for (let step = 0; step < 5_000; step++) {
      const i = random(members.length);
      const v = members[i] ?? 0;
      if (v > 0 && random(3) === 0) {
        levels.down(v);
        members[i] = v - 1;
      } else if (v < 40) {
        levels.up(v);
        members[i] = v + 1;
      }
      const share = 1 + random(20);
      const than = random(60);
      const borrowed = members.reduce((sum, m) => sum + Math.max(0, m - share), 0);
      assert.equal(levels.borrowedExceeds(share, than), borrowed > than, `step ${step}: ${members.join(',')} share ${share} than ${than}`);
    }
  });
});
