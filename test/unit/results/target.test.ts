import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { failure } from '../../../src/probing/outcome.ts';
import { createTarget, defaultTargetConfig, reconfigure, record, targetKeyString } from '../../../src/results/index.ts';
import { T0, key, recordAll, seen } from './support.ts';

void describe('createTarget', () => {
  void it('applies the core/v1 defaults: successThreshold 1, failureThreshold 3, initialDelaySeconds 0', () => {
    const state = createTarget(key('readiness'));
    assert.deepEqual(state.config, { successThreshold: 1, failureThreshold: 3, initialDelaySeconds: 0 });
    assert.deepEqual(defaultTargetConfig, state.config);
  });

  void it('starts with nothing committed, no instance, no hold', () => {
    const state = createTarget(key('liveness'));
    assert.deepEqual(
      [state.committed, state.instance, state.lastResult, state.resultRun, state.onHold, state.stopped, state.seed, state.lastError],
      [null, null, null, 0, false, false, null, null],
    );
  });

  void it('rejects configs core/v1 validation would reject', () => {
    assert.throws(() => createTarget(key('liveness'), { config: { successThreshold: 2 } }), RangeError);
    assert.throws(() => createTarget(key('startup'), { config: { successThreshold: 3 } }), RangeError);
    assert.throws(() => createTarget(key('readiness'), { config: { successThreshold: 0 } }), RangeError);
    assert.throws(() => createTarget(key('readiness'), { config: { failureThreshold: 0 } }), RangeError);
    assert.throws(() => createTarget(key('readiness'), { config: { failureThreshold: 1.5 } }), RangeError);
    assert.throws(() => createTarget(key('readiness'), { config: { initialDelaySeconds: -1 } }), RangeError);
    assert.doesNotThrow(() => createTarget(key('readiness'), { config: { successThreshold: 3 } }));
  });
});

void describe('reconfigure', () => {
  void it('restarts the counters and keeps committed value, instance and hold (§3.10)', () => {
    const counting = recordAll(seen('liveness'), [failure('x'), failure('x')]).at(-1)!;
    const next = reconfigure(counting, { failureThreshold: 5 });
    assert.equal(next.config.failureThreshold, 5);
    assert.deepEqual([next.lastResult, next.resultRun], [null, 0]);
    assert.deepEqual([next.committed, next.instance, next.onHold], [counting.committed, counting.instance, counting.onHold]);
    const held = record(seen('liveness', { config: { failureThreshold: 1 } }), failure('x'), T0).state;
    assert.equal(reconfigure(held, {}).onHold, true);
  });

  void it('validates like createTarget', () => {
    assert.throws(() => reconfigure(seen('liveness'), { successThreshold: 2 }), RangeError);
  });
});

void describe('targetKeyString', () => {
  void it('joins policy, pod UID, container and kind', () => {
    assert.equal(targetKeyString(key('startup')), 'ns/policy/uid-1/app/startup');
  });
});
