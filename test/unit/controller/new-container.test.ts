import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { firstPass, newContainer } from '../../../src/controller/first-pass.ts';
import type { FirstPassInput } from '../../../src/controller/first-pass.ts';
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
 * Issue 31 item 2 (ADR 0065): a container that starts while outprobe runs is
 * probed at once, after its initialDelaySeconds, as the kubelet's new worker
 * does (kubelet-probes.md §3.1). Only targets planned together are spread
 * (replica start, a policy created or edited, a handover: ADR 0019). Before,
 * a pod that appeared with its container running 60 s after the replica
 * started waited for its key's phase: up to a whole period.
 */
const periodMs = 10_000;
const t0 = 1_700_000_000_000;
const gateType = 'outprobe.io/web';

function policy(initialDelaySeconds = 0, timeoutSeconds = 1): ProbePolicy {
  return {
    metadata: { name: 'web', namespace: 'shop' },
    spec: {
      selector: { matchLabels: { app: 'web' }, matchExpressions: [] },
      mode: 'Enforce',
      readiness: {
        conditionType: gateType, container: null, maxUnreadyPercent: 100,
        probe: { handler: { type: 'httpGet', path: '/healthz', port: 8080, scheme: 'HTTP', httpHeaders: [] }, initialDelaySeconds, timeoutSeconds, periodSeconds: periodMs / 1000, successThreshold: 1, failureThreshold: 3, terminationGracePeriodSeconds: null },
      },
      liveness: null,
      startup: null,
      remediation: { maxUnavailable: 1, haltAbovePercentFailing: 50 },
    },
  };
}

/** A pod whose container runs since `startedAt` (undefined: waiting). */
function pod(name: string, startedAt: number | undefined, labels: Record<string, string> = { app: 'web' }): Pod {
  return {
    uid: `uid-${name}`, namespace: 'shop', name, resourceVersion: '1', labels, nodeName: 'n1', phase: startedAt === undefined ? 'Pending' : 'Running', podIP: '127.0.10.1',
    deletionTimestamp: undefined, hostNetwork: false, restartPolicy: 'Always', terminationGracePeriodSeconds: 30, readinessGates: [gateType],
    containers: [{ name: 'web', ports: [], env: {}, sidecar: false }],
    containerStatuses: [startedAt === undefined
      ? { name: 'web', containerId: undefined, restartCount: 0, state: 'waiting', startedAt: undefined, started: false, ready: false }
      : { name: 'web', containerId: `containerd://${name}`, restartCount: 0, state: 'running', startedAt, started: true, ready: false }],
    conditions: [],
  };
}

/** Whole seconds, as `state.running.startedAt` is written. */
const second = (at: number): number => Math.floor(at / 1000) * 1000;

const flush = async (): Promise<void> => {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
};

function setup(initialDelaySeconds = 0) {
  const clock = new FakeClock(t0);
  const scheduler = new Scheduler({ clock, random: () => 0, concurrency: 64 });
  const gates = new GateWriter({ clock, patch: () => Promise.resolve<GatePatchResult>({ resourceVersion: '2' }) });
  const pods = new Map<string, Pod>();
  const policies = new Map<string, PolicyEntry>();
  /** Probe times by pod name. */
  const probes = new Map<string, number[]>();
  const ok = (): Promise<Outcome> => Promise.resolve({ kind: 'success', output: '' });
  const probers: Probers = { httpGet: ok, tcpSocket: ok, grpc: ok };
  const set = new TargetSet({
    clock, scheduler, gates, guard: new AddressGuard(['127.0.0.0/8']), probers, policies, pods, remediate: () => undefined, owns: () => true,
    observe: (e) => {
      if (e.type !== 'probe') return;
      probes.set(e.pod.name, [...(probes.get(e.pod.name) ?? []), clock.now()]);
    },
  });
  const entry: PolicyEntry = { key: 'shop/web', namespace: 'shop', name: 'web', uid: 'p1', generation: 1, policy: policy(initialDelaySeconds), issues: [], stored: undefined };
  policies.set(entry.key, entry);
  set.policyChanged(entry);
  const event = (type: 'ADDED' | 'MODIFIED', p: Pod): void => {
    const old = pods.get(`shop/${p.name}`);
    pods.set(`shop/${p.name}`, p);
    set.onPod(type, p, old);
  };
  /** Steps every 10 ms, the first step at the current time. */
  const runFor = async (ms: number): Promise<void> => {
    const end = clock.now() + ms;
    for (;;) {
      scheduler.step();
      await flush();
      if (clock.now() >= end) return;
      clock.advance(10);
    }
  };
  return { clock, set, event, runFor, probes, entry, policies };
}

const key = (name: string): string => `shop/web/uid-${name}/web/readiness`;

