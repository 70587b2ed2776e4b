// bench:scale's pods brought to Running by the driver (issue 31 item 5) and
// the write-ceiling phase's reset (item 4): addresses, the status kwok's
// stages would leave, the label kwok disregards, and the watch's counts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { conditionType, podObject } from '../../../bench/scale-live/fixtures.ts';
import { GateTracker } from '../../../bench/scale-live/gates.ts';
import type { PodLike } from '../../../bench/scale-live/gates.ts';
import { liveBenchOptions } from '../../../bench/scale-live/options.ts';
import { summarizeProgress } from '../../../bench/scale-live/progress.ts';
import { conditionRemoval, podIpOf, runningStatus, statusLabel, statusLabelValue } from '../../../bench/scale-live/pod-status.ts';

describe('bench/scale-live pod addresses', () => {
  it('gives pod i a distinct address inside its node\'s /24, on the network of node ⌊i / podsPerNode⌋', () => {
    const o = liveBenchOptions(['--pods', '100000']);
    const prefixes = ['127.5.', '127.9.'];
    assert.equal(podIpOf(o, prefixes, 0), '127.5.0.1');
    assert.equal(podIpOf(o, prefixes, 199), '127.5.0.200');
    assert.equal(podIpOf(o, prefixes, 200), '127.5.1.1'); // kwok-node-1, podCIDR 127.5.1.0/24
    assert.equal(podIpOf(o, prefixes, 249 * 200 + 7), '127.5.249.8');
    assert.equal(podIpOf(o, prefixes, 250 * 200), '127.9.0.1'); // kwok-node-250: the first node of the second network (plane.ts)
    const seen = new Set<string>();
    for (let i = 0; i < o.pods; i++) seen.add(podIpOf(o, prefixes, i));
    assert.equal(seen.size, o.pods);
    assert.throws(() => podIpOf(o, ['127.5.'], 250 * 200), /past the 1 pod network/);
    assert.equal(podIpOf({ podsPerNode: 250 }, prefixes, 250), '127.5.1.1');
  });
});

describe('bench/scale-live Running status written by the driver', () => {
  const created = { metadata: { uid: 'u-1' }, spec: { containers: [{ name: 'app', image: 'bench' }] } };
  const status = runningStatus(created, '127.5.3.4', new Date('2026-12-07T14:00:01.789Z'));

  it('is what kwok\'s two stages leave: Running, addressed, the container started and ready, Ready False for the gate', () => {
    assert.equal(status['phase'], 'Running');
    assert.equal(status['podIP'], '127.5.3.4');
    assert.deepEqual(status['podIPs'], [{ ip: '127.5.3.4' }]);
    assert.equal(status['hostIP'], '127.0.0.1'); // kwok's --node-ip
    assert.equal(status['hostIPs'], undefined); // kwok sets none (test/integration/bench-pod-status.test.ts)
    assert.equal(status['startTime'], '2026-12-07T14:00:01Z'); // the API's whole seconds
    assert.deepEqual(status['containerStatuses'], [{
      name: 'app', image: 'bench', imageID: 'kwok-image://bench', containerID: 'kwok://u-1-app-0', ready: true, restartCount: 0, started: true,
      state: { running: { startedAt: '2026-12-07T14:00:01Z' } },
    }]);
    const conds = status['conditions'] as { type: string; status: string; reason?: string }[];
    assert.deepEqual(conds.map((c) => [c.type, c.status]), [['Initialized', 'True'], ['Ready', 'False'], ['ContainersReady', 'True']]);
    assert.equal(conds.find((c) => c.type === 'Ready')?.reason, 'ReadinessGatesNotReady');
    assert.equal(conds.some((c) => c.type === conditionType), false); // the gate is outprobe's to write
  });

  it('makes the driver\'s watch count the pod Running with its address', () => {
    const t = new GateTracker(conditionType);
    t.apply('ADDED', { metadata: { namespace: 'n', name: 'p', uid: 'u-1' }, status: { phase: 'Pending' } });
    assert.equal(t.running, 0);
    t.apply('MODIFIED', { metadata: { namespace: 'n', name: 'p', uid: 'u-1' }, status });
    assert.equal(t.running, 1);
    assert.equal(t.ipOf('n/p'), '127.5.3.4');
  });

  it('labels the pods kwok is told to disregard only when the driver runs them', () => {
    const labels = (podStatus: 'bench' | 'kwok'): Record<string, string> =>
      (podObject(liveBenchOptions(['--pod-status', podStatus]), 'r', 1, 80) as { metadata: { labels: Record<string, string> } }).metadata.labels;
    assert.equal(labels('bench')[statusLabel], statusLabelValue);
    assert.equal(labels('kwok')[statusLabel], undefined);
  });
});

describe('bench/scale-live gate reset between the write ceiling and the convergence', () => {
  it('removes the one condition by its type', () => {
    assert.deepEqual(conditionRemoval(conditionType), { status: { conditions: [{ type: conditionType, $patch: 'delete' }] } });
  });

  it('counts pods carrying the gate, and starts change and flip counts over after the driver\'s own writes', () => {
    const t = new GateTracker(conditionType);
    const pod = (name: string, gate?: string): PodLike => ({
      metadata: { namespace: 'n', name, uid: name }, status: { phase: 'Running', podIP: '127.5.0.1', conditions: gate === undefined ? [] : [{ type: conditionType, status: gate, lastTransitionTime: 't' }] },
    });
    t.apply('ADDED', pod('a'));
    t.apply('ADDED', pod('b'));
    assert.equal(t.withGate, 0);
    t.apply('MODIFIED', pod('a', 'True')); // the ceiling's writes
    t.apply('MODIFIED', pod('b', 'True'));
    assert.equal(t.withGate, 2);
    assert.equal(t.gateTrue, 2);
    t.apply('MODIFIED', pod('a')); // the reset
    t.apply('MODIFIED', pod('b'));
    assert.equal(t.withGate, 0);
    assert.equal(t.gateTrue, 0);
    assert.equal(t.falseFlips, 2); // True → absent looks like a flip to the watch …
    t.resetCounts();
    assert.equal(t.falseFlips, 0); // … and is not outprobe's
    assert.deepEqual(t.falseFlipLog, []); // nor named as outprobe's
    assert.equal(t.gateChanges, 0);
    t.apply('MODIFIED', pod('a', 'True')); // the replicas' writes count from here
    assert.equal(t.gateChanges, 1);
    assert.equal(t.withGate, 1);
  });
});

describe('bench/scale-live progress of a phase that turns every gate True', () => {
  it('gives the first True, the 10/50/90 % and all marks, the pace between 10 % and 90 %, and a 5 s series', () => {
    // 100 gates: nothing for 4 s (a late start), then 10 a second.
    const points: [number, number][] = [];
    for (let t = 0; t <= 14_000; t += 500) points.push([t, Math.max(0, Math.min(100, Math.floor((t - 4000) / 100)))]);
    const p = summarizeProgress(points, 100);
    assert.equal(p.first_s, 4.5);
    assert.equal(p.p10_s, 5);
    assert.equal(p.p50_s, 9);
    assert.equal(p.p90_s, 13);
    assert.equal(p.all_s, 14);
    assert.equal(p.per_s_10_90, 10);
    assert.deepEqual(p.series, [[0, 0], [5, 10], [10, 60], [14, 100]]);
    assert.equal(summarizeProgress([[0, 0], [1000, 5]], 100).all_s, null); // never all True
    assert.equal(summarizeProgress([[0, 0], [1000, 100]], 100).per_s_10_90, null); // 10 % and 90 % in one sample: no pace
  });
});
