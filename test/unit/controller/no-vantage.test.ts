import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NoVantageKeeper, stampVantage } from '../../../src/controller/no-vantage.ts';
import type { ControllerEvent } from '../../../src/controller/events.ts';
import type { PolicyEntry } from '../../../src/controller/policies.ts';
import type { Probers } from '../../../src/controller/runner.ts';
import { TargetSet } from '../../../src/controller/target-set.ts';
import type { Pod, PodCondition } from '../../../src/kube/index.ts';
import type { ProbePolicy } from '../../../src/policy/index.ts';
import { Scheduler } from '../../../src/probing/index.ts';
import { computeStatus } from '../../../src/status/index.ts';
import { AddressGuard } from '../../../src/targets/index.ts';
import { GateWriter } from '../../../src/writeback/index.ts';
import type { GateCondition, GatePatchResult } from '../../../src/writeback/index.ts';
import { FakeClock } from '../../support/fake-clock.ts';

const gate = 'outprobe.io/web';

function policy(spread: 'node' | 'zone' | 'any'): ProbePolicy {
  return {
    metadata: { name: 'web', namespace: 'shop' },
    spec: {
      selector: { matchLabels: { app: 'web' }, matchExpressions: [] },
      mode: 'Enforce',
      readiness: {
        conditionType: gate, container: null, maxUnreadyPercent: 100, injectGate: false,
        probe: { handler: { type: 'httpGet', path: '/', port: 'http', scheme: 'HTTP', httpHeaders: [] }, initialDelaySeconds: 0, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3, terminationGracePeriodSeconds: null },
      },
      liveness: null,
      startup: null,
      remediation: { maxUnavailable: 1, haltAbovePercentFailing: 50 },
      vantage: { spread },
    },
  };
}

function pod(status?: 'True' | 'False', reason?: string): Pod {
  const conditions: PodCondition[] = status === undefined ? [] : [{ type: gate, status, reason: reason ?? (status === 'True' ? 'ProbeSucceeded' : 'ProbeFailed'), message: undefined, lastTransitionTime: undefined }];
  return {
    uid: 'uid-1', namespace: 'shop', name: 'web-1', resourceVersion: '1', labels: { app: 'web' }, nodeName: 'n1', phase: 'Running', podIP: '127.0.10.1',
    deletionTimestamp: undefined, hostNetwork: false, restartPolicy: 'Always', terminationGracePeriodSeconds: 30, readinessGates: [gate],
    containers: [{ name: 'web', ports: [{ name: 'http', containerPort: 8080 }], env: {}, sidecar: false }],
    containerStatuses: [{ name: 'web', containerId: 'containerd://c1', restartCount: 0, state: 'running', startedAt: 1_699_999_000_000, started: true, ready: true }],
    conditions,
  };
}

function setup(spread: 'node' | 'zone' | 'any' = 'node') {
  const clock = new FakeClock();
  const scheduler = new Scheduler({ clock, random: () => 0, concurrency: 4 });
  const writes: GateCondition[] = [];
  const gates = new GateWriter({ clock, patch: (_p, condition) => (writes.push(condition), Promise.resolve<GatePatchResult>({ resourceVersion: '2' })) });
  const pods = new Map<string, Pod>();
  const policies = new Map<string, PolicyEntry>([['shop/web', { key: 'shop/web', namespace: 'shop', name: 'web', uid: 'p1', generation: 1, policy: policy(spread), issues: [], stored: undefined }]]);
  const events: ControllerEvent[] = [];
  const observe = (e: ControllerEvent): void => void events.push(e);
  const state = { blind: true, owned: true };
  const keeper = new NoVantageKeeper({ clock, observe, gates, pods, noVantage: () => state.blind });
  const probers: Probers = { httpGet: () => Promise.resolve({ kind: 'success', output: '' }), tcpSocket: () => Promise.resolve({ kind: 'success', output: '' }), grpc: () => Promise.resolve({ kind: 'success', output: '' }) };
  const set = new TargetSet({
    clock, observe, scheduler, gates, guard: new AddressGuard(['127.0.0.0/8']), probers, policies, pods,
    remediate: () => undefined, owns: () => state.owned, spread: (_k, _p, now) => now,
    blind: (p, selecting, owned) => keeper.reconcile(p, selecting, owned),
  });
  const show = (p: Pod): void => {
    pods.set('shop/web-1', p);
    set.onPod('MODIFIED', p, undefined);
  };
  const pass = async (): Promise<void> => {
    scheduler.step();
    for (let i = 0; i < 5; i++) await flush();
    clock.advance(10_000);
  };
  return { set, keeper, writes, events, state, show, pass, targets: (): number => [...set.all()].length };
}

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

