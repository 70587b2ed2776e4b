import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { unownedCount } from '../../../src/sharding/index.ts';
import type { Pod } from '../../../src/kube/index.ts';

const pod = (name: string, phase: Pod['phase'] = 'Running', app = 'web'): Pod => ({ name, phase, labels: { app } }) as unknown as Pod;
const pods = [pod('web-0'), pod('web-1'), pod('done', 'Succeeded'), pod('other-0', 'Running', 'other')];
const selected = (p: Pod): boolean => p.labels['app'] === 'web';

describe('unownedCount (outprobe_unowned_pods)', () => {
  it('no live member anywhere: the running pods a policy selects', () => {
    assert.equal(unownedCount({ members: [], livePeers: 0, pods, selected }), 2);
    assert.equal(unownedCount({ members: undefined, livePeers: 0, pods }), 3, 'without a selector every running pod counts');
  });

  it('a member sees every pod owned', () => {
    assert.equal(unownedCount({ members: ['r1', 'r2'], livePeers: 1, pods, selected }), 0);
  });

  it('a replica not joined (or standing down, or unproven) while live peers own the pods: 0, not every pod', () => {
    // Seen in the self-partition e2e: a replica whose pod was not Ready reported 34 (every pod of the namespaces, replicas included).
    assert.equal(unownedCount({ members: undefined, livePeers: 2, pods, selected }), 0);
    assert.equal(unownedCount({ members: [], livePeers: 1, pods, selected }), 0);
  });
});
