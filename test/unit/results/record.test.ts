import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { errored, failure, success, voided, warning } from '../../../src/probing/outcome.ts';
import { decide, record } from '../../../src/results/index.ts';
import type { TargetState } from '../../../src/results/index.ts';
import { T0, pass, recordAll, running, seen, target, view } from './support.ts';

const failedOutput = 'HTTP probe failed with statuscode: 503';
const F = failure(failedOutput);
const S = success('');
const portError = 'unresolvable port "http"';
const E = errored(portError);

void describe('record: failureThreshold', () => {
  void it('failureThreshold 1 commits on the first failure', () => {
    const state = seen('readiness', { config: { failureThreshold: 1 } });
    const ok = record(state, S, T0).state;
    const result = record(ok, F, T0 + 10_000);
    assert.equal(result.reason, 'committed');
    assert.equal(result.state.committed, 'failure');
    assert.deepEqual(
      { from: result.emitted?.from, to: result.emitted?.to, cause: result.emitted?.cause, output: result.emitted?.output, at: result.emitted?.at },
      { from: 'success', to: 'failure', cause: 'probe', output: failedOutput, at: T0 + 10_000 },
    );
  });

  void it('failureThreshold 3 commits on the third consecutive failure, not before', () => {
    const state = seen('liveness', { config: { failureThreshold: 3 } });
    const [first, second] = recordAll(state, [F, F]);
    assert.equal(first?.committed, 'success');
    assert.equal(second?.committed, 'success');
    assert.equal(second.resultRun, 2);
    const third = record(second, F, T0);
    assert.equal(third.reason, 'committed');
    assert.equal(third.state.committed, 'failure');
    assert.equal(third.emitted?.to, 'failure');
  });

  void it('a success in between restarts the failure run', () => {
    const state = seen('liveness', { config: { failureThreshold: 3 } });
    const states = recordAll(state, [F, F, S, F, F]);
    assert.ok(states.every((s) => s.committed === 'success'));
    assert.equal(record(states.at(-1)!, F, T0).state.committed, 'failure');
  });
});

void describe('record: successThreshold (readiness)', () => {
  void it('successThreshold 1 commits on the first success', () => {
    const result = record(seen('readiness'), S, T0);
    assert.equal(result.reason, 'committed');
    assert.equal(result.emitted?.from, 'failure');
    assert.equal(result.emitted.to, 'success');
  });

  void it('successThreshold 3 commits on the third consecutive success', () => {
    const states = recordAll(seen('readiness', { config: { successThreshold: 3 } }), [S, S, S]);
    assert.deepEqual(states.map((s) => s.committed), ['failure', 'failure', 'success']);
  });

  void it('successThreshold 3: a failure resets the success run', () => {
    const states = recordAll(seen('readiness', { config: { successThreshold: 3 } }), [S, S, F, S, S, S]);
    assert.deepEqual(states.map((s) => s.committed), ['failure', 'failure', 'failure', 'failure', 'failure', 'success']);
  });
});

void describe('record: errored outcomes are void', () => {
  void it('never counts an errored attempt, and keeps counters and value exactly', () => {
    const state = record(seen('liveness'), F, T0).state;
    const after = record(state, E, T0 + 1);
    assert.equal(after.reason, 'errored');
    assert.equal(after.emitted, null);
    assert.deepEqual({ ...after.state, lastError: null }, state);
    assert.deepEqual(after.state.lastError, { error: portError, at: T0 + 1, consecutive: 1 });
  });

  void it('F, E, F, F with failureThreshold 3 fails on the 4th call, not earlier', () => {
    const states = recordAll(seen('liveness', { config: { failureThreshold: 3 } }), [F, E, F, F]);
    assert.deepEqual(states.map((s) => s.committed), ['success', 'success', 'success', 'failure']);
    assert.deepEqual(states.map((s) => s.resultRun), [1, 1, 2, 0]);
  });

  void it('endless errors never fail liveness nor make readiness ready', () => {
    const errors = Array.from({ length: 100 }, () => E);
    assert.equal(recordAll(seen('liveness', { config: { failureThreshold: 1 } }), errors).at(-1)?.committed, 'success');
    const readiness = recordAll(seen('readiness'), errors).at(-1)!;
    assert.equal(readiness.committed, 'failure');
    assert.equal(readiness.lastError?.consecutive, 100);
  });

  void it('a counted outcome clears the error streak', () => {
    const [, , cleared] = recordAll(seen('readiness'), [E, E, F]);
    assert.equal(cleared?.lastError, null);
  });
});

void describe('record: warning', () => {
  void it('counts as success toward successThreshold', () => {
    const states = recordAll(seen('readiness', { config: { successThreshold: 2 } }), [warning('Probe terminated redirects'), S]);
    assert.deepEqual(states.map((s) => s.committed), ['failure', 'success']);
  });

  void it('breaks a failure run like a success', () => {
    const states = recordAll(seen('liveness', { config: { failureThreshold: 2 } }), [F, warning('redirect'), F]);
    assert.ok(states.every((s) => s.committed === 'success'));
  });
});

