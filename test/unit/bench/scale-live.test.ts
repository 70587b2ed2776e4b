// The pure parts of bench/scale-live (`bench:scale`): metric accounting
// across series removal, histogram bounds, probe alignment, /proc socket
// matching, the pod watch's gate bookkeeping, options and fixtures, and the
// detection figures.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { busiestWindowShare, firstProbes, timesOf } from '../../../bench/scale-live/arrivals.ts';
import { detectionFigures, failCount, firstVerdict, quantiles, spreadPick, valueAt } from '../../../bench/scale-live/detection.ts';
import { conditionType, podObject, podRef, policyObject } from '../../../bench/scale-live/fixtures.ts';
import { GateTracker } from '../../../bench/scale-live/gates.ts';
import type { PodLike } from '../../../bench/scale-live/gates.ts';
import { probeGaps, unhealthySummary, unhealthyTimeline } from '../../../bench/scale-live/failures.ts';
import { netstatIncrease, netstatNames, parseProcNet, readNetstat } from '../../../bench/scale-live/netstat.ts';
import { liveBenchOptions } from '../../../bench/scale-live/options.ts';
import { bucketIncrease, CounterAccumulator, increase, parseMetrics, summarize } from '../../../bench/scale-live/prom.ts';
import { apiserverSeries, cpuWaitSeconds, gaugeSum } from '../../../bench/scale-live/sampler.ts';
import { establishedTo, procAddress } from '../../../bench/scale-live/sockets.ts';

describe('bench/scale-live prom', () => {
  it('parses samples with labels, escapes and +Inf, skipping comments', () => {
    const s = parseMetrics('# HELP x y\n# TYPE x counter\nx{a="1",b="q\\"t"} 3\ny 4.5\nh_bucket{le="+Inf"} 7\n');
    assert.deepEqual(s, [
      { name: 'x', labels: { a: '1', b: 'q"t' }, value: 3 },
      { name: 'y', labels: {}, value: 4.5 },
      { name: 'h_bucket', labels: { le: '+Inf' }, value: 7 },
    ]);
  });

  it('keeps the increase of a series that disappears and counts a reappearing one from 0', () => {
    const acc = new CounterAccumulator();
    acc.add(parseMetrics('p{policy="a"} 10\np{policy="b"} 5\n'));
    const start = acc.snapshot();
    acc.add(parseMetrics('p{policy="a"} 15\np{policy="b"} 9\n'));
    acc.add(parseMetrics('p{policy="b"} 12\n')); // policy a deleted: its series is gone
    acc.add(parseMetrics('p{policy="a"} 2\np{policy="b"} 12\n')); // a recreated: starts from 0
    const end = acc.snapshot();
    assert.equal(increase(start, end, 'p'), 5 + 2 + 7);
    assert.equal(increase(start, end, 'p', { policy: 'b' }), 7);
    assert.equal(increase(undefined, end, 'p'), 10 + 5 + 14);
  });

  it('summarizes a histogram increase to bucket bounds', () => {
    const acc = new CounterAccumulator();
    const h = (c: [number, number, number, number]): string => `d_bucket{le="0.01"} ${c[0]}\nd_bucket{le="0.1"} ${c[1]}\nd_bucket{le="1"} ${c[2]}\nd_bucket{le="+Inf"} ${c[3]}\n`;
    acc.add(parseMetrics(h([100, 100, 100, 100])));
    const from = acc.snapshot();
    acc.add(parseMetrics(h([1090, 1098, 1100, 1100]))); // 1000 new: 990 ≤ 0.01, 8 ≤ 0.1, 2 ≤ 1
    const b = bucketIncrease(from, acc.snapshot(), 'd');
    assert.deepEqual(b, [[0.01, 990], [0.1, 998], [1, 1000], [Infinity, 1000]]);
    const s = summarize(b);
    assert.equal(s.count, 1000);
    assert.equal(s.p50, 0.01);
    assert.equal(s.p99, 0.01);
    assert.equal(s.maxBound, 1);
    assert.equal(s.maxAtLeast, 0.1);
    assert.equal(summarize(bucketIncrease(from, from, 'd')).p99, null);
  });
});

