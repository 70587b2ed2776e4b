import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { after, before, describe, it } from 'node:test';
import { reporter } from '../../../src/controller/index.ts';
import type { ControllerEvent } from '../../../src/controller/index.ts';
import type { PolicyEntry } from '../../../src/controller/policies.ts';
import type { Probers } from '../../../src/controller/runner.ts';
import { TargetSet } from '../../../src/controller/target-set.ts';
import { systemClock } from '../../../src/kernel/index.ts';
import type { Pod } from '../../../src/kube/index.ts';
import { Metrics } from '../../../src/observability/index.ts';
import type { EventRecorder, Logger } from '../../../src/observability/index.ts';
import type { ProbePolicy } from '../../../src/policy/index.ts';
import { EventLoopMonitor, Scheduler, createGrpcProber, createHttpProber, tcpProbe } from '../../../src/probing/index.ts';
import { AddressGuard } from '../../../src/targets/index.ts';
import { GateWriter } from '../../../src/writeback/index.ts';
import type { GatePatchResult } from '../../../src/writeback/index.ts';
import { httpServer } from '../../support/loopback.ts';
import type { Listening } from '../../support/loopback.ts';

/**
 * Issue 13's stall test, in process on loopback: 1,000 targets (500 pods ×
 * an httpGet readiness probe and a tcpSocket liveness probe) run by
 * outprobe's scheduler, executors and results stage with the stall guard;
 * the event loop is blocked for 3 s mid-run. Every probe in flight then has
 * its timeout timer fire before its reply is read (timers run first when the
 * loop resumes): without the guard those are failures. With it, none reaches
 * the state machine, and they are counted as voided.
 */
const gate = 'outprobe.io/web';
const pods = 500;
const servers = 4;
/** The servers answer after this long, so ~60 probes are always in flight. */
const replyDelayMs = 250;
const blockMs = 3_000;

function policy(): ProbePolicy {
  const timing = { initialDelaySeconds: 0, timeoutSeconds: 2, periodSeconds: 2, successThreshold: 1, failureThreshold: 1, terminationGracePeriodSeconds: null };
  return {
    metadata: { name: 'web', namespace: 'shop' },
    spec: {
      selector: { matchLabels: { app: 'web' }, matchExpressions: [] },
      mode: 'Enforce',
      readiness: { conditionType: gate, container: null, maxUnreadyPercent: 100, probe: { handler: { type: 'httpGet', path: '/healthz', port: 'http', scheme: 'HTTP', httpHeaders: [] }, ...timing } },
      liveness: { action: 'Evict', container: null, probe: { handler: { type: 'tcpSocket', port: 'http' }, ...timing } },
      startup: null,
      remediation: { maxUnavailable: 1, haltAbovePercentFailing: 50 },
    },
  };
}

