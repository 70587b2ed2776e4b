import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PolicyEntry } from '../../../src/controller/policies.ts';
import type { Probers } from '../../../src/controller/runner.ts';
import { TargetSet } from '../../../src/controller/target-set.ts';
import type { Pod } from '../../../src/kube/index.ts';
import type { ProbePolicy } from '../../../src/policy/index.ts';
import { Scheduler, spreadDueAt } from '../../../src/probing/index.ts';
import type { Outcome } from '../../../src/probing/index.ts';
import { AddressGuard } from '../../../src/targets/index.ts';
import { GateWriter } from '../../../src/writeback/index.ts';
import type { GatePatchResult } from '../../../src/writeback/index.ts';
import { FakeClock } from '../../support/fake-clock.ts';

/**
 * Issue 18 item 2 (ADR 0019): whatever planned a target — a policy created
 * again, a probe edit — its first probe falls at its own phase in its
 * period, so N targets planned at once probe spread over the period, not
 * together (and then aligned on the ticker for good).
 */
const periodMs = 10_000;
const n = 400;
const t0 = 1_700_000_000_000;

function policy(path: string, initialDelaySeconds = 0): ProbePolicy {
  return {
    metadata: { name: 'web', namespace: 'shop' },
    spec: {
      selector: { matchLabels: { app: 'web' }, matchExpressions: [] },
      mode: 'Enforce',
      readiness: {
        conditionType: 'outprobe.io/web', container: null, maxUnreadyPercent: 100,
        probe: { handler: { type: 'httpGet', path, port: 8080, scheme: 'HTTP', httpHeaders: [] }, initialDelaySeconds, timeoutSeconds: 1, periodSeconds: periodMs / 1000, successThreshold: 1, failureThreshold: 3, terminationGracePeriodSeconds: null },
      },
      liveness: null,
      startup: null,
      remediation: { maxUnavailable: 1, haltAbovePercentFailing: 50 },
    },
  };
}

function pod(i: number, startedAt: number): Pod {
  return {
    uid: `uid-${i}`, namespace: 'shop', name: `web-${i}`, resourceVersion: '1', labels: { app: 'web' }, nodeName: 'n1', phase: 'Running', podIP: '127.0.10.1',
    deletionTimestamp: undefined, hostNetwork: false, restartPolicy: 'Always', terminationGracePeriodSeconds: 30, readinessGates: ['outprobe.io/web'],
    containers: [{ name: 'web', ports: [], env: {}, sidecar: false }],
    containerStatuses: [{ name: 'web', containerId: `containerd://c${i}`, restartCount: 0, state: 'running', startedAt, started: true, ready: true }],
    conditions: [],
  };
}

const flush = async (): Promise<void> => {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
};

function setup(gainedAt?: (pod: Pod) => number | undefined) {
  const clock = new FakeClock(t0);
  const scheduler = new Scheduler({ clock, random: () => 0, concurrency: 1024 });
  const gates = new GateWriter({ clock, patch: () => Promise.resolve<GatePatchResult>({ resourceVersion: '2' }) });
  const pods = new Map<string, Pod>();
  const policies = new Map<string, PolicyEntry>();
  /** Probe start times by pod UID. */
  const probes = new Map<string, number[]>();
  const ok = (): Promise<Outcome> => Promise.resolve({ kind: 'success', output: '' });
  const probers: Probers = { httpGet: ok, tcpSocket: ok, grpc: ok };
  const set = new TargetSet({
    clock, scheduler, gates, guard: new AddressGuard(['127.0.0.0/8']), probers, policies, pods, remediate: () => undefined, owns: () => true, ...(gainedAt === undefined ? {} : { gainedAt }),
    observe: (e) => {
      if (e.type !== 'probe') return;
      const list = probes.get(e.pod.uid) ?? [];
      probes.set(e.pod.uid, [...list, clock.now()]);
    },
  });
  const apply = (p: ProbePolicy, generation: number): void => {
    const entry: PolicyEntry = { key: 'shop/web', namespace: 'shop', name: 'web', uid: `p${generation}`, generation, policy: p, issues: [], stored: undefined };
    policies.set(entry.key, entry);
    set.policyChanged(entry);
  };
  const remove = (): void => {
    const entry = policies.get('shop/web');
    if (entry === undefined) return;
    policies.delete(entry.key);
    set.policyRemoved(entry);
  };
  const runFor = async (ms: number, stepMs = 100): Promise<void> => {
    for (let end = clock.now() + ms; clock.now() < end; ) {
      clock.advance(stepMs);
      scheduler.step();
      await flush();
    }
  };
  /** Each pod's first probe at or after `from`. */
  const firstSince = (from: number): number[] => [...probes.values()].map((ts) => ts.find((at) => at >= from) ?? Number.NaN);
  return { clock, pods, set, apply, remove, runFor, firstSince, probes };
}