describe('bench/scale-live arrivals', () => {
  it('an even spread puts window/period of the probes in the busiest window; aligned probes put all of them', () => {
    const even = Array.from({ length: 1000 }, (_, i) => 1_000 + i * 10); // 10 s period, one probe each 10 ms
    assert.ok(Math.abs((busiestWindowShare(even, 1_000, 10_000, 2000) ?? 0) - 0.2) < 0.01);
    const aligned = Array.from({ length: 1000 }, (_, i) => 5_000 + (i % 50));
    assert.equal(busiestWindowShare(aligned, 1_000, 10_000, 2000), 1);
    assert.equal(busiestWindowShare([], 0, 10_000, 2000), null);
  });

  it('first probes after a moment, per pod', () => {
    const byIp = new Map([['a', [50, 120, 220]], ['b', [90, 190]], ['c', [10]]]);
    assert.deepEqual(firstProbes(byIp, 100), { pods: 2, firstMs: 20, p50Ms: 90, lastMs: 90 });
    assert.deepEqual(timesOf(byIp, new Set(['b', 'c'])).sort((x, y) => x - y), [10, 90, 190]);
  });
});

describe('bench/scale-live sockets', () => {
  it('matches ESTABLISHED rows to the API server in /proc/net/tcp', () => {
    assert.equal(procAddress('127.0.0.1', 6443), '0100007F:192B');
    const table = [
      '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
      '   0: 0100007F:C350 0100007F:192B 01 00000000:00000000 00:00000000 00000000     0        0 111 1 0 20 4 30 10 -1',
      '   1: 0100007F:C351 0100007F:192B 06 00000000:00000000 00:00000000 00000000     0        0 0 1 0 20 4 30 10 -1',
      '   2: 0100007F:C352 0200007F:192B 01 00000000:00000000 00:00000000 00000000     0        0 222 1 0 20 4 30 10 -1',
      '   3: 0100007F:C353 0100007F:192B 01 00000000:00000000 00:00000000 00000000     0        0 333 1 0 20 4 30 10 -1',
    ].join('\n');
    assert.deepEqual([...establishedTo(table, procAddress('127.0.0.1', 6443))], [111, 333]);
  });
});

function pod(name: string, uid: string, gate: string | undefined, ltt = 't0'): PodLike {
  return {
    metadata: { namespace: 'ns', name, uid },
    status: { phase: 'Running', podIP: `127.9.0.${name.length}`, conditions: gate === undefined ? [] : [{ type: conditionType, status: gate, lastTransitionTime: ltt }] },
  };
}

describe('bench/scale-live gates', () => {
  it('counts Running pods, True gates, gate changes and False flips of the same pod only', () => {
    const t = new GateTracker(conditionType);
    t.apply('ADDED', pod('a', 'u1', undefined));
    t.apply('ADDED', pod('bb', 'u2', undefined));
    assert.equal(t.running, 2);
    t.apply('MODIFIED', pod('a', 'u1', 'True'));
    t.apply('MODIFIED', pod('a', 'u1', 'True')); // unchanged condition: no write
    t.apply('MODIFIED', pod('bb', 'u2', 'True'));
    assert.equal(t.gateTrue, 2);
    assert.equal(t.gateChanges, 2);
    assert.equal(t.falseFlips, 0);
    t.apply('MODIFIED', pod('a', 'u1', 'False', 't1'));
    assert.equal(t.falseFlips, 1);
    assert.equal(t.gateTrue, 1);
    t.apply('MODIFIED', pod('bb', 'u3', undefined)); // a new pod of the same name (its DELETED missed, e.g. across a relist) is no flip
    assert.equal(t.falseFlips, 1);
    assert.equal(t.gateTrue, 0);
    t.retainOnly(new Set(['ns/a']));
    assert.equal(t.pods, 1);
    assert.deepEqual([...t.ips()], ['127.9.0.1']);
  });
});

describe('bench/scale-live gates: wanted flips and False times', () => {
  it('a pod the benchmark made fail flips without counting as false; each turn to False is timed once', () => {
    const t = new GateTracker(conditionType);
    t.apply('ADDED', pod('a', 'u1', 'True'));
    t.apply('ADDED', pod('bb', 'u2', 'True'));
    assert.deepEqual(t.trueKeys().sort(), ['ns/a', 'ns/bb']);
    assert.equal(t.ipOf('ns/a'), '127.9.0.1');
    t.failing.add('ns/a');
    t.apply('MODIFIED', pod('a', 'u1', 'False', 't1'));
    t.apply('MODIFIED', pod('a', 'u1', 'False', 't1')); // still False: not a new time
    assert.equal(t.falseFlips, 0);
    assert.equal(t.wantedFlips, 1);
    assert.equal(t.falseSeen.get('ns/a')?.length, 1);
    assert.equal(t.gateOf('ns/a'), 'False');
    t.apply('MODIFIED', pod('bb', 'u2', 'False', 't2'));
    assert.equal(t.falseFlips, 1);
    t.apply('MODIFIED', pod('a', 'u1', 'True', 't3'));
    t.apply('MODIFIED', pod('a', 'u1', 'False', 't4'));
    assert.equal(t.falseSeen.get('ns/a')?.length, 2);
  });
});