function pod(i: number, port: number): Pod {
  return {
    uid: `uid-${i}`, namespace: 'shop', name: `web-${i}`, resourceVersion: '1', labels: { app: 'web' }, nodeName: 'n1', phase: 'Running', podIP: '127.0.0.1',
    deletionTimestamp: undefined, hostNetwork: false, restartPolicy: 'Always', terminationGracePeriodSeconds: 30, readinessGates: [gate],
    containers: [{ name: 'web', ports: [{ name: 'http', containerPort: port }], env: {}, sidecar: false }],
    containerStatuses: [{ name: 'web', containerId: `containerd://c${i}`, restartCount: 0, state: 'running', startedAt: Date.now() - 600_000, started: true, ready: true }],
    conditions: [],
  };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const quiet: Logger = { error: () => undefined, warn: () => undefined, info: () => undefined, debug: () => undefined, child: () => quiet };

describe('stall guard: the event loop blocked for 3 s while 1,000 targets are probed', () => {
  const listening: Listening[] = [];
  before(async () => {
    for (let i = 0; i < servers; i++) {
      listening.push(await httpServer((_req, res) => {
        setTimeout(() => res.end('ok'), replyDelayMs);
      }));
    }
  });
  after(async () => {
    await Promise.all(listening.map((l) => l.close()));
  });

  it('records 0 failures and counts the voided probes', async () => {
    const metrics = new Metrics({ defaultMetrics: false });
    const report = reporter({ log: quiet, metrics, events: { record: () => undefined } as unknown as EventRecorder });
    const seen = { success: 0, failure: 0, errored: 0, voidedPasses: 0, voidedAttempts: 0, failureTransitions: 0, remediations: 0, successAfterStall: new Set<string>() };
    let stallEnded = Number.POSITIVE_INFINITY;
    let inFlightAtStall = 0;
    const observe = (e: ControllerEvent): void => {
      report(e);
      if (e.type === 'probe') {
        if (e.outcome.kind === 'errored' && e.outcome.stall !== undefined) seen.voidedPasses++;
        else if (e.outcome.kind === 'success') {
          seen.success++;
          if (performance.now() > stallEnded) seen.successAfterStall.add(e.target.key);
        } else if (e.outcome.kind === 'failure') seen.failure++;
        else if (e.outcome.kind === 'errored') seen.errored++;
      }
      if (e.type === 'probe-voided') seen.voidedAttempts++;
      if (e.type === 'transition' && e.transition.cause === 'probe' && e.transition.to === 'failure') seen.failureTransitions++;
    };
    const monitor = new EventLoopMonitor({ boundMs: 500, onDelay: (ms) => metrics.observeEventLoopDelay(ms / 1000) });
    monitor.start();
    const scheduler = new Scheduler({ clock: systemClock, random: Math.random, concurrency: 256 });
    const gates = new GateWriter({ clock: systemClock, patch: () => Promise.resolve<GatePatchResult>({ resourceVersion: '2' }) });
    const store = new Map<string, Pod>();
    const policies = new Map<string, PolicyEntry>([['shop/web', { key: 'shop/web', namespace: 'shop', name: 'web', uid: 'p1', generation: 1, policy: policy(), issues: [], stored: undefined }]]);
    const probers: Probers = { httpGet: createHttpProber({ userAgent: 'kube-probe/1.37' }), tcpSocket: tcpProbe, grpc: createGrpcProber({ userAgent: 'kube-probe/1.37' }) };
    const set = new TargetSet({
      clock: systemClock, observe, scheduler, gates, guard: new AddressGuard(['127.0.0.0/8']), probers, policies, pods: store,
      remediate: () => {
        seen.remediations++;
      },
      owns: () => true,
      stall: monitor,
    });
    const stop = new AbortController();
    const loop = scheduler.start(stop.signal);
    try {
      for (let i = 0; i < pods; i++) {
        const p = pod(i, listening[i % servers]!.port);
        store.set(`shop/${p.name}`, p);
        set.onPod('ADDED', p, undefined);
      }
      assert.equal(set.size, 2 * pods);
      // Warm up: every readiness target commits its first success.
      const readyBy = Date.now() + 10_000;
      const ready = (): number => [...set.all()].filter((t) => t.plan.kind === 'readiness' && t.state.committed === 'success').length;
      while (ready() < pods && Date.now() < readyBy) await sleep(100);
      assert.equal(ready(), pods, 'every readiness target is ready before the stall');
      await sleep(1_000);
      assert.deepEqual({ failure: seen.failure, errored: seen.errored, voided: seen.voidedAttempts }, { failure: 0, errored: 0, voided: 0 }, 'a calm run has no failures');

      inFlightAtStall = scheduler.stats().inFlight;
      assert.ok(inFlightAtStall > 10, `probes are in flight when the loop blocks (${inFlightAtStall})`);
      const until = performance.now() + blockMs;
      while (performance.now() < until) {
        // the deliberate 3 s stall
      }
      stallEnded = performance.now();
      // Two periods after the stall: every target probes again.
      await sleep(4_500);
    } finally {
      stop.abort();
      await loop;
      monitor.stop();
    }

    const lastFailures = [...set.all()].filter((t) => t.state.lastResult === 'failure').length;
    const text = await metrics.text();
    const voidedMetric = [...text.matchAll(/^outprobe_probes_voided_total\{[^}]*\} (\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
    const summary = { ...seen, successAfterStall: seen.successAfterStall.size, inFlightAtStall, lastFailures, voidedMetric };
    console.log(JSON.stringify(summary));
    assert.equal(seen.failure, 0, 'no failure reached the results state machine');
    assert.equal(seen.failureTransitions, 0, 'no failure transition');
    assert.equal(lastFailures, 0, 'no target\'s last counted result is a failure');
    assert.equal(seen.remediations, 0, 'no remediation');
    assert.ok(seen.voidedAttempts > 0, 'voided attempts are counted');
    assert.equal(voidedMetric, seen.voidedAttempts, 'outprobe_probes_voided_total counts every voided attempt');
    assert.ok(/^outprobe_event_loop_delay_seconds_bucket\{le="2.5"\} (\d+)$/m.exec(text)?.[1] !== /^outprobe_event_loop_delay_seconds_count (\d+)$/m.exec(text)?.[1], 'the 3 s delay is in the histogram above 2.5 s');
    assert.ok(seen.successAfterStall.size >= 2 * pods * 0.95, `targets probe successfully again after the stall (${seen.successAfterStall.size})`);
  });
});
