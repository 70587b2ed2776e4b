import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { probeKinds } from '../../../src/kernel/index.ts';
import { failure, success } from '../../../src/probing/outcome.ts';
import { decide, record } from '../../../src/results/index.ts';
import type { TargetState } from '../../../src/results/index.ts';
import { T0, pod, recordAll, running, seen, target, view } from './support.ts';

const F = failure('connection refused');
const S = success('');

void describe('decide: initial value per kind (§2)', () => {
  const expected = { readiness: 'failure', liveness: 'success', startup: 'unknown' } as const;
  for (const kind of probeKinds) {
    void it(`${kind}: writes ${expected[kind]} for the first instance and emits it`, () => {
      const decision = decide(target(kind), view(), T0);
      assert.equal(decision.state.committed, expected[kind]);
      assert.deepEqual(decision.emitted, {
        key: decision.state.key,
        kind,
        from: null,
        to: expected[kind],
        cause: 'initial',
        output: '',
        at: T0,
        instance: { containerId: 'containerd://a', restartCount: 0 },
      });
    });
  }

  void it('readiness: a new instance emits success → failure', () => {
    const ready = record(seen('readiness'), S, T0).state;
    const decision = decide(ready, view(running({ containerId: 'containerd://b' })), T0);
    assert.equal(decision.emitted?.from, 'success');
    assert.equal(decision.emitted.to, 'failure');
    assert.equal(decision.emitted.cause, 'initial');
  });

  void it('readiness: a new instance after Failure emits nothing', () => {
    const decision = decide(seen('readiness'), view(running({ containerId: 'containerd://b' })), T0);
    assert.equal(decision.state.committed, 'failure');
    assert.equal(decision.emitted, null);
  });

  void it('liveness: a new instance after a held Failure emits failure → success', () => {
    const held = record(seen('liveness', { config: { failureThreshold: 1 } }), F, T0).state;
    const decision = decide(held, view(running({ restartCount: 1 })), T0);
    assert.equal(decision.emitted?.from, 'failure');
    assert.equal(decision.emitted.to, 'success');
  });

  void it('the same instance seen again writes nothing', () => {
    const state = seen('readiness');
    const decision = decide(state, view(), T0 + 10_000);
    assert.equal(decision.emitted, null);
    assert.equal(decision.state.instance, state.instance);
  });
});

void describe('decide: on-hold (§3.3)', () => {
  const held = (): TargetState => record(seen('liveness', { config: { failureThreshold: 1 } }), F, T0).state;

  void it('a held liveness target is not probed, pass after pass', () => {
    let state = held();
    for (let i = 1; i <= 50; i++) {
      const decision = decide(state, view(), T0 + i * 10_000);
      assert.equal(decision.action, 'skip');
      assert.equal(decision.reason, 'on-hold');
      assert.equal(decision.emitted, null);
      state = decision.state;
    }
    assert.equal(state.committed, 'failure');
  });

  void it('a new container ID clears the hold', () => {
    const decision = decide(held(), view(running({ containerId: 'containerd://b' })), T0);
    assert.equal(decision.state.onHold, false);
    assert.equal(decision.action, 'probe');
  });

  void it('a higher restartCount under the same ID clears the hold', () => {
    const decision = decide(held(), view(running({ restartCount: 1 })), T0);
    assert.equal(decision.state.onHold, false);
    assert.equal(decision.action, 'probe');
  });

  void it('a lower restartCount under the same ID is a stale read and keeps the hold', () => {
    const state = decide(held(), view(running({ restartCount: 2 })), T0).state;
    const relisted = record(state, F, T0).state;
    const decision = decide(relisted, view(running({ restartCount: 1 })), T0);
    assert.equal(decision.reason, 'on-hold');
  });

  void it('the hold wins over not-running and deletion (steps 5 before 6 and 7)', () => {
    assert.equal(decide(held(), view(running({ state: 'terminated' })), T0).reason, 'on-hold');
    assert.equal(decide(held(), view(running(), { pod: pod({ deletionTimestamp: T0 }) }), T0).reason, 'on-hold');
  });
});

