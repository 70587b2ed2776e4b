// The kubelet's readiness folding: the test tables of k8s.io/kubernetes v1.37.2
// pkg/kubelet/status/generate_test.go (TestGenerateContainersReadyCondition,
// TestGeneratePodReadyCondition), case for case, plus the status manager's
// lastTransitionTime rule and the agent's status patch.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  generateContainersReadyCondition, generatePodReadyCondition, lastTransitionTime, projectAgentPod, statusPatch,
} from '../../support/node-agent/index.ts';
import type { ContainerReadiness, FoldCondition, FoldSpec } from '../../support/node-agent/index.ts';

const spec = (o: Partial<FoldSpec> = {}): FoldSpec => ({ generation: 0, containers: [], restartableInitContainers: [], readinessGates: [], ...o });
const ready = (name: string): ContainerReadiness => ({ name, ready: true });
const notReady = (name: string): ContainerReadiness => ({ name, ready: false });
const cond = (type: string, status: string, reason = '', message = ''): Record<string, unknown> => ({ type, status, reason, message, observedGeneration: 0 });
const gate = (type: string, status: string): FoldCondition => ({ type, status });

interface Case { spec: FoldSpec; statuses: ContainerReadiness[] | undefined; phase: string; conditions?: FoldCondition[]; want: [string, string, string] }

const containersCases: Case[] = [
  { spec: spec(), statuses: undefined, phase: 'Running', want: ['False', 'UnknownContainerStatuses', ''] },
  { spec: spec(), statuses: [], phase: 'Running', want: ['True', '', ''] },
  { spec: spec({ containers: ['1234'] }), statuses: [], phase: 'Running', want: ['False', 'ContainersNotReady', 'containers with unknown status: [1234]'] },
  { spec: spec({ containers: ['1234', '5678'] }), statuses: [ready('1234'), ready('5678')], phase: 'Running', want: ['True', '', ''] },
  { spec: spec({ containers: ['1234', '5678'] }), statuses: [ready('1234')], phase: 'Running', want: ['False', 'ContainersNotReady', 'containers with unknown status: [5678]'] },
  { spec: spec({ containers: ['1234', '5678'] }), statuses: [ready('1234'), notReady('5678')], phase: 'Running', want: ['False', 'ContainersNotReady', 'containers with unready status: [5678]'] },
  { spec: spec({ containers: ['1234'] }), statuses: [notReady('1234')], phase: 'Succeeded', want: ['False', 'PodCompleted', ''] },
  { spec: spec({ restartableInitContainers: ['restartable-init-1'], containers: ['regular-1'] }), statuses: [ready('regular-1')], phase: 'Running', want: ['False', 'ContainersNotReady', 'containers with unknown status: [restartable-init-1]'] },
  { spec: spec({ restartableInitContainers: ['restartable-init-1', 'restartable-init-2'], containers: ['regular-1'] }), statuses: [ready('restartable-init-1'), ready('restartable-init-2'), ready('regular-1')], phase: 'Running', want: ['True', '', ''] },
  { spec: spec({ restartableInitContainers: ['restartable-init-1', 'restartable-init-2'], containers: ['regular-1'] }), statuses: [ready('restartable-init-1'), ready('regular-1')], phase: 'Running', want: ['False', 'ContainersNotReady', 'containers with unknown status: [restartable-init-2]'] },
  { spec: spec({ restartableInitContainers: ['restartable-init-1', 'restartable-init-2'], containers: ['regular-1'] }), statuses: [ready('restartable-init-1'), notReady('restartable-init-2'), ready('regular-1')], phase: 'Running', want: ['False', 'ContainersNotReady', 'containers with unready status: [restartable-init-2]'] },
];

