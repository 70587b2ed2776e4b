import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { failure, success } from '../../../src/probing/outcome.ts';
import { decide, record } from '../../../src/results/index.ts';
import type { TargetState, Transition } from '../../../src/results/index.ts';
import { T0, pass, running, target, view } from './support.ts';

const S = success('');
const F = failure('HTTP probe failed with statuscode: 500');

/** A readiness target created after a controller restart, with the gate condition already True. */
function seededReady(startedBefore?: number): TargetState {
  return target('readiness', { config: { failureThreshold: 3 }, seed: { value: 'success', startedBefore } });
}

void describe('seed: restart rule (§3.9, design rule 5)', () => {
  void it('starts from the seed, not from nothing', () => {
    assert.equal(seededReady().committed, 'success');
  });

  void it('keeps True through the first instance: no initial-value emission', () => {
    const decision = decide(seededReady(), view(), T0);
    assert.equal(decision.state.committed, 'success');
    assert.equal(decision.emitted, null);
    assert.equal(decision.action, 'probe');
    assert.equal(decision.probeNow, false);
  });

  void it('stays True below failureThreshold and flips on the third failure', () => {
    let state = seededReady();
    const emitted: Transition[] = [];
    for (let i = 0; i < 3; i++) {
      const result = pass(state, F, T0 + i * 10_000);
      emitted.push(...result.emitted);
      state = result.state;
      assert.equal(state.committed, i < 2 ? 'success' : 'failure');
    }
    assert.equal(emitted.length, 1);
    assert.deepEqual([emitted[0]?.from, emitted[0]?.to, emitted[0]?.cause], ['success', 'failure', 'probe']);
  });

  void it('healthy probes after the restart emit nothing at all', () => {
    let state = seededReady();
    for (let i = 0; i < 50; i++) {
      const result = pass(state, S, T0 + i * 10_000);
      assert.deepEqual(result.emitted, []);
      state = result.state;
    }
  });

  void it('holds while the container is gated (kubelet started: false)', () => {
    const decision = decide(seededReady(), view(running({ started: false }), { started: false }), T0);
    assert.equal(decision.reason, 'not-started');
    assert.equal(decision.state.committed, 'success');
    assert.equal(decision.emitted, null);
  });

  void it('a seed False is kept as well (no emission) until successes cross the threshold', () => {
    const state = target('readiness', { config: { successThreshold: 2 }, seed: { value: 'failure' } });
    const first = pass(state, S);
    assert.deepEqual([first.state.committed, first.emitted], ['failure', []]);
    const second = pass(first.state, S);
    assert.deepEqual(second.emitted.map((t) => t.to), ['success']);
  });

  void it('applies to the first instance only: a later instance gets the initial value', () => {
    const first = decide(seededReady(), view(), T0).state;
    const decision = decide(first, view(running({ containerId: 'containerd://b' })), T0);
    assert.equal(decision.state.seed, null);
    assert.deepEqual([decision.emitted?.from, decision.emitted?.to, decision.emitted?.cause], ['success', 'failure', 'initial']);
  });

  void it('gives way when the container is seen not running', () => {
    const decision = decide(seededReady(), view(running({ state: 'waiting' })), T0);
    assert.deepEqual([decision.emitted?.from, decision.emitted?.to, decision.emitted?.cause], ['success', 'failure', 'not-running']);
  });

  void it('startedBefore: honoured for a container running since before it', () => {
    const decision = decide(seededReady(T0 - 10_000), view(running({ startedAt: T0 - 60_000 })), T0);
    assert.equal(decision.emitted, null);
    assert.equal(decision.state.committed, 'success');
  });

  void it('startedBefore: ignored for a container started after it (the condition is about an older instance)', () => {
    const decision = decide(seededReady(T0 - 10_000), view(running({ startedAt: T0 - 5_000 })), T0);
    assert.deepEqual([decision.emitted?.from, decision.emitted?.to], ['success', 'failure']);
  });

  void it('survives passes without a container, then applies', () => {
    let state = seededReady();
    state = decide(state, view(running({ containerId: '' })), T0).state;
    assert.notEqual(state.seed, null);
    const decision = decide(state, view(), T0 + 1_000);
    assert.equal(decision.emitted, null);
    assert.equal(record(decision.state, F, T0).state.committed, 'success');
  });
});
