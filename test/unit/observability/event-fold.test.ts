import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FoldLedger, foldMessage } from '../../../src/observability/index.ts';
import type { InvolvedObject } from '../../../src/observability/index.ts';

const t0 = 1_700_000_000_000;
const policy = (name: string): InvolvedObject => ({ kind: 'ProbePolicy', apiVersion: 'outprobe.io/v1alpha1', namespace: 'shop', name, uid: `p-${name}` });
const fold = (name: string): { into: InvolvedObject; reason: string; what: string } => ({ into: policy(name), reason: 'ReadinessGateChangesFolded', what: 'gate changes' });
const pod = (i: number): { kind: string; uid: string } => ({ kind: 'Pod', uid: `u-${i}` });

describe('FoldLedger', () => {
  it('counts events and distinct objects per policy, and gives the summary once its interval has passed', () => {
    const l = new FoldLedger();
    for (let i = 0; i < 30; i++) l.add(fold('web'), pod(i % 20), t0 + i);
    l.add(fold('api'), pod(99), t0 + 10_000);
    assert.equal(l.nextDueMs(30_000), t0 + 30_000);
    assert.deepEqual(l.take(t0 + 29_999, 30_000), []);
    const [web, ...rest] = l.take(t0 + 30_000, 30_000);
    assert.equal(rest.length, 0);
    assert.equal(web?.count, 30);
    assert.equal(web.objects, 20);
    assert.equal(web.message, '30 gate changes on 20 pods were not sent as Events in the last 30s (outprobe\'s Event rate limit); each pod\'s own status shows its current state');
    assert.equal(l.nextDueMs(30_000), t0 + 40_000);
    assert.equal(l.take(t0 + 30_001, 0).length, 1, 'interval 0 takes everything open');
    assert.equal(l.open, 0);
    assert.equal(l.nextDueMs(30_000), undefined);
  });

  it('writes one pod in the singular', () => {
    assert.match(foldMessage({ count: 2, objects: 1, what: 'gate changes', kind: 'Pod', seconds: 5 }), /^2 gate changes on 1 pod were not sent as Events in the last 5s/);
  });
});