void describe('decide: counters reset on instance change (§3.5 improvement)', () => {
  void it('readiness successThreshold 3 with an old success streak needs 3 new successes', () => {
    const old = recordAll(seen('readiness', { config: { successThreshold: 3 } }), [S, S, S, S, S]).at(-1)!;
    assert.equal(old.resultRun, 5);
    const fresh = decide(old, view(running({ containerId: 'containerd://b' })), T0).state;
    assert.equal(fresh.committed, 'failure');
    assert.equal(fresh.lastResult, null);
    assert.equal(fresh.resultRun, 0);
    // The legacy worker would commit Success on the first of these.
    assert.deepEqual(recordAll(fresh, [S, S, S]).map((s) => s.committed), ['failure', 'failure', 'success']);
  });

  void it('a liveness failure run does not carry into the next instance', () => {
    const old = recordAll(seen('liveness', { config: { failureThreshold: 3 } }), [F, F]).at(-1)!;
    const fresh = decide(old, view(running({ restartCount: 1 })), T0).state;
    assert.deepEqual(recordAll(fresh, [F, F, F]).map((s) => s.committed), ['success', 'success', 'failure']);
  });
});

void describe('decide: container not running (step 6)', () => {
  for (const kind of probeKinds) {
    void it(`${kind}: waiting writes Failure and keeps the target`, () => {
      const state = kind === 'readiness' ? record(seen(kind), S, T0).state : seen(kind);
      const decision = decide(state, view(running({ state: 'waiting', startedAt: undefined })), T0);
      assert.equal(decision.action, 'skip');
      assert.equal(decision.reason, 'not-running');
      assert.equal(decision.state.committed, 'failure');
      assert.equal(decision.emitted?.to, 'failure');
      assert.equal(decision.emitted.cause, 'not-running');
      assert.equal(decision.state.stopped, false);
    });

    void it(`${kind}: terminated for good writes Failure and stops`, () => {
      const decision = decide(seen(kind), view(running({ state: 'terminated', restartable: false })), T0);
      assert.equal(decision.action, 'stop');
      assert.equal(decision.reason, 'container-terminated');
      assert.equal(decision.state.committed, 'failure');
      assert.equal(decide(decision.state, view(), T0).reason, 'stopped');
    });
  }

  void it('terminated but restartable (the default) keeps the target', () => {
    const decision = decide(seen('liveness'), view(running({ state: 'terminated' })), T0);
    assert.equal(decision.action, 'skip');
    assert.equal(decision.reason, 'not-running');
  });

  void it('a first sight of a waiting container emits one coalesced transition', () => {
    const decision = decide(target('liveness'), view(running({ state: 'waiting' })), T0);
    assert.equal(decision.emitted?.from, null);
    assert.equal(decision.emitted.to, 'failure');
    assert.equal(decision.emitted.cause, 'not-running');
  });

  void it('a held liveness Failure replaced by a waiting instance emits nothing (failure → failure)', () => {
    const held = record(seen('liveness', { config: { failureThreshold: 1 } }), F, T0).state;
    const decision = decide(held, view(running({ restartCount: 1, state: 'waiting' })), T0);
    assert.equal(decision.emitted, null);
    assert.equal(decision.state.onHold, false);
  });
});