void describe('NoVantage (ADR 0040): a pod no replica may probe from outside its node', () => {
  void it('is not probed, its False gate is failed open (True, NoVantage), one Event per transition, counted', async () => {
    const t = setup();
    t.show(pod('False'));
    t.show(pod('False'));
    await flush();
    assert.equal(t.set.size, 0, 'nothing probes it');
    assert.deepEqual(t.writes.map((w) => [w.status, w.reason]), [['True', 'NoVantage']]);
    assert.equal(t.events.filter((e) => e.type === 'no-vantage').length, 1);
    assert.equal(t.keeper.count('shop/web'), 1);
    assert.ok(t.events.some((e) => e.type === 'no-vantage-count' && e.count === 1));
    // A second replica joins on another node: it is probed again, one Event says so.
    t.state.blind = false;
    t.show(pod('True'));
    assert.ok(t.targets() > 0);
    assert.deepEqual(t.events.flatMap((e) => (e.type === 'no-vantage' ? [e.blind] : [])), [true, false]);
    assert.equal(t.keeper.count('shop/web'), 0);
  });

  void it('a replica that does not keep the pod counts it and writes nothing; the keeper marks a True gate NoVantage', async () => {
    const t = setup();
    t.state.owned = false;
    t.show(pod('False'));
    await flush();
    assert.equal(t.writes.length, 0);
    assert.equal(t.events.filter((e) => e.type === 'no-vantage').length, 0);
    assert.equal(t.keeper.count('shop/web'), 1);
    // A True verdict is no longer renewed: the keeper says so (reason NoVantage), once.
    const u = setup();
    u.show(pod('True'));
    await flush();
    u.show(pod('True', 'NoVantage'));
    await flush();
    assert.deepEqual(u.writes.map((w) => [w.status, w.reason]), [['True', 'NoVantage']]);
  });

  void it('a gate kept open (NoVantage) is replaced by the first verdict once a replica may probe the pod', async () => {
    const t = setup();
    t.state.blind = false;
    t.show(pod('True', 'NoVantage'));
    await t.pass();
    assert.deepEqual(t.writes.map((w) => [w.status, w.reason]), [['True', 'ProbeSucceeded']]);
  });

  void it('spread any: the pod is probed from wherever (never NoVantage)', () => {
    const t = setup('any');
    t.show(pod('True'));
    assert.ok(t.targets() > 0);
    assert.equal(t.keeper.count('shop/web'), 0);
  });

  void it('the policy\'s Degraded condition says NoVantage with the count', () => {
    const s = computeStatus({ generation: 1, invalid: null, synced: true, pods: 3, ready: 3, failing: 0, ungated: 0, erroring: 0, planIssues: [], remediations: 0, halted: false, noVantage: 2, now: '2026-12-07T02:00:00Z' }, undefined);
    const d = s.conditions.filter((c) => c.type === 'Degraded');
    assert.deepEqual(d.map((c) => [c.status, c.reason]), [['True', 'NoVantage']]);
    assert.match(d.map((c) => c.message).join(''), /^2 pod\(s\) have no vantage/);
    assert.equal(s.noVantage, 2);
  });

  void it('a gate message names the vantage its verdict came from', () => {
    const c: GateCondition = { type: gate, status: 'False', reason: 'ProbeFailed', message: 'Readiness probe failed: timeout', lastTransitionTime: 't', lastProbeTime: 't' };
    assert.equal(stampVantage(c, 'node n2 (zone b)').message, 'Readiness probe failed: timeout [probed from node n2 (zone b)]');
    assert.equal(stampVantage({ ...c, message: 'x'.repeat(2000) }, 'node n2').message.length, 1024);
    assert.equal(stampVantage({ ...c, reason: 'NoVantage' }, 'node n2').message, 'Readiness probe failed: timeout');
    assert.equal(stampVantage(c, undefined), c);
  });
});
