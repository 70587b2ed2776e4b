import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encodeClaim, leaseName, projectMemberPod, proveLease } from '../../../src/sharding/index.ts';
import type { MemberPod, OwnerLookup, ProofContext, ShardLease } from '../../../src/sharding/index.ts';

const now = Date.parse('2026-11-29T10:00:00Z');
const fleet = { deploymentUid: 'dep-1', serviceAccount: 'outprobe' };
const goodPod: MemberPod = { name: 'r1', uid: 'u1', phase: 'Running', ready: true, terminating: false, podIP: '10.0.0.5', nodeName: 'n1', serviceAccount: 'outprobe', controller: { kind: 'ReplicaSet', name: 'rs-1', uid: 'rs-u1' }, peerPort: 9444 };
const lease = (o: Partial<ShardLease> = {}, claim: Record<string, unknown> = { uid: 'u1', node: 'n1', ip: '10.0.0.5' }): ShardLease => ({
  name: leaseName('r1'), holder: 'r1', renewedAt: now - 1000, durationMs: 15_000, counts: undefined, member: JSON.stringify(claim), ...o,
});
const ctx = (pod: MemberPod = goodPod, owner: OwnerLookup = { kind: 'deployment', uid: 'dep-1' }): ProofContext => ({
  now, leaseDurationMs: 15_000, fleet, peerPort: 9000, pod: (name) => (pod.name === name ? pod : undefined), replicaSetOwner: () => owner,
});
const reason = (v: ReturnType<typeof proveLease>): string => (v.kind === 'rejected' ? v.reason : v.kind);

describe('proveLease (ADR 0036)', () => {
  it('a Running, Ready pod of the Deployment matching the claim is a member, addressed from the pod', () => {
    const v = proveLease(lease(), ctx());
    assert.ok(v.kind === 'member');
    assert.deepEqual(v.member, { identity: 'r1', podName: 'r1', podUid: 'u1', nodeName: 'n1', podIP: '10.0.0.5', peerAddress: '10.0.0.5:9444' });
    // The claim's port is never read where membership is proven; a pod without a peer port gets this replica's.
    const noPort = proveLease(lease({}, { uid: 'u1', node: 'n1', ip: '10.0.0.5', port: 1 }), ctx({ ...goodPod, peerPort: undefined }));
    assert.equal(noPort.kind === 'member' ? noPort.member.peerAddress : '', '10.0.0.5:9000');
    assert.equal(proveLease(lease(), ctx({ ...goodPod, podIP: 'fd00::5' })).kind, 'rejected', 'the claimed IP must match');
  });

  it('rejects every forgery with its reason', () => {
    const cases: [string, ShardLease, ProofContext, string][] = [
      ['another name', lease({ name: 'outprobe-shard-evil' }), ctx(), 'lease-name'],
      ['far-future renewTime', lease({ renewedAt: now + 16_000 }), ctx(), 'renew-time-future'],
      ['huge duration', lease({ durationMs: 61_000 }), ctx(), 'lease-duration'],
      ['no claim', lease({ member: undefined }), ctx(), 'no-claim'],
      ['malformed claim', lease({ member: '{"uid":1}' }), ctx(), 'no-claim'],
      ['no such pod', lease({ holder: 'ghost', name: leaseName('ghost') }), ctx(), 'pod-not-found'],
      ['another UID', lease({}, { uid: 'u2', node: 'n1', ip: '10.0.0.5' }), ctx(), 'pod-uid'],
      ['terminating', lease(), ctx({ ...goodPod, terminating: true }), 'pod-terminating'],
      ['Pending', lease(), ctx({ ...goodPod, phase: 'Pending' }), 'pod-not-running'],
      ['not Ready', lease(), ctx({ ...goodPod, ready: false }), 'pod-not-ready'],
      ['wrong IP', lease({}, { uid: 'u1', node: 'n1', ip: '10.0.0.6' }), ctx(), 'pod-ip'],
      ['no IP yet', lease(), ctx({ ...goodPod, podIP: undefined }), 'pod-ip'],
      ['wrong node', lease({}, { uid: 'u1', node: 'n2', ip: '10.0.0.5' }), ctx(), 'pod-node'],
      ['another ServiceAccount', lease(), ctx({ ...goodPod, serviceAccount: 'default' }), 'service-account'],
      ['no controller', lease(), ctx({ ...goodPod, controller: undefined }), 'owner'],
      ['a StatefulSet', lease(), ctx({ ...goodPod, controller: { kind: 'StatefulSet', name: 's', uid: 's1' } }), 'owner'],
      ['another Deployment', lease(), ctx(goodPod, { kind: 'deployment', uid: 'dep-2' }), 'owner'],
      ['a bare ReplicaSet', lease(), ctx(goodPod, { kind: 'none' }), 'owner'],
      ['ReplicaSet unreadable', lease(), ctx(goodPod, { kind: 'failed', error: 'forbidden' }), 'owner-unverifiable'],
      ['ReplicaSet being read', lease(), ctx(goodPod, { kind: 'pending' }), 'pending'],
    ];
    for (const [what, l, c, want] of cases) assert.equal(reason(proveLease(l, c)), want, what);
  });

  it('projects a pod defensively: one controller reference, the peer port by name, Ready from its condition', () => {
    const p = projectMemberPod({
      metadata: { name: 'r1', uid: 'u1', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'rs-u', controller: true }, { apiVersion: 'v1', kind: 'X', name: 'x', uid: 'x' }] },
      spec: { nodeName: 'n1', serviceAccountName: 'outprobe', containers: [{ name: 'c', ports: [{ name: 'metrics', containerPort: 8080 }, { name: 'peer', containerPort: 9444 }] }] },
      status: { phase: 'Running', podIP: '10.0.0.5', conditions: [{ type: 'Ready', status: 'True' }] },
    });
    assert.deepEqual(p, { name: 'r1', uid: 'u1', phase: 'Running', ready: true, terminating: false, podIP: '10.0.0.5', nodeName: 'n1', serviceAccount: 'outprobe', controller: { kind: 'ReplicaSet', name: 'rs', uid: 'rs-u' }, peerPort: 9444 });
    const two = projectMemberPod({ metadata: { name: 'x', ownerReferences: [{ kind: 'ReplicaSet', name: 'a', uid: 'a', controller: true }, { kind: 'ReplicaSet', name: 'b', uid: 'b', controller: true }] }, spec: { containers: 'nope' }, status: { conditions: [{ type: 'Ready', status: 'False' }] } } as never);
    assert.equal(two.controller, undefined, 'two controllers: none');
    assert.equal(two.ready, false);
    assert.equal(two.peerPort, undefined);
    assert.equal(encodeClaim({ podUid: 'u', nodeName: 'n', podIP: '1.2.3.4' }), '{"uid":"u","node":"n","ip":"1.2.3.4"}');
  });
});
