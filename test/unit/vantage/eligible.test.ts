import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import type { Pod } from '../../../src/kube/index.ts';
import { leaseName, owner, proveLease } from '../../../src/sharding/index.ts';
import type { MemberPod, ProofContext, ShardLease } from '../../../src/sharding/index.ts';
import { assign, eligible, secondOpinionOrder, strictest, vantageText, VantageOwnership } from '../../../src/vantage/index.ts';
import type { Spread, VantageMember, VantageSource } from '../../../src/vantage/index.ts';

const uuid = (i: number): string => createHash('sha1').update(`pod-${i}`).digest('hex').slice(0, 32);
const uids = Array.from({ length: 3000 }, (_, i) => uuid(i));
const nodes = ['n1', 'n2', 'n3'];
const zoneOf: Record<string, string> = { n1: 'a', n2: 'a', n3: 'b' };
const members: VantageMember[] = [
  { identity: 'r1', node: 'n1', zone: 'a' },
  { identity: 'r2', node: 'n2', zone: 'a' },
  { identity: 'r3', node: 'n3', zone: 'b' },
];
const nodeOf = (id: string | undefined): string | undefined => members.find((m) => m.identity === id)?.node;
const pod = (uid: string, nodeName: string | undefined): Pod => ({ uid, namespace: 'ns', name: uid.slice(0, 8), nodeName } as unknown as Pod);
const source = (spread: Spread, zones: Record<string, string | null> = zoneOf): VantageSource => ({ spreadOf: () => spread, zoneOf: (n) => zones[n] });

