import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TargetSet } from '../../../src/controller/target-set.ts';
import type { ControllerEvent } from '../../../src/controller/events.ts';
import type { PolicyEntry } from '../../../src/controller/policies.ts';
import type { RemediationRequest } from '../../../src/controller/remediation.ts';
import type { Probers } from '../../../src/controller/runner.ts';
import type { Pod, PodCondition } from '../../../src/kube/index.ts';
import type { ProbePolicy, ProbeSpec } from '../../../src/policy/index.ts';
import { Scheduler } from '../../../src/probing/index.ts';
import type { Outcome } from '../../../src/probing/index.ts';
import type { ProbeKind } from '../../../src/kernel/index.ts';
import { AddressGuard } from '../../../src/targets/index.ts';
import { GateWriter } from '../../../src/writeback/index.ts';
import type { GateCondition, GatePatchResult } from '../../../src/writeback/index.ts';
import { FakeClock } from '../../support/fake-clock.ts';

/**
 * Lifecycle cases of issue 11 §2, through the TargetSet and a real Scheduler
 * on a fake clock: what the kubelet's worker (pkg/kubelet/prober/worker.go)
 * does at a container restart, after startup succeeds, and after a restart of
 * the prober itself.
 */
const gate = 'outprobe.io/web';
const t0 = 1_700_000_000_000;

function probe(periodSeconds: number, failureThreshold: number, initialDelaySeconds = 0): ProbeSpec {
  return {
    handler: { type: 'httpGet', path: '/healthz', port: 'http', scheme: 'HTTP', httpHeaders: [] },
    initialDelaySeconds, timeoutSeconds: 1, periodSeconds, successThreshold: 1, failureThreshold, terminationGracePeriodSeconds: null,
  };
}

interface Probes {
  readonly readiness?: ProbeSpec;
  readonly liveness?: ProbeSpec;
  readonly startup?: ProbeSpec;
}

function policy(p: Probes): ProbePolicy {
  return {
    metadata: { name: 'web', namespace: 'shop' },
    spec: {
      selector: { matchLabels: { app: 'web' }, matchExpressions: [] },
      mode: 'Enforce',
      readiness: p.readiness === undefined ? null : { conditionType: gate, container: null, probe: p.readiness, maxUnreadyPercent: 100 },
      liveness: p.liveness === undefined ? null : { action: 'Evict', container: null, probe: p.liveness },
      startup: p.startup === undefined ? null : { container: null, probe: p.startup },
      remediation: { maxUnavailable: 1, haltAbovePercentFailing: 50 },
    },
  };
}

interface Instance {
  readonly id: string;
  readonly restartCount: number;
  readonly startedAt: number;
}

function pod(resourceVersion: string, instance: Instance, gateStatus?: 'True' | 'False'): Pod {
  const conditions: PodCondition[] = gateStatus === undefined ? [] : [{ type: gate, status: gateStatus, reason: gateStatus === 'True' ? 'ProbeSucceeded' : 'ProbeFailed', message: undefined, lastTransitionTime: undefined }];
  return {
    uid: 'uid-1', namespace: 'shop', name: 'web-1', resourceVersion, labels: { app: 'web' }, nodeName: 'n1', phase: 'Running', podIP: '127.0.10.1',
    deletionTimestamp: undefined, hostNetwork: false, restartPolicy: 'Always', terminationGracePeriodSeconds: 30, readinessGates: [gate],
    containers: [{ name: 'web', ports: [{ name: 'http', containerPort: 8080 }], env: {}, sidecar: false }],
    containerStatuses: [{ name: 'web', containerId: instance.id, restartCount: instance.restartCount, state: 'running', startedAt: instance.startedAt, started: true, ready: true }],
    conditions,
  };
}

const flush = async (): Promise<void> => {
  for (let i = 0; i < 6; i++) await new Promise((resolve) => setImmediate(resolve));
};

