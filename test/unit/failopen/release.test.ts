import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { claimed, orphanBoundMs, orphaned, releasable, releaseCondition, releasedByChange, strandedGates } from '../../../src/failopen/index.ts';
import type { Writer } from '../../../src/failopen/index.ts';
import { conditionWriter } from '../../../src/controller/conditions.ts';
import type { Pod, PodCondition } from '../../../src/kube/index.ts';
import type { ProbePolicy } from '../../../src/policy/index.ts';

const gate = 'outprobe.io/web';

function policy(over: { mode?: 'Enforce' | 'Observe'; type?: string | null; labels?: Record<string, string>; namespace?: string } = {}): ProbePolicy {
  const type = over.type === undefined ? gate : over.type;
  return {
    metadata: { name: 'web', namespace: over.namespace ?? 'shop' },
    spec: {
      selector: { matchLabels: over.labels ?? { app: 'web' }, matchExpressions: [] },
      mode: over.mode ?? 'Enforce',
      readiness: type === null ? null : {
        conditionType: type,
        container: null,
        maxUnreadyPercent: 50,
        probe: { handler: { type: 'httpGet', path: '/', port: 'http', scheme: 'HTTP', httpHeaders: [] }, initialDelaySeconds: 0, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3, terminationGracePeriodSeconds: null },
      },
      liveness: null,
      startup: null,
      remediation: { maxUnavailable: 1, haltAbovePercentFailing: 50 },
    },
  };
}

const cond = (type: string, status: 'True' | 'False', reason: string): PodCondition => ({ type, status, reason, message: undefined, lastTransitionTime: undefined });

function pod(conditions: PodCondition[], gates: readonly string[] = [gate]): Pod {
  return {
    uid: 'u1', namespace: 'shop', name: 'web-1', resourceVersion: '1', labels: { app: 'web' }, nodeName: 'n1', phase: 'Running', podIP: '10.0.0.1',
    deletionTimestamp: undefined, restartPolicy: 'Always', terminationGracePeriodSeconds: 30, hostNetwork: false, readinessGates: gates,
    containers: [{ name: 'web', ports: [{ name: 'http', containerPort: 8080 }], env: {}, sidecar: false }],
    containerStatuses: [], conditions,
  };
}
const writerOf = (p: Pod) => (t: string): Writer => conditionWriter(p.conditions, t).by;

describe('releasedByChange: what a policy change stops outprobe writing', () => {
  const p = pod([cond(gate, 'False', 'ProbeFailed')]);
  it('each stranding change, with its cause', () => {
    const before = policy();
    assert.deepEqual(releasedByChange(before, policy({ labels: { app: 'web', tier: 'canary' } }), p), { type: gate, cause: 'selector' });
    assert.deepEqual(releasedByChange(before, policy({ type: 'outprobe.io/web-v2' }), p), { type: gate, cause: 'condition-type' });
    assert.deepEqual(releasedByChange(before, policy({ mode: 'Observe' }), p), { type: gate, cause: 'observe' });
    assert.deepEqual(releasedByChange(before, policy({ type: null }), p), { type: gate, cause: 'no-readiness' });
    assert.deepEqual(releasedByChange(before, undefined, p), { type: gate, cause: 'invalid' });
    assert.deepEqual(releasedByChange(before, 'deleted', p), { type: gate, cause: 'deleted' });
  });
  it('deletion releases in any mode (the gate may date from when it was Enforce)', () => {
    assert.deepEqual(releasedByChange(policy({ mode: 'Observe' }), 'deleted', p), { type: gate, cause: 'deleted' });
  });
  it('nothing when it still writes the same gate there, or never wrote one', () => {
    assert.equal(releasedByChange(policy(), policy({ labels: {} }), p), null, 'a wider selector');
    assert.equal(releasedByChange(policy({ mode: 'Observe' }), policy({ mode: 'Observe', labels: { app: 'db' } }), p), null, 'Observe wrote nothing');
    assert.equal(releasedByChange(policy({ labels: { app: 'db' } }), 'deleted', p), null, 'never selected');
    assert.equal(releasedByChange(undefined, policy(), p), null, 'was Invalid: nothing known (the level rule covers it)');
    assert.equal(releasedByChange(policy({ namespace: 'other' }), 'deleted', p), null, 'another namespace');
  });
});

