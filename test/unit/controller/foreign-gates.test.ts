import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TargetSet } from '../../../src/controller/target-set.ts';
import { GateRelease } from '../../../src/controller/release.ts';
import type { ControllerEvent } from '../../../src/controller/events.ts';
import type { PolicyEntry } from '../../../src/controller/policies.ts';
import type { Probers } from '../../../src/controller/runner.ts';
import { Remediator } from '../../../src/controller/remediation.ts';
import type { Pod, PodCondition } from '../../../src/kube/index.ts';
import type { ProbePolicy } from '../../../src/policy/index.ts';
import { Scheduler } from '../../../src/probing/index.ts';
import type { Outcome } from '../../../src/probing/index.ts';
import { computeStatus } from '../../../src/status/index.ts';
import { AddressGuard } from '../../../src/targets/index.ts';
import { GateWriter } from '../../../src/writeback/index.ts';
import type { GateCondition, GatePatchResult } from '../../../src/writeback/index.ts';
import { FakeClock } from '../../support/fake-clock.ts';

/**
 * Trust boundary (issue 10, finding 9): a policy author may name any
 * condition type, including another controller's readiness gate or another
 * policy's. outprobe writes only conditions it wrote itself: it never fails
 * open (nor writes or repairs) over a condition another writer set, and of two
 * policies claiming one type on one pod only the older writes it.
 */
const periodMs = 10_000;
const neg = 'cloud.google.com/load-balancer-neg-ready';

function policy(name: string, conditionType: string, path: string): ProbePolicy {
  return {
    metadata: { name, namespace: 'shop' },
    spec: {
      selector: { matchLabels: { app: 'web' }, matchExpressions: [] },
      mode: 'Enforce',
      readiness: {
        conditionType,
        container: null,
        // One pod: the panic threshold (ADR 0015) is off so a failure is written False.
        maxUnreadyPercent: 100,
        probe: {
          handler: { type: 'httpGet', path, port: 'http', scheme: 'HTTP', httpHeaders: [] },
          initialDelaySeconds: 0, timeoutSeconds: 1, periodSeconds: periodMs / 1000, successThreshold: 1, failureThreshold: 1, terminationGracePeriodSeconds: null,
        },
      },
      liveness: null,
      startup: null,
      remediation: { maxUnavailable: 1, haltAbovePercentFailing: 50 },
    },
  };
}

const entry = (p: ProbePolicy, created: string): PolicyEntry =>
  ({ key: `shop/${p.metadata.name}`, namespace: 'shop', name: p.metadata.name, uid: `uid-${p.metadata.name}`, generation: 1, created, policy: p, issues: [], stored: undefined });

function pod(gates: readonly string[], conditions: PodCondition[], rv = '1'): Pod {
  return {
    uid: 'uid-1', namespace: 'shop', name: 'web-1', resourceVersion: rv, labels: { app: 'web' }, nodeName: 'n1', phase: 'Running', podIP: '127.0.10.1',
    deletionTimestamp: undefined, restartPolicy: 'Always', terminationGracePeriodSeconds: 30, hostNetwork: false, readinessGates: gates,
    containers: [{ name: 'web', ports: [{ name: 'http', containerPort: 8080 }], env: {}, sidecar: false }],
    containerStatuses: [{ name: 'web', containerId: 'containerd://c1', restartCount: 0, state: 'running', startedAt: 1_699_999_000_000, started: true, ready: true }],
    conditions,
  };
}
const cond = (type: string, status: 'True' | 'False', reason: string): PodCondition => ({ type, status, reason, message: undefined, lastTransitionTime: undefined });

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function setup(entries: PolicyEntry[]) {
  const clock = new FakeClock();
  const scheduler = new Scheduler({ clock, random: () => 0, concurrency: 4 });
  const writes: GateCondition[] = [];
  let rv = 100;
  const gates = new GateWriter({ clock, patch: (_p, condition) => (writes.push(condition), Promise.resolve<GatePatchResult>({ resourceVersion: String(++rv) })) });
  const pods = new Map<string, Pod>();
  const policies = new Map<string, PolicyEntry>(entries.map((e) => [e.key, e]));
  /** Probe outcome by httpGet path. */
  const health = new Map<string, Outcome>();
  const outcome = (path: string): Outcome => health.get(path) ?? { kind: 'success', output: '' };
  const probers: Probers = {
    httpGet: (req) => Promise.resolve(outcome(req.path)),
    tcpSocket: () => Promise.resolve(outcome('tcp')),
    grpc: () => Promise.resolve(outcome('grpc')),
  };
  const events: ControllerEvent[] = [];
  const set = new TargetSet({
    clock, observe: (e) => events.push(e), scheduler, gates, guard: new AddressGuard(['127.0.0.0/8']), probers, policies, pods,
    remediate: () => undefined, owns: () => true, spread: (_k, _p, now) => now, // first passes at once
  });
  const release = new GateRelease({ clock, gates, policies, pods, synced: () => true, owns: () => true });
  const show = (p: Pod, old?: Pod): void => {
    pods.set('shop/web-1', p);
    set.onPod(old === undefined ? 'ADDED' : 'MODIFIED', p, old);
  };
  const pass = async (): Promise<void> => {
    scheduler.step();
    for (let i = 0; i < 5; i++) await flush();
    clock.advance(periodMs);
  };
  const remove = async (key: string): Promise<void> => {
    const e = policies.get(key);
    assert.ok(e);
    policies.delete(key);
    set.policyRemoved(e);
    release.policyChanged(e, undefined);
    for (let i = 0; i < 5; i++) await flush();
  };
  const status = (key: string) => {
    const e = policies.get(key);
    assert.ok(e);
    const unused = (): Promise<never> => Promise.reject(new Error('unused'));
    const remediator = new Remediator({ clock, observe: () => undefined, pod: () => undefined, policy: () => undefined, budgetPods: () => [], stillFailing: () => false, evict: unused, delete: unused });
    return computeStatus({ ...set.statusInput(e, true, remediator), now: '2026-01-01T00:00:00Z' }, undefined);
  };
  return { writes, health, show, pass, remove, status, set, events };
}

