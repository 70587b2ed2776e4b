import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import { maxTimerMs, setLongTimeout } from '../../../src/kernel/index.ts';

describe('setLongTimeout', () => {
  it('does not fire early when the delay is beyond setTimeout\'s range (plain setTimeout fires after 1 ms)', async () => {
    let fired = false;
    const cancel = setLongTimeout(() => (fired = true), maxTimerMs + 1);
    await new Promise((r) => setTimeout(r, 50));
    cancel();
    assert.equal(fired, false);
  });

  it('chains timers and fires exactly at the delay (mock timers)', () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    try {
      let fired = 0;
      setLongTimeout(() => fired++, 2 * maxTimerMs + 10);
      mock.timers.tick(maxTimerMs);
      mock.timers.tick(maxTimerMs);
      mock.timers.tick(9);
      assert.equal(fired, 0);
      mock.timers.tick(1);
      assert.equal(fired, 1);
    } finally {
      mock.timers.reset();
    }
  });

  it('fires short delays like setTimeout, and a cancel stops it at any stage of the chain', () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    try {
      let short = 0;
      setLongTimeout(() => short++, 20);
      mock.timers.tick(20);
      assert.equal(short, 1);
      let long = 0;
      const cancel = setLongTimeout(() => long++, maxTimerMs + 5);
      mock.timers.tick(maxTimerMs);
      cancel();
      mock.timers.tick(10);
      assert.equal(long, 0);
    } finally {
      mock.timers.reset();
    }
  });
});
