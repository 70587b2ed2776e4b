import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PolicyEntry } from '../../../src/controller/policies.ts';
import type { Probers } from '../../../src/controller/runner.ts';
import { TargetSet } from '../../../src/controller/target-set.ts';
import type { Pod } from '../../../src/kube/index.ts';
import type { ProbePolicy } from '../../../src/policy/index.ts';
import { Scheduler } from '../../../src/probing/index.ts';
import type { Outcome } from '../../../src/probing/index.ts';
import { AddressGuard } from '../../../src/targets/index.ts';
import { GateWriter } from '../../../src/writeback/index.ts';
import type { GatePatchResult } from '../../../src/writeback/index.ts';
import { FakeClock } from '../../support/fake-clock.ts';

/**
 * Issue 31 item 2 (ADR 0064): in steady state each target is probed exactly
 * once per period, each pod's probes exactly one period apart, as the
 * kubelet's worker, whatever came before. Live at 20,000 pods the controller
 * sent 2,214 probes/s for 2,000 due with a median gap of 8.7 s: passes made
 * late while it was saturated kept their ticker's phase, so each late pass was
 * followed by a short gap and the backlog drained as probes above one per
 * period. Here 400 targets at 10 s share 8 probe slots; probes take 300 ms
 * for three periods (26.7 probes/s for 40 due: saturated), then answer at once.
 * Pod updates that change nothing the probe reads (resourceVersion, the gate
 * condition outprobe wrote) arrive all along.
 */
const periodMs = 10_000;
const n = 400;
const t0 = 1_700_000_000_000;
const saturatedUntil = t0 + 3 * periodMs;
const gateType = 'outprobe.io/web';

function policy(): ProbePolicy {
  return {
    metadata: { name: 'web', namespace: 'shop' },
    spec: {
      selector: { matchLabels: { app: 'web' }, matchExpressions: [] },
      mode: 'Enforce',
      readiness: {
        conditionType: gateType, container: null, maxUnreadyPercent: 100,
        probe: { handler: { type: 'httpGet', path: '/healthz', port: 8080, scheme: 'HTTP', httpHeaders: [] }, initialDelaySeconds: 0, timeoutSeconds: 1, periodSeconds: periodMs / 1000, successThreshold: 1, failureThreshold: 3, terminationGracePeriodSeconds: null },
      },
      liveness: null,
      startup: null,
      remediation: { maxUnavailable: 1, haltAbovePercentFailing: 50 },
    },
  };
}

function pod(i: number): Pod {
  return {
    uid: `uid-${i}`, namespace: 'shop', name: `web-${i}`, resourceVersion: '1', labels: { app: 'web' }, nodeName: 'n1', phase: 'Running', podIP: '127.0.10.1',
    deletionTimestamp: undefined, hostNetwork: false, restartPolicy: 'Always', terminationGracePeriodSeconds: 30, readinessGates: [gateType],
    containers: [{ name: 'web', ports: [], env: {}, sidecar: false }],
    containerStatuses: [{ name: 'web', containerId: `containerd://c${i}`, restartCount: 0, state: 'running', startedAt: t0 - 3_600_000, started: true, ready: true }],
    conditions: [],
  };
}

const flush = async (): Promise<void> => {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe('steady state: exactly one probe per period per target (issue 31, ADR 0064)', () => {
  it('after a saturated spell, and with pod updates that change no probe: each period probes every target once, every gap is the period', async () => {
    const clock = new FakeClock(t0);
    const scheduler = new Scheduler({ clock, random: () => 0, concurrency: 8 });
    const gates = new GateWriter({ clock, patch: () => Promise.resolve<GatePatchResult>({ resourceVersion: '2' }) });
    const pods = new Map<string, Pod>();
    const policies = new Map<string, PolicyEntry>();
    /** Probe start times by pod UID. */
    const starts = new Map<string, number[]>();
    const answer = async (): Promise<Outcome> => {
      if (clock.now() < saturatedUntil) await clock.sleepUntil(clock.now() + 300);
      return { kind: 'success', output: '' };
    };
    const probers: Probers = { httpGet: answer, tcpSocket: answer, grpc: answer };
    const set = new TargetSet({
      clock, scheduler, gates, guard: new AddressGuard(['127.0.0.0/8']), probers, policies, pods, remediate: () => undefined, owns: () => true,
      observe: (e) => {
        if (e.type !== 'probe') return;
        const list = starts.get(e.pod.uid) ?? [];
        list.push(clock.now() - e.durationMs);
        starts.set(e.pod.uid, list);
      },
    });
    const entry: PolicyEntry = { key: 'shop/web', namespace: 'shop', name: 'web', uid: 'p1', generation: 1, policy: policy(), issues: [], stored: undefined };
    policies.set(entry.key, entry);
    for (let i = 0; i < n; i++) {
      const p = pod(i);
      pods.set(`shop/${p.name}`, p);
      set.onPod('ADDED', p, undefined);
    }
    set.policyChanged(entry);
    let rv = 2;
    const end = saturatedUntil + 6 * periodMs;
    while (clock.now() < end) {
      clock.advance(10);
      scheduler.step();
      await flush();
      if (clock.now() % 1_000 !== 0) continue;
      // Every second a seventh of the pods get an update that changes nothing the probe reads.
      for (let i = (clock.now() / 1_000) % 7; i < n; i += 7) {
        const key = `shop/web-${i}`;
        const old = pods.get(key);
        if (old === undefined) continue;
        const updated: Pod = { ...old, resourceVersion: String(rv++), conditions: [{ type: gateType, status: 'True', reason: 'ProbeSucceeded', message: '', lastTransitionTime: '' }] };
        pods.set(key, updated);
        set.onPod('MODIFIED', updated, old);
      }
    }
    // From the first probe after the saturated spell on.
    const perPeriod: number[] = [];
    for (let k = 0; k < 5; k++) {
      const from = saturatedUntil + k * periodMs;
      let count = 0;
      for (const list of starts.values()) count += list.filter((at) => at >= from && at < from + periodMs).length;
      perPeriod.push(count);
    }
    assert.deepEqual(perPeriod, [n, n, n, n, n], 'probes in each period after the saturated spell');
    const wrong: string[] = [];
    for (const [uid, list] of starts) {
      const after = list.filter((at) => at >= saturatedUntil);
      for (let i = 1; i < after.length; i++) {
        const gap = (after[i] ?? 0) - (after[i - 1] ?? 0);
        if (gap !== periodMs) wrong.push(`${uid}: ${gap} ms`);
      }
    }
    assert.deepEqual(wrong.slice(0, 10), [], `${wrong.length} gaps other than the period`);
    await scheduler.idle();
  });
});
