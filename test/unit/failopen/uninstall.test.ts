import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planUninstall } from '../../../src/failopen/index.ts';
import { ownReasons } from '../../../src/controller/conditions.ts';

const at = '2026-12-07T00:00:00Z';
const gate = 'outprobe.io/web';
const released = { type: gate, status: 'True', reason: 'GateReleased', message: 'outprobe was uninstalled: its readiness gate is released', lastTransitionTime: at, lastProbeTime: at };
const meta = { name: 'p', namespace: 'ns', uid: 'u1', resourceVersion: '42' };
const guard = [{ op: 'test', path: '/metadata/uid', value: 'u1' }, { op: 'test', path: '/metadata/resourceVersion', value: '42' }];

describe('planUninstall: the release-gates CLI, one pod', () => {
  it('replaces an outprobe-written False in place, guarded by uid and resourceVersion', () => {
    const plan = planUninstall({ metadata: meta, spec: { readinessGates: [{ conditionType: gate }] }, status: { conditions: [{ type: 'Ready', status: 'False', reason: '' }, { type: gate, status: 'False', reason: 'ProbeFailed' }] } }, ownReasons, at);
    assert.deepEqual(plan, { released: [gate], foreign: [], patch: [...guard, { op: 'replace', path: '/status/conditions/1', value: released }] });
  });
  it('adds a missing outprobe.io/ condition (to an empty list too); never another type not written yet', () => {
    const none = planUninstall({ metadata: meta, spec: { readinessGates: [{ conditionType: gate }, { conditionType: 'example.com/x' }] }, status: {} }, ownReasons, at);
    assert.deepEqual(none.patch, [...guard, { op: 'add', path: '/status/conditions', value: [released] }]);
    const some = planUninstall({ metadata: meta, spec: { readinessGates: [{ conditionType: gate }] }, status: { conditions: [{ type: 'Ready', status: 'False' }] } }, ownReasons, at);
    assert.deepEqual(some.patch, [...guard, { op: 'add', path: '/status/conditions/-', value: released }]);
  });
  it('leaves another writer\'s condition, a True one, an ungated pod and a finished pod alone', () => {
    const theirs = planUninstall({ metadata: meta, spec: { readinessGates: [{ conditionType: gate }] }, status: { conditions: [{ type: gate, status: 'False', reason: 'ManualHold' }] } }, ownReasons, at);
    assert.deepEqual(theirs, { released: [], foreign: [gate], patch: null });
    assert.equal(planUninstall({ metadata: meta, spec: { readinessGates: [{ conditionType: gate }] }, status: { conditions: [{ type: gate, status: 'True', reason: 'ProbeSucceeded' }] } }, ownReasons, at).patch, null);
    assert.equal(planUninstall({ metadata: meta, spec: {}, status: {} }, ownReasons, at).patch, null);
    assert.equal(planUninstall({ metadata: meta, spec: { readinessGates: [{ conditionType: gate }] }, status: { phase: 'Succeeded' } }, ownReasons, at).patch, null);
  });
});
