import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import type { Pod } from '../../../src/kube/index.ts';
import { assign, combine, vantagesOf, VantageOwnership } from '../../../src/vantage/index.ts';
import type { Spread, VantageMember, Verdict } from '../../../src/vantage/index.ts';

const uuid = (i: number): string => createHash('sha1').update(`pod-${i}`).digest('hex').slice(0, 32);
const uids = Array.from({ length: 2000 }, (_, i) => uuid(i));
const zoneOf: Record<string, string> = { n1: 'a', n2: 'a', n3: 'b', n4: 'b' };
const fleet: VantageMember[] = [
  { identity: 'r1', node: 'n1', zone: 'a' },
  { identity: 'r2', node: 'n2', zone: 'a' },
  { identity: 'r3', node: 'n3', zone: 'b' },
  { identity: 'r4', node: 'n4', zone: 'b' },
];
const byId = new Map(fleet.map((m) => [m.identity, m]));
const place = (node: string): { node: string; zone: string | undefined } => ({ node, zone: zoneOf[node] });

void describe('several vantages per pod: assignment (ADR 0058)', () => {
  void it('the first vantage is exactly the owner of count 1, for every pod and spread', () => {
    for (const spread of ['node', 'zone', 'any'] as Spread[]) {
      for (const [i, uid] of uids.entries()) {
        const p = place(`n${(i % 4) + 1}`);
        const a = assign(fleet, uid, p, spread);
        const v = vantagesOf(fleet, uid, p, spread, 3);
        assert.deepEqual(a, { kind: 'owner', identity: v[0] }, `${spread} ${uid}`);
        assert.equal(new Set(v).size, v.length, 'distinct replicas');
        assert.equal(v.length, 3);
      }
    }
  });

  void it('never a replica on the pod\'s own node (spread node), and count 2 within count 3 (stable prefix)', () => {
    for (const [i, uid] of uids.entries()) {
      const node = `n${(i % 4) + 1}`;
      const three = vantagesOf(fleet, uid, place(node), 'node', 3);
      for (const id of three) assert.notEqual(byId.get(id)?.node, node);
      assert.deepEqual(vantagesOf(fleet, uid, place(node), 'node', 2), three.slice(0, 2));
    }
  });

  void it('spread zone: one vantage per zone first (the other zone, then another node of the pod\'s own zone), never its node', () => {
    for (const [i, uid] of uids.entries()) {
      const node = `n${(i % 4) + 1}`;
      const v = vantagesOf(fleet, uid, place(node), 'zone', 3);
      const zones = v.map((id) => byId.get(id)?.zone);
      const other = zoneOf[node] === 'a' ? 'b' : 'a';
      // count 2 across two zones: one in each; the third is the other zone's second replica.
      assert.deepEqual(zones, [other, zoneOf[node], other], `${uid} on ${node}: ${v.join(',')}`);
      assert.deepEqual(vantagesOf(fleet, uid, place(node), 'zone', 2), v.slice(0, 2));
      for (const id of v) assert.notEqual(byId.get(id)?.node, node);
    }
  });

  void it('only as many vantages as there are eligible replicas: none on one node, none for a lone co-located replica', () => {
    const two: VantageMember[] = [fleet[0]!, fleet[1]!];
    assert.deepEqual(vantagesOf(two, uids[0]!, place('n1'), 'node', 3), ['r2']);
    assert.deepEqual(vantagesOf([fleet[0]!], uids[0]!, place('n1'), 'node', 2), []);
    assert.equal(vantagesOf(two, uids[0]!, place('n1'), 'any', 3).length, 2);
    // Unknown vantage only where no known member would do.
    const withUnknown: VantageMember[] = [fleet[0]!, { identity: 'old', node: undefined, zone: undefined }];
    assert.deepEqual(vantagesOf(withUnknown, uids[0]!, place('n3'), 'node', 2), ['r1']);
    assert.deepEqual(vantagesOf(withUnknown, uids[0]!, place('n1'), 'node', 2), ['old']);
  });

  void it('is stable: a replica that leaves moves only the vantages it held; one that joins takes only the slots it now wins', () => {
    const without = fleet.filter((m) => m.identity !== 'r4');
    let moved = 0;
    for (const [i, uid] of uids.entries()) {
      const p = place(`n${(i % 3) + 1}`);
      const before = vantagesOf(fleet, uid, p, 'node', 2);
      const after = vantagesOf(without, uid, p, 'node', 2);
      if (!before.includes('r4')) assert.deepEqual(after, before, uid);
      else {
        moved++;
        // The vantage that stays keeps its rank order; the new one is the next eligible.
        assert.deepEqual(after.filter((id) => before.includes(id)), before.filter((id) => id !== 'r4'));
      }
    }
    // r4 is eligible for every pod here (pods on n1..n3) and holds 2 of its 3 eligible slots' worth: about two thirds.
    assert.ok(moved > uids.length * 0.6 && moved < uids.length * 0.73, `about two thirds of the pods had r4 among their two vantages: ${moved}`);
  });

  void it('VantageOwnership: vantages of a pod under its spread, owner first; none for a pod without a vantage', () => {
    const o = new VantageOwnership({ spreadOf: () => 'node', zoneOf: (n) => zoneOf[n] });
    o.setMembers(fleet.map((m) => m.identity), fleet.map((m) => ({ identity: m.identity, nodeName: m.node ?? '' })));
    const pod = { uid: uids[7], namespace: 'ns', name: 'p', nodeName: 'n2' } as unknown as Pod;
    const v = o.vantages(pod, 2);
    assert.equal(v.length, 2);
    assert.equal(v[0], o.responsible(pod));
    assert.ok(!v.some((id) => byId.get(id)?.node === 'n2'));
    const lone = new VantageOwnership({ spreadOf: () => 'node', zoneOf: (n) => zoneOf[n] });
    lone.setMembers(['r2'], [{ identity: 'r2', nodeName: 'n2' }]);
    assert.deepEqual(lone.vantages(pod, 2), []);
  });
});

void describe('several vantages per pod: the combined verdict (ADR 0058)', () => {
  const F: Verdict = 'failure';
  const S: Verdict = 'success';
  const U: Verdict = undefined;
  const table: [string, readonly Verdict[], Verdict, Verdict, Verdict][] = [
    // verdicts, quorum, all, any
    ['one vantage failing', [F], F, F, F],
    ['one of two failing', [F, S], S, S, F],
    ['two of two failing', [F, F], F, F, F],
    ['one failing, one silent (abstains)', [F, U], F, F, F],
    ['two of three failing', [F, F, S], F, S, F],
    ['one of three failing', [S, F, S], S, S, F],
    ['three of three failing', [F, F, F], F, F, F],
    ['every one succeeding', [S, S, S], S, S, S],
    ['no verdict at all', [U, U], U, U, U],
  ];
  for (const [name, verdicts, quorum, all, any] of table) {
    void it(name, () => {
      assert.equal(combine('quorum', verdicts), quorum, 'quorum');
      assert.equal(combine('all', verdicts), all, 'all');
      assert.equal(combine('any', verdicts), any, 'any');
    });
  }
});