function setup(probes: Probes) {
  const clock = new FakeClock(t0);
  const scheduler = new Scheduler({ clock, random: () => 0, concurrency: 4 });
  const writes: GateCondition[] = [];
  let rv = 100;
  const gates = new GateWriter({ clock, patch: (_p, condition) => (writes.push(condition), Promise.resolve<GatePatchResult>({ resourceVersion: String(++rv) })) });
  const pods = new Map<string, Pod>();
  const policies = new Map<string, PolicyEntry>([['shop/web', { key: 'shop/web', namespace: 'shop', name: 'web', uid: 'p1', generation: 1, policy: policy(probes), issues: [], stored: undefined }]]);
  /** The outcome each kind's probe returns next; probe times per kind. */
  const health: Record<ProbeKind, Outcome> = {
    readiness: { kind: 'success', output: '' },
    liveness: { kind: 'success', output: '' },
    startup: { kind: 'success', output: '' },
  };
  const probed: Record<ProbeKind, number[]> = { readiness: [], liveness: [], startup: [] };
  /** How long each kind's probe takes (on the fake clock). */
  const takes: Record<ProbeKind, number> = { readiness: 0, liveness: 0, startup: 0 };
  const events: ControllerEvent[] = [];
  const remediations: RemediationRequest[] = [];
  const byPath = async (req: { readonly path: string }): Promise<Outcome> => {
    const kind = req.path as ProbeKind;
    const outcome = health[kind];
    if (takes[kind] > 0) await clock.sleepUntil(clock.now() + takes[kind]);
    return outcome;
  };
  const probers: Probers = {
    httpGet: (req) => byPath(req),
    tcpSocket: () => Promise.reject(new Error('unused')),
    grpc: () => Promise.reject(new Error('unused')),
  };
  const set = new TargetSet({
    clock, observe: (e) => {
      events.push(e);
      if (e.type === 'probe') probed[e.target.kind].push(clock.now());
    },
    scheduler, gates, guard: new AddressGuard(['127.0.0.0/8']), probers, policies, pods,
    remediate: (r) => remediations.push(r), owns: () => true,
    // These tests pin the kubelet's timing of an existing target: first passes at once.
    spread: (_key, _periodMs, now) => now,
  });
  let shown: Pod | undefined;
  const show = (p: Pod): void => {
    pods.set('shop/web-1', p);
    const old = shown;
    shown = p;
    set.onPod(old === undefined ? 'ADDED' : 'MODIFIED', p, old);
  };
  /**
   * Steps the scheduler every second up to `untilMs` after t0, letting passes
   * and writes complete; twice per second, as a trigger from a pass makes the
   * running loop step again at once.
   */
  const runUntil = async (untilMs: number, stepMs = 1_000): Promise<void> => {
    for (;;) {
      await flush();
      scheduler.step();
      await flush();
      scheduler.step();
      await flush();
      if (clock.now() + stepMs > t0 + untilMs) return;
      clock.advance(stepMs);
    }
  };
  const transitions = (kind: ProbeKind): string[] =>
    events.flatMap((e) => (e.type === 'transition' && e.target.kind === kind ? [`${String(e.transition.from)}->${e.transition.to}:${e.transition.cause}@${e.transition.at - t0}`] : []));
  return { clock, scheduler, writes, health, takes, probed, set, show, runUntil, transitions, remediations };
}

/** The kubelet probes with a path per kind here, so one prober can answer per kind. */
function withPaths(p: ProbeSpec, kind: ProbeKind): ProbeSpec {
  return p.handler.type === 'httpGet' ? { ...p, handler: { ...p.handler, path: kind } } : p;
}

const c1: Instance = { id: 'containerd://c1', restartCount: 0, startedAt: t0 - 600_000 };

describe('container restart (worker.go: a new container ID gets the initial value at the next pass)', () => {
  it('liveness: the new instance is alive again at once, before its initial delay, and the old failure is not remediated', async () => {
    const t = setup({ liveness: withPaths(probe(10, 1, 30), 'liveness') });
    t.show(pod('1', c1));
    t.health.liveness = { kind: 'failure', output: 'HTTP probe failed with statuscode: 500' };
    await t.runUntil(0);
    assert.equal(t.remediations.length, 1);
    const [req] = t.remediations;
    assert.ok(req !== undefined);
    assert.equal(t.set.stillFailing(req), true);
    // 5 s later the kubelet has restarted the container; its initial delay is 30 s.
    t.clock.advance(5_000);
    t.health.liveness = { kind: 'success', output: '' };
    t.show(pod('2', { id: 'containerd://c2', restartCount: 1, startedAt: t0 + 5_000 }));
    await t.runUntil(5_000);
    assert.deepEqual(t.transitions('liveness'), ['null->success:initial@0', 'success->failure:probe@0', 'failure->success:initial@5000']);
    assert.equal(t.set.stillFailing(req), false, 'a failure of the replaced instance is not acted on');
    // The first probe of the new instance runs exactly at startedAt + initialDelaySeconds.
    await t.runUntil(60_000);
    assert.deepEqual(t.probed.liveness, [t0, t0 + 35_000, t0 + 45_000, t0 + 55_000]);
  });

  it('readiness: the gate turns False at the restart, not after the initial delay', async () => {
    const t = setup({ readiness: withPaths(probe(10, 3, 20), 'readiness') });
    t.show(pod('1', c1, 'True'));
    await t.runUntil(3_000);
    assert.equal(t.writes.length, 0, 'the seeded True is confirmed: nothing to write');
    t.show(pod('2', { id: 'containerd://c2', restartCount: 1, startedAt: t0 + 3_000 }, 'True'));
    await t.runUntil(4_000);
    assert.deepEqual(t.writes.map((c) => c.status), ['False']);
    assert.deepEqual(t.transitions('readiness'), ['success->failure:initial@3000']);
    await t.runUntil(30_000);
    assert.deepEqual(t.probed.readiness, [t0, t0 + 23_000]);
    assert.deepEqual(t.writes.map((c) => c.status), ['False', 'True']);
  });
});