void describe('vantage eligibility and ownership (ADR 0040)', () => {
  void it('plain rendezvous (sharding before vantage) puts about a third of the pods on their own node; vantage puts none', () => {
    let colocatedPlain = 0;
    let colocatedVantage = 0;
    const moved: string[] = [];
    for (const [i, uid] of uids.entries()) {
      const node = nodes[i % 3];
      if (nodeOf(owner(members.map((m) => m.identity), uid)) === node) colocatedPlain++;
      const a = assign(members, uid, { node, zone: undefined }, 'node');
      const id = a.kind === 'owner' ? a.identity : undefined;
      assert.notEqual(id, undefined);
      if (nodeOf(id) === node) colocatedVantage++;
      if (id !== owner(members.map((m) => m.identity), uid)) moved.push(uid);
    }
    assert.ok(colocatedPlain > uids.length / 5, `plain rendezvous co-located ${colocatedPlain} of ${uids.length}`);
    assert.equal(colocatedVantage, 0);
    // Only the co-located pods move: ownership is rendezvous over the eligible members.
    assert.equal(moved.length, colocatedPlain);
  });

  void it('ownership moves only the pods it must when a member joins', () => {
    const two = members.slice(0, 2);
    let moved = 0;
    for (const [i, uid] of uids.entries()) {
      const node = nodes[i % 3];
      const before = assign(two, uid, { node, zone: undefined }, 'node');
      const after = assign(members, uid, { node, zone: undefined }, 'node');
      if (before.kind === 'owner' && after.kind === 'owner' && before.identity !== after.identity) {
        moved++;
        assert.equal(after.identity, 'r3', 'a pod moves only to the member that joined');
      }
    }
    assert.ok(moved < uids.length / 2, `moved ${moved}`);
  });

  void it('zone: another zone where one is known, else another node; any: everyone', () => {
    assert.deepEqual(eligible(members, { node: 'n1', zone: 'a' }, 'zone'), ['r3']);
    assert.deepEqual(eligible(members, { node: 'n3', zone: 'b' }, 'zone'), ['r1', 'r2']);
    // A node without a zone label: the pod's zone is unknown, any other node will do.
    assert.deepEqual(eligible(members, { node: 'n1', zone: undefined }, 'zone'), ['r2', 'r3']);
    // A one-zone cluster: another node.
    const oneZone = members.map((m) => ({ ...m, zone: 'a' }));
    assert.deepEqual(eligible(oneZone, { node: 'n1', zone: 'a' }, 'zone'), ['r2', 'r3']);
    assert.deepEqual(eligible(members, { node: 'n1', zone: 'a' }, 'any'), ['r1', 'r2', 'r3']);
    assert.deepEqual(eligible(members, { node: 'n1', zone: 'a' }, 'node'), ['r2', 'r3']);
  });

  void it('a pod without spec.nodeName (not scheduled) may go to any member with a known node', () => {
    assert.deepEqual(eligible(members, { node: undefined, zone: undefined }, 'node'), ['r1', 'r2', 'r3']);
    const o = new VantageOwnership(source('node'));
    o.setMembers(['r1', 'r2', 'r3'], members.map((m) => ({ identity: m.identity, nodeName: m.node ?? '' })));
    const uid = uids.find((u) => owner(['r1', 'r2', 'r3'], u) === 'r1') ?? '';
    assert.equal(o.responsible(pod(uid, undefined)), 'r1');
    // Its node is learned: it moves only if it landed on its owner's node.
    assert.notEqual(o.responsible(pod(uid, 'n1')), 'r1');
    assert.equal(o.responsible(pod(uid, 'n2')), 'r1');
  });

  void it('a member whose node is unknown (an older Lease) is never chosen where a known one would do', () => {
    const withUnknown = [...members, { identity: 'old', node: undefined, zone: undefined }];
    for (const uid of uids.slice(0, 300)) {
      const a = assign(withUnknown, uid, { node: 'n1', zone: undefined }, 'node');
      assert.ok(a.kind === 'owner' && a.identity !== 'old' && a.identity !== 'r1');
    }
    // Only members of unknown vantage besides the pod's own node's: they are the fallback.
    assert.deepEqual(eligible([members[0] as VantageMember, { identity: 'old', node: undefined, zone: undefined }], { node: 'n1', zone: undefined }, 'node'), ['old']);
  });

  void it('no eligible member: NoVantage, kept by the plain rendezvous owner; any probes from the own node', () => {
    const one = [members[0] as VantageMember];
    assert.deepEqual(assign(one, 'u', { node: 'n1', zone: 'a' }, 'node'), { kind: 'none', keeper: 'r1' });
    assert.deepEqual(assign(one, 'u', { node: 'n1', zone: 'a' }, 'zone'), { kind: 'none', keeper: 'r1' });
    assert.deepEqual(assign(one, 'u', { node: 'n1', zone: 'a' }, 'any'), { kind: 'owner', identity: 'r1' });
    assert.deepEqual(assign(one, 'u', { node: 'n2', zone: 'a' }, 'node'), { kind: 'owner', identity: 'r1' });
    const sameNode = [members[0] as VantageMember, { identity: 'r1b', node: 'n1', zone: 'a' }];
    assert.equal(assign(sameNode, 'u', { node: 'n1', zone: 'a' }, 'node').kind, 'none');
    assert.deepEqual(assign([], 'u', { node: 'n1', zone: 'a' }, 'node'), { kind: 'none', keeper: undefined });
  });

  void it('the second opinion asks eligible peers only, never one on the pod\'s node', () => {
    for (const uid of uids.slice(0, 300)) {
      const order = secondOpinionOrder(members, uid, { node: 'n2', zone: 'a' }, 'node', ['r1', 'r2', 'r3']);
      assert.ok(!order.includes('r2'));
      assert.equal(order.length, 2);
    }
    const o = new VantageOwnership(source('node'));
    o.setMembers(['r1', 'r2', 'r3'], members.map((m) => ({ identity: m.identity, nodeName: m.node ?? '' })));
    const p = pod(uids[0] ?? '', 'n2');
    const ownerId = o.responsible(p);
    const peers = ['r1', 'r2', 'r3'].filter((id) => id !== ownerId);
    assert.ok(!o.secondOpinionOrder(p.uid, peers).includes('r2'));
  });

  void it('a member\'s zone is its Node\'s label; the Lease\'s declared zone counts only where the Node cannot be read', () => {
    const o = new VantageOwnership(source('zone', { n1: 'a', n2: 'a' }));
    // r2 declares zone b on its Lease, but its Node says a: it must not win the zone-spread pods of zone a.
    o.setMembers(['r1', 'r2'], [{ identity: 'r1', nodeName: 'n1' }, { identity: 'r2', nodeName: 'n2', zone: 'b' }]);
    assert.deepEqual(o.members.map((m) => m.zone), ['a', 'a']);
    // n3's Node is unreadable: r3's declaration is all there is.
    const p = new VantageOwnership(source('zone', { n1: 'a' }));
    p.setMembers(['r1', 'r3'], [{ identity: 'r1', nodeName: 'n1' }, { identity: 'r3', nodeName: 'n3', zone: 'b' }]);
    assert.deepEqual(p.members.map((m) => m.zone), ['a', 'b']);
    // A Node read without a zone label (null) is not overridden by a declaration.
    const q = new VantageOwnership(source('zone', { n1: 'a', n3: null }));
    q.setMembers(['r1', 'r3'], [{ identity: 'r1', nodeName: 'n1' }, { identity: 'r3', nodeName: 'n3', zone: 'b' }]);
    assert.deepEqual(q.members.map((m) => m.zone), ['a', undefined]);
  });

  void it('a Lease claiming a node it is not on is not a member, so it cannot win a pod', () => {
    const now = Date.parse('2026-12-07T02:00:00Z');
    // The replica's pod runs on n1, its Lease claims n2 (to win the pods of n1).
    const liar: MemberPod = { name: 'r1', uid: 'u1', phase: 'Running', ready: true, terminating: false, podIP: '10.0.0.5', nodeName: 'n1', serviceAccount: 'outprobe', controller: { kind: 'ReplicaSet', name: 'rs', uid: 'rs-u' }, peerPort: 9444 };
    const lease: ShardLease = { name: leaseName('r1'), holder: 'r1', renewedAt: now - 1000, durationMs: 15_000, counts: undefined, member: JSON.stringify({ uid: 'u1', node: 'n2', ip: '10.0.0.5', zone: 'b' }) };
    const ctx: ProofContext = { now, leaseDurationMs: 15_000, fleet: { deploymentUid: 'd', serviceAccount: 'outprobe' }, peerPort: 9444, pod: (n) => (n === 'r1' ? liar : undefined), replicaSetOwner: () => ({ kind: 'deployment', uid: 'd' }) };
    const v = proveLease(lease, ctx);
    assert.equal(v.kind === 'rejected' ? v.reason : v.kind, 'pod-node');
    // Told the truth, its node is the pod's: the pods of n1 go elsewhere.
    const honest = proveLease({ ...lease, member: JSON.stringify({ uid: 'u1', node: 'n1', ip: '10.0.0.5' }) }, ctx);
    assert.ok(honest.kind === 'member');
    const o = new VantageOwnership(source('node'));
    o.setMembers(['r1', 'r2'], [{ identity: 'r1', nodeName: honest.member.nodeName }, { identity: 'r2', nodeName: 'n2' }]);
    for (const uid of uids.slice(0, 200)) assert.equal(o.responsible(pod(uid, 'n1')), 'r2');
  });

  void it('a zone-spread pod\'s node relabelled: its pods are assigned again, though no member changed (ADR 0071)', () => {
    const zones: Record<string, string | null> = { n1: 'a', n2: 'a', n3: 'b', n4: 'a' };
    let asked = 0;
    const o = new VantageOwnership({ spreadOf: () => 'zone', zoneOf: (n) => { if (n === 'n4') asked++; return zones[n]; } });
    o.setMembers(['r1', 'r3'], [{ identity: 'r1', nodeName: 'n1' }, { identity: 'r3', nodeName: 'n3' }]);
    const sample = uids.slice(0, 50);
    for (const uid of sample) assert.equal(o.responsible(pod(uid, 'n4')), 'r3');
    const before = asked;
    for (const uid of sample) o.responsible(pod(uid, 'n4'));
    assert.ok(asked > before, 'a cached pod still asks for its node\'s zone (that is what reads the node again after the TTL)');
    zones['n4'] = 'b';
    for (const uid of sample) assert.equal(o.responsible(pod(uid, 'n4')), 'r1');
  });

  void it('the strictest spread of a pod\'s policies wins; texts name node and zone', () => {
    assert.equal(strictest([]), 'node');
    assert.equal(strictest(['any']), 'any');
    assert.equal(strictest(['any', 'node']), 'node');
    assert.equal(strictest(['node', 'zone', 'any']), 'zone');
    assert.equal(vantageText('n1', 'a'), 'node n1 (zone a)');
    assert.equal(vantageText('n1', undefined), 'node n1');
  });
});
