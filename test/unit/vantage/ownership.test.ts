import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Pod } from '../../../src/kube/index.ts';
import { owner } from '../../../src/sharding/index.ts';
import { VantageOwnership } from '../../../src/vantage/index.ts';

const pod = (uid: string): Pod => ({ uid, nodeName: 'n1' }) as Pod;
const places = [{ identity: 'a', nodeName: 'n1' }, { identity: 'b', nodeName: 'n2' }, { identity: 'c', nodeName: 'n3' }];

describe('vantage ownership across a membership change (ADR 0073)', () => {
  it('a change costs nothing per pod: each is assigned again when asked, its place kept meanwhile for the handover and the readiness cap', () => {
    let spreads = 0;
    const v = new VantageOwnership({ spreadOf: () => (spreads++, 'node'), zoneOf: () => null });
    v.setMembers(['a', 'b'], places);
    // Pods plain rendezvous would give to a, which runs on their node: b probes them.
    const uids = Array.from({ length: 200 }, (_, i) => `uid-${i}`).filter((u) => owner(['a', 'b'], u) === 'a');
    for (const u of uids) assert.equal(v.responsible(pod(u)), 'b');
    spreads = 0;
    assert.equal(v.setMembers(['a', 'b', 'c'], places), true);
    assert.equal(spreads, 0, 'nothing assigned at the change');
    // Not asked since the change: who was responsible among the old members still follows vantage rules.
    for (const u of uids) assert.equal(v.responsibleAmong(['a', 'b'], u), 'b', `${u}: its node is a's`);
    const first = uids[0] ?? '';
    assert.notEqual(v.responsible(pod(first)), 'a', 'assigned again under the new members when asked');
    v.sweep();
    // Only the pod asked about since the change is kept; the others count as gone (plain rendezvous for an unknown pod).
    assert.equal(v.responsibleAmong(['a', 'b'], first), 'b');
    assert.equal(v.responsibleAmong(['a', 'b'], uids[1] ?? ''), 'a');
  });
});