describe('a container that starts while outprobe runs is probed at once (ADR 0065)', () => {
  it('a pod that appears with its container running 60 s after the replica started: probed at once, then every period', async () => {
    const t = setup();
    await t.runFor(60_000);
    const seen = t.clock.now();
    // Its slot would have been up to a period away (4.06 s here for this key).
    assert.ok(spreadDueAt(key('late'), periodMs, seen) - seen > 1_000);
    t.event('ADDED', pod('late', second(seen - 300)));
    await t.runFor(25_000);
    assert.deepEqual(t.probes.get('late'), [seen, seen + periodMs, seen + 2 * periodMs]);
  });

  it('with initialDelaySeconds: exactly at the end of the delay', async () => {
    const t = setup(5);
    await t.runFor(60_000);
    const started = second(t.clock.now());
    t.event('ADDED', pod('delayed', started));
    await t.runFor(8_000);
    assert.deepEqual(t.probes.get('delayed'), [started + 5_000]);
  });

  it('seen first waiting, then running: probed as the running status arrives', async () => {
    const t = setup();
    await t.runFor(60_000);
    t.event('ADDED', pod('fresh', undefined));
    await t.runFor(400);
    const running = t.clock.now();
    t.event('MODIFIED', pod('fresh', second(running)));
    await t.runFor(1_000);
    assert.deepEqual(t.probes.get('fresh'), [running]);
  });

  it('still spread: a container that ran before the replica began, one newly selected by a label that started more than a period ago, and a policy edit', async () => {
    const t = setup();
    await t.runFor(60_000);
    const at = t.clock.now();
    t.event('ADDED', pod('old', t0 - 3_600_000)); // e.g. seen after a relist
    t.event('ADDED', pod('relabeled', second(t0 + 20_000), { app: 'other' }));
    t.event('MODIFIED', pod('relabeled', second(t0 + 20_000)));
    await t.runFor(periodMs);
    const near = (probed: number | undefined, slot: number, what: string): void => {
      assert.ok(probed !== undefined && probed >= slot && probed < slot + 10, `${what}: probed at ${probed}, its slot ${slot}`);
    };
    for (const name of ['old', 'relabeled']) near(t.probes.get(name)?.[0], spreadDueAt(key(name), periodMs, at), name);
    // A probe edit replans every pod: spread again, new containers included.
    t.event('ADDED', pod('new', second(t.clock.now())));
    await t.runFor(100);
    const edited = t.clock.now();
    const entry: PolicyEntry = { ...t.entry, generation: 2, policy: policy(0, 2) };
    t.policies.set(entry.key, entry);
    t.set.policyChanged(entry);
    await t.runFor(periodMs);
    near(t.probes.get('new')?.at(-1), spreadDueAt(key('new'), periodMs, edited), 'new, after the edit');
  });
});

describe('firstPass (ADR 0019, ADR 0065)', () => {
  const base: FirstPassInput = { key: 'shop/web/uid-a/web/readiness', periodMs, initialDelayMs: 0, startedAt: t0 + 59_000, now: t0 + 60_000, cause: 'pod', since: t0, gainedAt: undefined };
  const spread = spreadDueAt(base.key, periodMs, base.now);

  it('a new container from its pod event: at once; within its initial delay: at its end', () => {
    assert.deepEqual(firstPass(base), { dueAt: base.now, phaseAt: base.now });
    assert.deepEqual(firstPass({ ...base, initialDelayMs: 3_000 }), { dueAt: t0 + 62_000, phaseAt: t0 + 62_000 });
  });

  it('planned by a policy change or a replan of every pod: spread', () => {
    assert.deepEqual(firstPass({ ...base, cause: 'policy' }), { dueAt: spread, phaseAt: spread });
    assert.deepEqual(firstPass({ ...base, cause: 'resync' }), { dueAt: spread, phaseAt: spread });
  });

  it('a container older than the replica or than its gain: not new', () => {
    assert.equal(newContainer({ ...base, since: t0 + 59_500 }), true, 'startedAt has whole seconds: the same second counts');
    assert.equal(newContainer({ ...base, since: t0 + 60_000 }), false);
    assert.equal(newContainer({ ...base, gainedAt: t0 + 60_000 }), false);
    assert.equal(firstPass({ ...base, gainedAt: t0 + 60_000 }).dueAt <= base.now + periodMs, true);
  });

  it('a container whose first probe fell due more than a period ago: not new (seen late, newly selected)', () => {
    // startedAt has whole seconds: up to a period and a second ago.
    assert.equal(newContainer({ ...base, startedAt: t0 + 49_001 }), true);
    assert.equal(newContainer({ ...base, startedAt: t0 + 49_000 }), false);
    assert.equal(newContainer({ ...base, startedAt: undefined }), false);
  });
});
