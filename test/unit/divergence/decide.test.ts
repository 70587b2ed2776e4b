import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decideDivergence, divergenceMessage } from '../../../src/divergence/index.ts';
import type { NodeView, OutsideView } from '../../../src/divergence/index.ts';

const now = 1_700_000_000_000;
const period = 5_000;
const node = (status: NodeView['status'], agoMs?: number): NodeView => ({ status, since: agoMs === undefined ? undefined : now - agoMs });
const decide = (outside: OutsideView, n: NodeView | undefined): boolean => decideDivergence({ outside, node: n, periodMs: period, now }).diverged;

describe('decideDivergence: both views known, stable and opposite', () => {
  it('ready to the node, failing from outprobe: diverged (node says ready)', () => {
    assert.deepEqual(decideDivergence({ outside: 'failure', node: node('True', 60_000), periodMs: period, now }), { diverged: true, node: 'ready' });
  });

  it('not ready to the node, succeeding from outprobe: diverged (node says unready)', () => {
    assert.deepEqual(decideDivergence({ outside: 'success', node: node('False', 60_000), periodMs: period, now }), { diverged: true, node: 'unready' });
  });

  it('agreeing views are not diverged', () => {
    assert.equal(decide('success', node('True', 60_000)), false);
    assert.equal(decide('failure', node('False', 60_000)), false);
  });

  it('an unconfirmed outprobe result (thresholds not met) is not diverged', () => {
    assert.equal(decide(null, node('True', 60_000)), false);
    assert.equal(decide(null, node('False', 60_000)), false);
  });

  it('no ContainersReady, or Unknown, is not diverged', () => {
    assert.equal(decide('failure', undefined), false);
    assert.equal(decide('failure', node('Unknown', 60_000)), false);
  });

  it('ContainersReady must have held its status for one probe period (a starting pod is not diverged)', () => {
    assert.equal(decide('failure', node('True', period - 1)), false);
    assert.equal(decide('failure', node('True', period)), true);
    assert.equal(decide('success', node('False', 0)), false);
    assert.equal(decide('failure', node('True', -10_000)), false, 'a transition time in the future (clock skew) is not stable yet');
  });

  it('a condition without lastTransitionTime counts as stable', () => {
    assert.equal(decide('failure', node('True')), true);
  });
});

describe('divergenceMessage', () => {
  it('names both views, the policy, container and replica, and the probe output', () => {
    assert.equal(
      divergenceMessage({ node: 'ready', policy: 'web', container: 'app', replica: 'outprobe-0', output: 'HTTP probe failed with statuscode: 503' }),
      "ProbePolicy web, container app: node says ready (ContainersReady=True), outprobe's readiness probe fails from replica outprobe-0: HTTP probe failed with statuscode: 503",
    );
    assert.equal(
      divergenceMessage({ node: 'unready', nodeReason: 'ContainersNotReady', policy: 'web', container: 'app', replica: 'r1', output: '' }),
      "ProbePolicy web, container app: node says not ready (ContainersReady=False, ContainersNotReady), outprobe's readiness probe succeeds from replica r1",
    );
  });
});