void describe('decide: pod phase and identity (steps 1–3)', () => {
  for (const phase of ['Failed', 'Succeeded'] as const) {
    void it(`phase ${phase} stops the target for good, writing nothing`, () => {
      const decision = decide(seen('readiness'), view(running(), { pod: pod({ phase }) }), T0);
      assert.equal(decision.action, 'stop');
      assert.equal(decision.reason, 'pod-finished');
      assert.equal(decision.emitted, null);
      assert.equal(decision.state.stopped, true);
      const later = decide(decision.state, view(), T0 + 10_000);
      assert.equal(later.action, 'stop');
      assert.equal(later.reason, 'stopped');
    });
  }

  void it('phase Unknown and Pending do not stop', () => {
    assert.equal(decide(seen('readiness'), view(running(), { pod: pod({ phase: 'Unknown' }) }), T0).action, 'probe');
    assert.equal(decide(seen('readiness'), view(running(), { pod: pod({ phase: 'Pending' }) }), T0).action, 'probe');
  });

  void it('no pod status: skip, keep the target', () => {
    const state = target('readiness');
    const decision = decide(state, view(running(), { pod: undefined }), T0);
    assert.deepEqual([decision.action, decision.reason, decision.state.stopped], ['skip', 'no-pod-status', false]);
  });

  void it('a view of another pod UID stops the target', () => {
    const decision = decide(seen('readiness'), view(running(), { pod: pod({ uid: 'uid-2' }) }), T0);
    assert.deepEqual([decision.action, decision.reason, decision.emitted], ['stop', 'pod-uid-changed', null]);
  });

  for (const [label, container] of [
    ['no status', undefined],
    ['no container ID', running({ containerId: undefined })],
    ['an empty container ID', running({ containerId: '' })],
  ] as const) {
    void it(`${label}: do nothing, no initial value, keep the target`, () => {
      const decision = decide(target('liveness'), view(running(), { container }), T0);
      assert.deepEqual([decision.action, decision.reason, decision.emitted], ['skip', 'no-container', null]);
      assert.equal(decision.state.committed, null);
      assert.equal(decision.state.instance, null);
    });
  }
});

void describe('decide: pod deletion (step 7)', () => {
  const deleting = view(running(), { pod: pod({ deletionTimestamp: T0 - 1_000 }) });

  void it('liveness writes Success and stops quietly, never probing', () => {
    const decision = decide(recordAll(seen('liveness'), [F]).at(-1)!, deleting, T0);
    assert.deepEqual([decision.action, decision.reason, decision.emitted], ['stop', 'pod-deleting', null]);
    assert.equal(decision.state.committed, 'success');
  });

  void it('startup writes Success (emitted with cause pod-deleting) and stops', () => {
    const decision = decide(seen('startup'), deleting, T0);
    assert.equal(decision.action, 'stop');
    assert.equal(decision.state.committed, 'success');
    assert.equal(decision.emitted?.from, 'unknown');
    assert.equal(decision.emitted.cause, 'pod-deleting');
  });

  void it('readiness keeps probing through termination', () => {
    let state = record(seen('readiness'), S, T0).state;
    for (let i = 1; i <= 3; i++) {
      const decision = decide(state, deleting, T0 + i * 10_000);
      assert.equal(decision.action, 'probe');
      state = record(decision.state, F, T0 + i * 10_000).state;
    }
    assert.equal(state.committed, 'failure');
  });
});

void describe('decide: initial delay (step 8)', () => {
  const started = T0;
  const delayed = (): TargetState => target('liveness', { config: { initialDelaySeconds: 5 } });
  const at = (now: number): string => decide(delayed(), view(running({ startedAt: started })), now).reason;

  void it('skips below the delay in whole seconds, truncated', () => {
    assert.equal(at(started), 'initial-delay');
    assert.equal(at(started + 4_999), 'initial-delay');
  });

  void it('probes at exactly the delay and after', () => {
    assert.equal(at(started + 5_000), 'due');
    assert.equal(at(started + 5_001), 'due');
  });

  void it('a start time in the future (clock skew) keeps the delay', () => {
    assert.equal(at(started - 2_000), 'initial-delay');
  });

  void it('initialDelaySeconds 0 probes at once, even with a small negative skew', () => {
    const decision = decide(target('liveness'), view(running({ startedAt: T0 + 500 })), T0);
    assert.equal(decision.action, 'probe');
  });

  void it('a missing startedAt counts as elapsed, as the kubelet does with a zero time', () => {
    const decision = decide(delayed(), view(running({ startedAt: undefined })), T0);
    assert.equal(decision.action, 'probe');
  });

  void it('the delay restarts with each instance', () => {
    const state = decide(delayed(), view(running({ startedAt: started })), started + 60_000).state;
    const restarted = running({ restartCount: 1, startedAt: started + 60_000 });
    assert.equal(decide(state, view(restarted), started + 61_000).reason, 'initial-delay');
    assert.equal(decide(state, view(restarted), started + 65_000).reason, 'due');
  });
});