/** The most first probes in one tenth of the period, as a multiple of a fair share (n / 10). */
function worstSlice(firsts: readonly number[], from: number): number {
  const slices = new Array<number>(10).fill(0);
  for (const at of firsts) {
    const i = Math.floor(((at - from) / periodMs) * 10);
    slices[i] = (slices[i] ?? 0) + 1;
  }
  return Math.max(...slices) / (n / 10);
}

function addPods(t: ReturnType<typeof setup>, startedAt: number): void {
  for (let i = 0; i < n; i++) {
    const p = pod(i, startedAt);
    t.pods.set(`shop/${p.name}`, p);
    t.set.onPod('ADDED', p, undefined);
  }
}

describe('first probes of newly planned targets are spread over their period', () => {
  it('a policy deleted and created again: every first probe within one period, no tenth of it holding more than twice its share', async () => {
    const t = setup();
    addPods(t, t0 - 3_600_000);
    t.apply(policy('/healthz'), 1);
    await t.runFor(3 * periodMs);
    t.remove();
    const recreated = t.clock.now();
    t.apply(policy('/healthz'), 1);
    await t.runFor(2 * periodMs);
    const firsts = t.firstSince(recreated);
    assert.equal(firsts.length, n);
    assert.ok(firsts.every((at) => at >= recreated && at < recreated + periodMs + 100), 'each first probe within one period of the recreate');
    const worst = worstSlice(firsts, recreated);
    assert.ok(worst <= 2, `the busiest tenth of the period holds ${worst}× its share`);
  });

  it('a probe edit spreads the replanned targets again, and they stay spread on their tickers', async () => {
    const t = setup();
    addPods(t, t0 - 3_600_000);
    t.apply(policy('/healthz'), 1);
    await t.runFor(periodMs);
    const edited = t.clock.now();
    t.apply(policy('/ready'), 2);
    await t.runFor(3 * periodMs);
    assert.ok(worstSlice(t.firstSince(edited), edited) <= 2);
    // Two periods later the ticks keep the phases.
    const later = edited + 2 * periodMs;
    assert.ok(worstSlice(t.firstSince(later), later) <= 2);
  });

  it('a container still in its initial delay is first probed exactly when the delay ends', async () => {
    const t = setup();
    addPods(t, t0);
    t.apply(policy('/healthz', 5), 1);
    await t.runFor(6_000);
    assert.deepEqual(new Set(t.firstSince(t0)), new Set([t0 + 5_000]));
  });

  it('a pod gained in a shard handover: a slot the hand-off lost (within the last second) is probed at once, then the phase is kept; other gained pods wait for their slot', async () => {
    let gained: number | undefined;
    const t = setup(() => gained);
    t.apply(policy('/healthz'), 1);
    await t.runFor(periodMs);
    // The previous owner's slots: each pod's phase. Hand the pods over 400 ms after ~a tenth of them had their slot.
    gained = t.clock.now();
    addPods(t, t0 - 3_600_000);
    const at = t.clock.now();
    await t.runFor(3 * periodMs, 50);
    const phaseOf = (i: number): number => spreadDueAt(`shop/web/uid-${i}/web/readiness`, periodMs, at);
    let caughtUp = 0;
    for (let i = 0; i < n; i++) {
      const runs = t.probes.get(`uid-${i}`) ?? [];
      const slot = phaseOf(i);
      const lastSlot = slot === at ? at : slot - periodMs;
      if (at - lastSlot <= 1_000) {
        caughtUp++;
        assert.ok(runs[0] !== undefined && runs[0] - at <= 50, `uid-${i}: its slot fell ${at - lastSlot} ms before the handover: probed at once, not at ${runs[0]}`);
        assert.ok(runs[1] !== undefined && runs[1] - (lastSlot + periodMs) < 50 && runs[1] >= lastSlot + periodMs, `uid-${i}: then on its phase`);
      } else {
        assert.ok(runs[0] !== undefined && runs[0] >= slot && runs[0] < slot + 100, `uid-${i}: first probe at its slot ${slot}, not ${runs[0]}`);
      }
      assert.ok(runs[2] !== undefined && (runs[2] - slot) % periodMs < 100, `uid-${i}: stays on its phase`);
    }
    // About a tenth of the pods (1 s of a 10 s period) are caught up; the rest stay spread.
    assert.ok(caughtUp > n * 0.05 && caughtUp < n * 0.17, `caught up ${caughtUp} of ${n}`);
    // A pod gained longer ago than a period is planned like any other (no catch-up).
    gained = t.clock.now() - 2 * periodMs;
    const p = pod(n, t0 - 3_600_000);
    const planned = t.clock.now();
    t.pods.set(`shop/${p.name}`, p);
    t.set.onPod('ADDED', p, undefined);
    await t.runFor(periodMs + 200, 50);
    const slot = spreadDueAt(`shop/web/uid-${n}/web/readiness`, periodMs, planned);
    assert.ok((t.probes.get(`uid-${n}`)?.[0] ?? 0) >= slot, 'no catch-up for an old gain');
  });
});