describe('bench/scale-live detection figures', () => {
  it('picks 1 % of the pods spread evenly, at least one', () => {
    assert.equal(failCount(10_000, 1), 100);
    assert.equal(failCount(50, 1), 1);
    assert.equal(failCount(50, 0), 0);
    assert.deepEqual(spreadPick(10, 3), [0, 3, 6]);
    assert.equal(new Set(spreadPick(1000, 10)).size, 10);
    assert.deepEqual(spreadPick(2, 5), [0, 1]);
  });

  it('nearest-rank quantiles in seconds', () => {
    const q = quantiles(Array.from({ length: 100 }, (_, i) => (i + 1) * 10));
    assert.deepEqual(q, { n: 100, p50_s: 0.5, p99_s: 0.99, max_s: 1 });
    assert.deepEqual(quantiles([]), { n: 0, p50_s: null, p99_s: null, max_s: null });
  });

  it('detection from the failure, verdict-to-write from the earliest verdict of any replica before the False was seen', () => {
    const failAt = 1000;
    const seen = new Map([['ns/a', [500, 21_000]], ['ns/b', [26_000]], ['ns/c', []]]);
    const replica0 = new Map([['ns/a', [20_800]], ['ns/b', [27_000]]]); // b's verdict is after its False: not its write
    const replica1 = new Map([['ns/a', [20_500]]]);
    assert.equal(firstVerdict([replica0, replica1], 'ns/a', failAt), 20_500);
    const f = detectionFigures(['ns/a', 'ns/b', 'ns/c'], failAt, seen, [replica0, replica1]);
    assert.equal(f.pods_failed, 3);
    assert.equal(f.gates_false_seen, 2);
    assert.deepEqual(f.detection, { n: 2, p50_s: 20, p99_s: 25, max_s: 25 });
    assert.deepEqual(f.verdict_to_write, { n: 1, p50_s: 0.5, p99_s: 0.5, max_s: 0.5 });
    assert.equal(f.verdicts_logged, 2);
    assert.equal(f.verdict_to_written, null, 'without the write log lines: null, not zeros');
  });

  it('verdict-to-written from the verdict to the first False write any replica logged at or after it', () => {
    const failAt = 1000;
    const seen = new Map([['ns/a', [21_000]], ['ns/b', [26_000]]]);
    const verdicts = [new Map([['ns/a', [20_500]], ['ns/b', [25_000]]])];
    // a: an older write (before the verdict) is not this verdict's; b's write was logged by the other replica.
    const written = [new Map([['ns/a', [900, 20_800]]]), new Map([['ns/b', [25_400]]])];
    const f = detectionFigures(['ns/a', 'ns/b'], failAt, seen, verdicts, written);
    assert.deepEqual(f.verdict_to_written, { n: 2, p50_s: 0.3, p99_s: 0.4, max_s: 0.4 });
    assert.deepEqual(f.verdict_to_write, { n: 2, p50_s: 0.5, p99_s: 1, max_s: 1 });
  });

  it('a sampled series\' value at a moment is the last sample at or before it', () => {
    const s: [number, number][] = [[10, 5], [20, 7], [30, 9]];
    assert.equal(valueAt(s, 5), 5);
    assert.equal(valueAt(s, 20), 7);
    assert.equal(valueAt(s, 29), 7);
    assert.equal(valueAt(s, 99), 9);
    assert.equal(valueAt([], 1), undefined);
  });

  it('keeps kube-apiserver\'s gate-write, Event and etcd pod latency sums and counts', () => {
    const m = apiserverSeries(parseMetrics([
      'apiserver_request_duration_seconds_sum{component="apiserver",resource="pods",subresource="status",verb="PATCH",version="v1"} 12.5',
      'apiserver_request_duration_seconds_count{component="apiserver",resource="pods",subresource="status",verb="PATCH",version="v1"} 100',
      'apiserver_request_duration_seconds_sum{resource="pods",subresource="",verb="PATCH"} 99',
      'apiserver_request_duration_seconds_count{resource="events",subresource="",verb="POST"} 7',
      'etcd_request_duration_seconds_sum{operation="update",type="/registry/pods"} 1.5',
      'etcd_request_duration_seconds_sum{operation="update",type="/registry/leases"} 3',
    ].join('\n')));
    assert.equal(m.get('patch_pod_status_sum'), 12.5);
    assert.equal(m.get('patch_pod_status_count'), 100);
    assert.equal(m.get('post_events_count'), 7);
    assert.equal(m.get('etcd_pods_update_sum'), 1.5);
    assert.equal(m.size, 4);
    assert.ok(cpuWaitSeconds(process.pid) >= 0);
    assert.equal(cpuWaitSeconds(-1), 0);
  });

  it('sums a gauge over the series that match', () => {
    const samples = parseMetrics('outprobe_gate_write_queue{urgency="initial"} 7\noutprobe_gate_write_queue{urgency="false"} 2\nnodejs_heap_size_used_bytes 1e6\n');
    assert.equal(gaugeSum(samples, 'outprobe_gate_write_queue', { urgency: 'initial' }), 7);
    assert.equal(gaugeSum(samples, 'outprobe_gate_write_queue'), 9);
    assert.equal(gaugeSum(samples, 'nodejs_heap_size_used_bytes'), 1e6);
  });
});