const podReadyCases: Case[] = [
  { spec: spec(), statuses: undefined, phase: 'Running', want: ['False', 'UnknownContainerStatuses', ''] },
  { spec: spec(), statuses: [], phase: 'Running', want: ['True', '', ''] },
  { spec: spec({ containers: ['1234'] }), statuses: [], phase: 'Running', want: ['False', 'ContainersNotReady', 'containers with unknown status: [1234]'] },
  { spec: spec({ containers: ['1234', '5678'] }), statuses: [ready('1234'), ready('5678')], phase: 'Running', want: ['True', '', ''] },
  { spec: spec({ containers: ['1234', '5678'] }), statuses: [ready('1234')], phase: 'Running', want: ['False', 'ContainersNotReady', 'containers with unknown status: [5678]'] },
  { spec: spec({ containers: ['1234', '5678'] }), statuses: [ready('1234'), notReady('5678')], phase: 'Running', want: ['False', 'ContainersNotReady', 'containers with unready status: [5678]'] },
  { spec: spec({ containers: ['1234'] }), statuses: [notReady('1234')], phase: 'Succeeded', want: ['False', 'PodCompleted', ''] },
  { spec: spec({ readinessGates: ['gate1'] }), statuses: [], phase: 'Running', want: ['False', 'ReadinessGatesNotReady', 'corresponding condition of pod readiness gate "gate1" does not exist.'] },
  { spec: spec({ readinessGates: ['gate1'] }), conditions: [gate('gate1', 'False')], statuses: [], phase: 'Running', want: ['False', 'ReadinessGatesNotReady', 'the status of pod readiness gate "gate1" is not "True", but False'] },
  { spec: spec({ readinessGates: ['gate1'] }), conditions: [gate('gate1', 'True')], statuses: [], phase: 'Running', want: ['True', '', ''] },
  { spec: spec({ readinessGates: ['gate1', 'gate2'] }), conditions: [gate('gate1', 'True')], statuses: [], phase: 'Running', want: ['False', 'ReadinessGatesNotReady', 'corresponding condition of pod readiness gate "gate2" does not exist.'] },
  { spec: spec({ readinessGates: ['gate1', 'gate2'] }), conditions: [gate('gate1', 'True'), gate('gate2', 'False')], statuses: [], phase: 'Running', want: ['False', 'ReadinessGatesNotReady', 'the status of pod readiness gate "gate2" is not "True", but False'] },
  { spec: spec({ readinessGates: ['gate1', 'gate2'] }), conditions: [gate('gate1', 'True'), gate('gate2', 'True')], statuses: [], phase: 'Running', want: ['True', '', ''] },
  { spec: spec({ containers: ['1234'], readinessGates: ['gate1'] }), conditions: [gate('gate1', 'True')], statuses: [notReady('1234')], phase: 'Running', want: ['False', 'ContainersNotReady', 'containers with unready status: [1234]'] },
];

describe('GenerateContainersReadyCondition (generate_test.go table)', () => {
  containersCases.forEach((c, i) => {
    it(`case ${i}: ${c.want.join(' / ')}`, () => {
      assert.deepEqual(generateContainersReadyCondition(c.spec, c.statuses, c.phase), cond('ContainersReady', ...c.want));
    });
  });
  it('a Failed pod: PodFailed, whatever the containers say', () => {
    assert.deepEqual(generateContainersReadyCondition(spec({ containers: ['a'] }), [ready('a')], 'Failed'), cond('ContainersReady', 'False', 'PodFailed'));
  });
});

describe('GeneratePodReadyCondition (generate_test.go table)', () => {
  podReadyCases.forEach((c, i) => {
    it(`case ${i}: ${c.want.join(' / ')}`, () => {
      assert.deepEqual(generatePodReadyCondition(c.spec, c.conditions ?? [], c.statuses, c.phase), cond('Ready', ...c.want));
    });
  });
  it('joins several gates\' messages with ", " and reports Unknown as such', () => {
    const got = generatePodReadyCondition(spec({ readinessGates: ['a', 'b', 'c'] }), [gate('b', 'Unknown'), gate('c', 'False')], [], 'Running');
    assert.equal(got.message, 'corresponding condition of pod readiness gate "a" does not exist., the status of pod readiness gate "b" is not "True", but Unknown, the status of pod readiness gate "c" is not "True", but False');
  });
  it('lists several unready containers as Go prints a slice', () => {
    const got = generatePodReadyCondition(spec({ containers: ['a', 'b', 'c'] }), [], [notReady('a'), ready('b'), notReady('c')], 'Running');
    assert.equal(got.message, 'containers with unready status: [a c]');
  });
  it('observedGeneration is the pod generation', () => {
    assert.equal(generatePodReadyCondition(spec({ generation: 7 }), [], [], 'Running').observedGeneration, 7);
  });
});