void describe('record: change-only emission', () => {
  void it('emits nothing over 100 steady passes, healthy or failing', () => {
    for (const outcome of [S, F]) {
      // Reach the steady state first: committed equals what every probe says.
      let state: TargetState = recordAll(seen('readiness'), [outcome, outcome, outcome]).at(-1)!;
      assert.equal(state.committed, outcome === S ? 'success' : 'failure');
      let emissions = 0;
      for (let i = 0; i < 100; i++) {
        const result = pass(state, outcome, T0 + i * 10_000);
        assert.equal(result.decision.action, 'probe');
        state = result.state;
        emissions += result.emitted.length;
      }
      assert.equal(emissions, 0);
    }
  });

  void it('liveness at its initial Success emits nothing on successes', () => {
    let state = seen('liveness');
    for (let i = 0; i < 100; i++) {
      const result = pass(state, S, T0 + i * 10_000);
      assert.deepEqual(result.emitted, []);
      state = result.state;
    }
  });

  void it('re-committing the same value is reported as committed but emits nothing', () => {
    const state = record(seen('readiness'), S, T0).state;
    const again = record(state, S, T0);
    assert.equal(again.reason, 'committed');
    assert.equal(again.emitted, null);
  });
});

void describe('record: hold (step 13)', () => {
  void it('liveness Failure past threshold holds and zeroes the run', () => {
    const held = recordAll(seen('liveness', { config: { failureThreshold: 2 } }), [F, F]).at(-1)!;
    assert.equal(held.onHold, true);
    assert.equal(held.resultRun, 0);
    assert.equal(held.lastResult, 'failure');
  });

  void it('liveness Success past threshold does not hold', () => {
    assert.equal(record(seen('liveness'), S, T0).state.onHold, false);
  });

  void it('startup holds after a committed success', () => {
    const result = record(seen('startup'), S, T0);
    assert.equal(result.emitted?.from, 'unknown');
    assert.equal(result.emitted.to, 'success');
    assert.equal(result.state.onHold, true);
    assert.equal(result.state.resultRun, 0);
  });

  void it('startup holds after a committed failure, not before', () => {
    const states = recordAll(seen('startup', { config: { failureThreshold: 2 } }), [F, F]);
    assert.deepEqual(states.map((s) => [s.committed, s.onHold]), [['unknown', false], ['failure', true]]);
  });

  void it('readiness is never held', () => {
    const states = recordAll(seen('readiness', { config: { failureThreshold: 1 } }), [S, F, F, F]);
    assert.ok(states.every((s) => !s.onHold));
    assert.equal(decide(states.at(-1)!, view(), T0).action, 'probe');
  });

  void it('ignores outcomes that arrive while held', () => {
    const held = record(seen('liveness', { config: { failureThreshold: 1 } }), F, T0).state;
    const late = record(held, S, T0 + 1);
    assert.equal(late.reason, 'on-hold');
    assert.equal(late.state, held);
  });
});

void describe('record: outcomes the target cannot use', () => {
  void it('ignores an outcome before any instance was seen', () => {
    const fresh = target('readiness');
    assert.deepEqual(record(fresh, S, T0), { state: fresh, reason: 'no-instance', emitted: null });
  });

  void it('ignores an outcome for an instance that has been replaced', () => {
    const state = seen('readiness');
    const old = state.instance!;
    const replaced = decide(state, view(running({ containerId: 'containerd://b' })), T0).state;
    const result = record(replaced, S, T0, old);
    assert.equal(result.reason, 'stale-instance');
    assert.equal(result.state.committed, 'failure');
    assert.equal(record(replaced, S, T0, replaced.instance!).reason, 'committed');
  });

  void it('ignores an outcome after the target stopped', () => {
    const stopped = decide(seen('readiness'), view(running(), { pod: { uid: 'uid-1', phase: 'Succeeded' } }), T0).state;
    assert.equal(record(stopped, S, T0).reason, 'stopped');
  });
});

void describe('record: a failure the stall guard voided (ADR 0016)', () => {
  const V = voided({ cause: 'loop-stall', stallMs: 3_000, boundMs: 500, failure: failedOutput });

  void it('changes nothing: no count, no commit, no transition, no lastError', () => {
    const state = seen('readiness', { config: { failureThreshold: 1 } });
    const ok = record(state, S, T0).state;
    const result = record(ok, V, T0 + 10_000);
    assert.deepEqual(result, { state: ok, reason: 'voided', emitted: null });
  });

  void it('never counts toward failureThreshold: F, void, void, F is a run of two', () => {
    const state = seen('liveness', { config: { failureThreshold: 3 } });
    const [, , , last] = recordAll(state, [F, V, V, F]);
    assert.equal(last?.lastResult, 'failure');
    assert.equal(last.resultRun, 2);
    assert.equal(last.committed, 'success');
    assert.equal(record(last, F, T0).emitted?.to, 'failure');
  });

  void it('never breaks a run of successes', () => {
    const state = seen('readiness', { config: { successThreshold: 3 } });
    const [, , third] = recordAll(state, [S, V, S]);
    assert.equal(third?.lastResult, 'success');
    assert.equal(third.resultRun, 2);
    assert.equal(record(third, S, T0).emitted?.to, 'success');
  });

  void it('keeps an earlier error streak as it was (an errored outcome without the mark still counts as an error)', () => {
    const state = seen('readiness');
    const errored1 = record(state, E, T0).state;
    assert.equal(record(errored1, V, T0 + 1).state.lastError?.consecutive, 1);
    assert.equal(record(errored1, E, T0 + 1).state.lastError?.consecutive, 2);
  });
});