describe('bench/scale-live options and fixtures', () => {
  it('defaults, flags in both forms, and refusals', () => {
    const d = liveBenchOptions([]);
    assert.equal(d.pods, 1000);
    assert.equal(d.policies, 5);
    assert.equal(d.namespaces, 5);
    assert.equal(d.periodMs, 10_000);
    assert.equal(d.podServerNice, -10); // the pods' side answers first: it is not what is measured
    assert.equal(liveBenchOptions(['--pod-server-nice', '10']).podServerNice, 10);
    assert.throws(() => liveBenchOptions(['--pod-server-nice', '-21']), /≥ -20/);
    assert.equal(d.replicaMemoryLimitMb, undefined); // no cgroup unless asked
    assert.equal(liveBenchOptions(['--replica-memory-limit-mb', '512']).replicaMemoryLimitMb, 512);
    assert.throws(() => liveBenchOptions(['--replica-memory-limit-mb', '32']), /≥ 64/);
    assert.throws(() => liveBenchOptions(['--replica-memory-limit-mb', '1g']), /integer/);
    const o = liveBenchOptions(['--pods', '20000', '--policies=50', '--controller-args', '--kube-api-qps 200']);
    assert.equal(o.pods, 20_000);
    assert.equal(o.namespaces, 10);
    assert.deepEqual(o.controllerArgs, ['--kube-api-qps', '200']);
    assert.throws(() => liveBenchOptions(['--podz', '1']), /unknown flag --podz/);
    assert.throws(() => liveBenchOptions(['--period-ms', '1500']), /whole seconds/);
    assert.equal(liveBenchOptions(['--pods', '100000', '--replicas', '3']).replicas, 3); // nodes past 250 get more loopback /16s
    assert.throws(() => liveBenchOptions(['--pods', '500001']), /more than 2,000 nodes/);
    assert.equal(d.replicas, 1);
    assert.equal(d.failPercent, 1);
    assert.equal(d.detectTimeoutS, 120);
    assert.equal(d.failureThreshold, undefined);
    assert.equal(d.urgencyQueued, 0);
    assert.throws(() => liveBenchOptions(['--probe', 'tcp']), /need --probe http/); // a TCP probe cannot be made to fail by the pod server
    assert.equal(liveBenchOptions(['--probe', 'tcp', '--fail-percent', '0']).failPercent, 0);
    assert.throws(() => liveBenchOptions(['--urgency-queued', '10000', '--fail-percent', '0']), /needs --fail-percent/);
    assert.equal(d.writeCeiling, 64); // issue 31 item 4: the ceiling runs before the replicas in every run, as many in flight as a replica's gate writes
    assert.equal(d.ceilingOnly, false);
    assert.equal(liveBenchOptions(['--write-ceiling', '0']).writeCeiling, 0);
    assert.equal(liveBenchOptions(['--write-ceiling', '32', '--ceiling-only']).ceilingOnly, true);
    assert.throws(() => liveBenchOptions(['--write-ceiling', '0', '--ceiling-only']), /needs --write-ceiling/);
    assert.equal(d.podStatus, 'bench'); // issue 31 item 5: the driver runs the pods, not kwok
    assert.equal(liveBenchOptions(['--pod-status', 'kwok']).podStatus, 'kwok');
    assert.throws(() => liveBenchOptions(['--pod-status', 'kubelet']), /bench or kwok/);
    assert.throws(() => liveBenchOptions(['--write-ceiling', 'many']), /integer/);
    const policy = policyObject(liveBenchOptions(['--failure-threshold', '1']), 'r', 0) as { spec: { readiness: { probe: Record<string, unknown> } } };
    assert.equal(policy.spec.readiness.probe['failureThreshold'], 1);
    assert.equal((policyObject(d, 'r', 0) as typeof policy).spec.readiness.probe['failureThreshold'], undefined);
  });

  it('pod i is gated, on node i / podsPerNode, and selected by exactly policy i mod P in that policy\'s namespace', () => {
    const o = liveBenchOptions(['--pods', '1000', '--policies', '50']);
    const p = podObject(o, 'r', 123, 8080) as { metadata: { namespace: string; labels: Record<string, string> }; spec: { nodeName: string; readinessGates: unknown[] } };
    const pol = policyObject(o, 'r', 123 % 50) as { metadata: { namespace: string }; spec: { selector: { matchLabels: Record<string, string> } } };
    assert.equal(p.spec.nodeName, 'kwok-node-0');
    assert.deepEqual(p.spec.readinessGates, [{ conditionType }]);
    assert.equal(p.metadata.namespace, pol.metadata.namespace);
    for (const [k, v] of Object.entries(pol.spec.selector.matchLabels)) assert.equal(p.metadata.labels[k], v);
    assert.equal(podRef(o, 'r', 123).policy, 23);
    assert.notEqual(podRef(o, 'r', 124).policy, 23);
  });
});