describe('lastTransitionTime (status_manager updateLastTransitionTime)', () => {
  const now = Date.parse('2030-01-02T03:04:05.678Z');
  it('keeps the old time while the status stays', () => {
    assert.equal(lastTransitionTime('True', { status: 'True', lastTransitionTime: '2020-01-01T00:00:00Z' }, now), '2020-01-01T00:00:00Z');
  });
  it('is now (whole seconds) when the status changes or there was no condition', () => {
    assert.equal(lastTransitionTime('False', { status: 'True', lastTransitionTime: '2020-01-01T00:00:00Z' }, now), '2030-01-02T03:04:05Z');
    assert.equal(lastTransitionTime('False', undefined, now), '2030-01-02T03:04:05Z');
  });
});

describe('statusPatch', () => {
  const now = Date.parse('2030-01-02T03:04:05Z');
  const raw = (conditions: unknown[], ready = true): Record<string, unknown> => ({
    metadata: { name: 'p', namespace: 'ns', uid: 'u', resourceVersion: '42', generation: 1 },
    spec: { nodeName: 'n', readinessGates: [{ conditionType: 'g' }], containers: [{ name: 'web' }] },
    status: { phase: 'Running', conditions, containerStatuses: [{ name: 'web', ready, containerID: 'x://1', state: { running: { startedAt: '2030-01-01T00:00:00Z' } } }] },
  });
  const always = (): boolean => true;
  it('rewrites a wrong Ready (kwok\'s message) with reason and message, keeping ContainersReady', () => {
    const pod = projectAgentPod(raw([
      { type: 'ContainersReady', status: 'True', lastTransitionTime: '2029-01-01T00:00:00Z' },
      { type: 'Ready', status: 'False', reason: 'ReadinessGatesNotReady', message: 'the status of pod readiness gate is not "True"', lastTransitionTime: '2029-01-01T00:00:00Z' },
      { type: 'g', status: 'False' },
    ]));
    const p = statusPatch(pod, always, now);
    assert.deepEqual(p?.body, { metadata: { resourceVersion: '42' }, status: { conditions: [{
      type: 'Ready', status: 'False', reason: 'ReadinessGatesNotReady', message: 'the status of pod readiness gate "g" is not "True", but False',
      lastTransitionTime: '2029-01-01T00:00:00Z', lastProbeTime: null, observedGeneration: 1,
    }] } });
  });
  it('gate True: Ready True with reason and message deleted and a new transition time', () => {
    const pod = projectAgentPod(raw([
      { type: 'ContainersReady', status: 'True' },
      { type: 'Ready', status: 'False', reason: 'ReadinessGatesNotReady', message: 'x', lastTransitionTime: '2029-01-01T00:00:00Z' },
      { type: 'g', status: 'True' },
    ]));
    const c = (statusPatch(pod, always, now)?.body['status'] as { conditions: Record<string, unknown>[] }).conditions;
    assert.deepEqual(c, [{ type: 'Ready', status: 'True', reason: null, message: null, lastTransitionTime: '2030-01-02T03:04:05Z', lastProbeTime: null, observedGeneration: 1 }]);
  });
  it('nothing to write when the pod already says it', () => {
    const pod = projectAgentPod(raw([{ type: 'ContainersReady', status: 'True' }, { type: 'Ready', status: 'True' }, { type: 'g', status: 'True' }]));
    assert.equal(statusPatch(pod, always, now), null);
  });
  it('a readiness verdict false flips the container and both conditions; the whole list is sent', () => {
    const pod = projectAgentPod(raw([{ type: 'ContainersReady', status: 'True' }, { type: 'Ready', status: 'True' }, { type: 'g', status: 'True' }]));
    const p = statusPatch(pod, () => false, now);
    const status = p?.body['status'] as { conditions: { type: string; message: string }[]; containerStatuses: { name: string; ready: boolean }[] };
    assert.deepEqual(status.containerStatuses.map((s) => [s.name, s.ready]), [['web', false]]);
    assert.deepEqual(status.conditions.map((c) => [c.type, c.message]), [['ContainersReady', 'containers with unready status: [web]'], ['Ready', 'containers with unready status: [web]']]);
    assert.deepEqual(p?.containers, ['web=false']);
  });
  it('an undefined verdict (exec probe) keeps the container\'s ready flag', () => {
    const pod = projectAgentPod(raw([{ type: 'ContainersReady', status: 'True' }, { type: 'Ready', status: 'True' }, { type: 'g', status: 'True' }]));
    assert.equal(statusPatch(pod, () => undefined, now), null);
  });
});