describe('releasable: only over what outprobe wrote', () => {
  it('an outprobe-written False, never another writer\'s, never an unlisted gate, never one already True', () => {
    const own = pod([cond(gate, 'False', 'ProbeFailed')]);
    assert.equal(releasable(own, gate, 'outprobe', false), true);
    const theirs = pod([cond(gate, 'False', 'ManualHold')]);
    assert.equal(releasable(theirs, gate, writerOf(theirs)(gate), true), false);
    assert.equal(releasable(pod([cond(gate, 'False', 'ProbeFailed')], []), gate, 'outprobe', true), false);
    assert.equal(releasable(pod([cond(gate, 'True', 'ProbeSucceeded')]), gate, 'outprobe', true), false);
  });
  it('a condition not written yet: only outprobe.io/ types, only on a change outprobe saw', () => {
    assert.equal(releasable(pod([]), gate, 'absent', true), true);
    assert.equal(releasable(pod([]), gate, 'absent', false), false);
    const neg = 'cloud.google.com/load-balancer-neg-ready';
    assert.equal(releasable(pod([], [neg]), neg, 'absent', true), false);
  });
  it('a gate released before (GateReleased, PolicyRemoved) is outprobe\'s own', () => {
    assert.equal(conditionWriter([cond(gate, 'True', 'GateReleased')], gate).by, 'outprobe');
    assert.equal(conditionWriter([cond(gate, 'True', 'PolicyRemoved')], gate).by, 'outprobe');
  });
});

describe('strandedGates: the level rule', () => {
  it('an outprobe-written False no valid Enforce policy claims', () => {
    const p = pod([cond(gate, 'False', 'ProbeFailed')]);
    assert.deepEqual(strandedGates(p, [], writerOf(p)), [gate]);
    assert.deepEqual(strandedGates(p, [policy({ mode: 'Observe' })], writerOf(p)), [gate]);
    assert.deepEqual(strandedGates(p, [undefined], writerOf(p)), [gate], 'an Invalid policy claims nothing');
    assert.deepEqual(strandedGates(p, [policy()], writerOf(p)), [], 'claimed');
    assert.equal(claimed([policy({ type: 'outprobe.io/other' }), policy()], p, gate), true, 'any one claim is enough');
  });
  it('never a missing condition (the pod may come before its policy), never another writer\'s', () => {
    const missing = pod([]);
    assert.deepEqual(strandedGates(missing, [], writerOf(missing)), []);
    const theirs = pod([cond(gate, 'False', 'ManualHold')]);
    assert.deepEqual(strandedGates(theirs, [], writerOf(theirs)), []);
  });
});

describe('orphans and the release condition', () => {
  it('the bound is max(30 s, 2 × lease duration), passed strictly', () => {
    assert.equal(orphanBoundMs(15_000), 30_000);
    assert.equal(orphanBoundMs(40_000), 80_000);
    assert.equal(orphaned(undefined, 100_000, 30_000), false);
    assert.equal(orphaned(0, 30_000, 30_000), false);
    assert.equal(orphaned(0, 30_001, 30_000), true);
  });
  it('PolicyRemoved on deletion (the words kept from before), GateReleased otherwise', () => {
    const at = '2026-12-07T00:00:00Z';
    assert.deepEqual(releaseCondition(gate, 'deleted', at), { type: gate, status: 'True', reason: 'PolicyRemoved', message: 'The ProbePolicy that owned this readiness gate was removed; outprobe no longer gates this pod', lastTransitionTime: at, lastProbeTime: at });
    const c = releaseCondition(gate, 'selector', at, { policy: 'shop/web' });
    assert.equal(c.reason, 'GateReleased');
    assert.equal(c.message, 'ProbePolicy shop/web no longer selects this pod: outprobe no longer gates it');
    assert.match(releaseCondition(gate, 'orphaned', at, { boundSeconds: 30 }).message, /for more than 30 s/);
    assert.equal(releaseCondition(gate, 'uninstall', at).reason, 'GateReleased');
  });
});