describe('bench/scale-live failure causes', () => {
  it('reads the TCP counters from /proc/net/netstat and /proc/net/snmp line pairs', () => {
    const m = parseProcNet('TcpExt: SyncookiesSent ListenOverflows ListenDrops\nTcpExt: 0 386 390\nIpExt: InNoRoutes\nIpExt: 4\n');
    assert.equal(m.get('TcpExt:ListenOverflows'), 386);
    assert.equal(m.get('TcpExt:ListenDrops'), 390);
    assert.equal(m.get('IpExt:InNoRoutes'), 4);
    const now = readNetstat();
    for (const n of netstatNames) assert.equal(typeof now[n], 'number');
    assert.equal(netstatIncrease(now, { ...now, ListenOverflows: now.ListenOverflows + 3 }).ListenOverflows, 3);
  });

  it('groups Unhealthy Events by message with pod addresses masked, summing counts, with first and last times', () => {
    const since = Date.parse('2026-11-25T14:00:00Z');
    const ev = (ip: string, count: number, first: string, last: string): Record<string, unknown> => ({
      message: `Readiness probe failed: Get "http://${ip}:31000/healthz": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`,
      count, firstTimestamp: first, lastTimestamp: last,
    });
    const s = unhealthySummary([
      ev('127.21.0.5', 2, '2026-11-25T14:00:10Z', '2026-11-25T14:00:20Z'),
      ev('127.21.3.9', 1, '2026-11-25T14:00:05Z', '2026-11-25T14:00:05Z'),
      { message: 'Readiness probe failed: dial tcp 127.21.0.7:31000: connect: connection refused', series: { count: 4, lastObservedTime: '2026-11-25T14:01:00Z' }, eventTime: '2026-11-25T14:00:30Z' },
    ], since);
    assert.deepEqual(s, [
      { message: 'Readiness probe failed: dial tcp <pod>: connect: connection refused', count: 4, first_s: 30, last_s: 60 },
      { message: 'Readiness probe failed: Get "http://<pod>/healthz": context deadline exceeded (Client.Timeout exceeded while awaiting headers)', count: 3, first_s: 5, last_s: 20 },
    ]);
  });

  it('bins failed attempts by the 10 s after the controller started in which their Event was first seen', () => {
    const since = Date.parse('2026-11-25T14:00:00Z');
    assert.deepEqual(unhealthyTimeline([
      { firstTimestamp: '2026-11-25T14:00:05Z', count: 2 },
      { firstTimestamp: '2026-11-25T14:00:09Z' },
      { eventTime: '2026-11-25T14:00:31.5Z', series: { count: 3 } },
      { message: 'no time' },
    ], since), { 0: 3, 30: 3 });
  });

  it('measures the gaps between one pod\'s probes inside the window, from the pods\' side', () => {
    const byIp = new Map([['a', [0, 10_000, 20_000, 30_000]], ['b', [5_000, 27_000, 30_000, 99_000]]]);
    const g = probeGaps(byIp, 0, 40_000);
    assert.equal(g.gaps, 5); // a: 3 gaps of 10 s; b: 22 s (a late pass) and 3 s (99 s is outside)
    assert.equal(g.p50_s, 10);
    assert.equal(g.max_s, 22);
    assert.deepEqual(probeGaps(new Map(), 0, 1), { gaps: 0, p50_s: null, p99_s: null, max_s: null });
  });
});