describe('container restart: startup', () => {
  it('a held startup Success goes back to Unknown at the restart, and the new instance is probed after its initial delay', async () => {
    const t = setup({ startup: withPaths(probe(5, 3, 10), 'startup'), liveness: withPaths(probe(10, 3), 'liveness') });
    t.show(pod('1', c1));
    await t.runUntil(20_000);
    assert.deepEqual(t.probed.startup, [t0], 'held after its Success');
    t.show(pod('2', { id: 'containerd://c2', restartCount: 1, startedAt: t0 + 20_000 }));
    await t.runUntil(40_000);
    assert.deepEqual(t.transitions('startup'), ['null->unknown:initial@0', 'unknown->success:probe@0', 'success->unknown:initial@20000', 'unknown->success:probe@30000']);
    assert.deepEqual(t.probed.startup, [t0, t0 + 30_000]);
    // Liveness waits for the new instance to be started again (then keeps its own ticks).
    assert.deepEqual(t.probed.liveness.filter((at) => at > t0 + 20_000 && at < t0 + 30_000), []);
    assert.ok(t.probed.liveness.some((at) => at >= t0 + 30_000));
  });
});

describe('a probe longer than its period (time.Ticker keeps one pending tick)', () => {
  it('runs the next probe as soon as the slow one returns, so the verdict is not a period late per probe', async () => {
    const t = setup({ liveness: { ...withPaths(probe(1, 3), 'liveness'), timeoutSeconds: 3 } });
    t.takes.liveness = 2_500;
    t.health.liveness = { kind: 'failure', output: 'HTTP probe failed with statuscode: 500' };
    t.show(pod('1', c1));
    await t.runUntil(12_000, 500);
    assert.deepEqual(t.probed.liveness.slice(0, 3).map((at) => at - t0), [2_500, 5_000, 7_500], 'probe completions');
    assert.deepEqual(t.transitions('liveness'), ['null->success:initial@0', 'success->failure:probe@7500']);
  });
});

describe('startup success (the kubelet triggers the readiness worker on the status sync)', () => {
  it('readiness probes at once when startup succeeds, not a readiness period later', async () => {
    const t = setup({ startup: withPaths(probe(2, 30), 'startup'), readiness: withPaths(probe(30, 3), 'readiness') });
    t.health.startup = { kind: 'failure', output: 'HTTP probe failed with statuscode: 503' };
    t.show(pod('1', { id: 'containerd://c1', restartCount: 0, startedAt: t0 }));
    await t.runUntil(5_000);
    assert.deepEqual(t.probed.startup, [t0, t0 + 2_000, t0 + 4_000]);
    t.health.startup = { kind: 'success', output: '' };
    await t.runUntil(6_000);
    assert.deepEqual(t.probed.startup, [t0, t0 + 2_000, t0 + 4_000, t0 + 6_000]);
    assert.deepEqual(t.probed.readiness, [t0 + 6_000]);
    assert.deepEqual(t.writes.map((c) => c.status), ['True'], 'ready in the same second as started');
    // The trigger restarted readiness's ticks (the kubelet resets its ticker).
    await t.runUntil(40_000);
    assert.deepEqual(t.probed.readiness, [t0 + 6_000, t0 + 36_000]);
  });
});

describe('prober restart (kubelet restart rule: kubeletRestartGracePeriod = 10 s)', () => {
  const failing: Outcome = { kind: 'failure', output: 'HTTP probe failed with statuscode: 503' };

  it('a True gate of a container running since more than 10 s before outprobe started is kept until probes cross the threshold', async () => {
    const t = setup({ readiness: withPaths(probe(10, 3), 'readiness') });
    t.health.readiness = failing;
    t.show(pod('1', { id: 'containerd://c1', restartCount: 0, startedAt: t0 - 10_001 }, 'True'));
    await t.runUntil(15_000);
    assert.equal(t.probed.readiness.length, 2);
    assert.deepEqual(t.writes, [], 'below failureThreshold: the inherited True stays');
  });

  it('a container started less than 10 s before outprobe started is new: not ready until its probes pass', async () => {
    const t = setup({ readiness: withPaths(probe(10, 3), 'readiness') });
    t.health.readiness = failing;
    t.show(pod('1', { id: 'containerd://c1', restartCount: 0, startedAt: t0 - 9_000 }, 'True'));
    await t.runUntil(0);
    assert.deepEqual(t.transitions('readiness'), ['success->failure:initial@0']);
    assert.deepEqual(t.writes.map((c) => c.status), ['False']);
  });

  it('the rule is measured from when this replica began watching the pod (a shard handover long after start)', async () => {
    const t = setup({ readiness: withPaths(probe(10, 3), 'readiness') });
    t.health.readiness = failing;
    t.show(pod('1', { id: 'containerd://c1', restartCount: 0, startedAt: t0 - 5_000 }, 'True'));
    await t.runUntil(0);
    assert.deepEqual(t.writes.map((c) => c.status), ['False']);
  });
});