describe('foreign readiness gates', () => {
  it('deleting a policy that named another controller\'s gate does not set that gate True', async () => {
    const t = setup([entry(policy('web', neg, '/a'), '2026-01-01T00:00:00Z')]);
    t.show(pod([neg], [cond(neg, 'False', 'LoadBalancerNegNotReady')]));
    await t.pass();
    await t.remove('shop/web');
    assert.equal(t.writes.length, 0, 'the NEG controller\'s False stays');
  });

  it('deleting a policy that named a foreign gate not written yet does not set it True either', async () => {
    const t = setup([entry(policy('web', neg, '/a'), '2026-01-01T00:00:00Z')]);
    t.show(pod([neg], []));
    await t.remove('shop/web');
    assert.equal(t.writes.length, 0);
  });

  it('deleting a policy still fails open over a condition outprobe wrote, and over a missing outprobe.io/ one', async () => {
    const own = setup([entry(policy('web', 'example.com/reachable', '/a'), '2026-01-01T00:00:00Z')]);
    own.health.set('/a', { kind: 'failure', output: 'HTTP probe failed with statuscode: 503' });
    own.show(pod(['example.com/reachable'], [cond('example.com/reachable', 'False', 'ProbeFailed')]));
    await own.remove('shop/web');
    assert.deepEqual(own.writes.map((c) => [c.type, c.status, c.reason]), [['example.com/reachable', 'True', 'PolicyRemoved']]);

    const missing = setup([entry(policy('web', 'outprobe.io/web', '/a'), '2026-01-01T00:00:00Z')]);
    missing.show(pod(['outprobe.io/web'], []));
    await missing.remove('shop/web');
    assert.deepEqual(missing.writes.map((c) => [c.type, c.status, c.reason]), [['outprobe.io/web', 'True', 'PolicyRemoved']]);
  });

  it('never writes nor repairs a condition another writer set, and says so in the policy status', async () => {
    const t = setup([entry(policy('web', neg, '/a'), '2026-01-01T00:00:00Z')]);
    t.health.set('/a', { kind: 'failure', output: 'HTTP probe failed with statuscode: 503' });
    t.show(pod([neg], [cond(neg, 'True', 'LoadBalancerNegReady')]));
    await t.pass();
    await t.pass();
    t.health.delete('/a');
    await t.pass();
    assert.equal(t.writes.length, 0);
    assert.ok(t.events.some((e) => e.type === 'gate-skipped' && e.why === 'foreign'));
    const degraded = t.status('shop/web').conditions.find((c) => c.type === 'Degraded');
    assert.equal(degraded?.reason, 'ForeignCondition');
    assert.match(degraded.message, /1 pod\(s\) carry this condition type written by another writer/);
  });

  it('of two policies writing one condition type on one pod, only the older writes; the younger is reported Invalid', async () => {
    const type = 'outprobe.io/web';
    const older = entry(policy('web', type, '/older'), '2026-01-01T00:00:00Z');
    const younger = entry(policy('attacker', type, '/younger'), '2026-02-01T00:00:00Z');
    const t = setup([younger, older]);
    t.health.set('/younger', { kind: 'failure', output: 'HTTP probe failed with statuscode: 503' });
    t.show(pod([type], [cond(type, 'True', 'ProbeSucceeded')]));
    await t.pass();
    await t.pass();
    assert.equal(t.writes.length, 0, 'the younger policy\'s failures never reach the gate');
    const invalid = t.status('shop/attacker').conditions.find((c) => c.type === 'Invalid');
    assert.equal(invalid?.status, 'True');
    assert.equal(invalid.reason, 'ConditionTypeConflict');
    assert.match(invalid.message, /already written by the older ProbePolicy "web"/);
    assert.equal(t.status('shop/web').conditions.find((c) => c.type === 'Invalid')?.status, 'False');
    assert.ok(t.events.some((e) => e.type === 'gate-conflict' && e.policy.name === 'attacker'));

    // The older one goes: the younger takes the gate over (no fail-open True in between), and is valid again.
    await t.remove('shop/web');
    assert.equal(t.writes.length, 0, 'no PolicyRemoved True while another policy writes the type');
    assert.equal(t.status('shop/attacker').conditions.find((c) => c.type === 'Invalid')?.status, 'False');
    await t.pass();
    assert.deepEqual(t.writes.map((c) => [c.status, c.reason]), [['False', 'ProbeFailed']]);
  });
});
