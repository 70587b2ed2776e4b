import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TargetSet } from '../../../src/controller/target-set.ts';
import type { PolicyEntry } from '../../../src/controller/policies.ts';
import type { Probers } from '../../../src/controller/runner.ts';
import type { Pod, PodCondition } from '../../../src/kube/index.ts';
import type { ProbePolicy } from '../../../src/policy/index.ts';
import { Scheduler } from '../../../src/probing/index.ts';
import type { Outcome, Share } from '../../../src/probing/index.ts';
import { AddressGuard } from '../../../src/targets/index.ts';
import { GateWriter } from '../../../src/writeback/index.ts';
import type { GateCondition, GatePatchResult } from '../../../src/writeback/index.ts';
import { FakeClock } from '../../support/fake-clock.ts';

/**
 * The target set between the informer and the gate writer, driven by a fake
 * clock: what it writes when the pod's gate condition was written by someone
 * else (a previous owner during a handover) around the target's first passes.
 */
const gate = 'outprobe.io/web';
const periodMs = 10_000;

function policy(failureThreshold: number): ProbePolicy {
  return {
    metadata: { name: 'web', namespace: 'shop' },
    spec: {
      selector: { matchLabels: { app: 'web' }, matchExpressions: [] },
      mode: 'Enforce',
      readiness: {
        conditionType: gate,
        container: null,
        // One pod: the panic threshold (ADR 0015) is off so a failure is written False.
        maxUnreadyPercent: 100,
        probe: {
          handler: { type: 'httpGet', path: '/healthz', port: 'http', scheme: 'HTTP', httpHeaders: [] },
          initialDelaySeconds: 0, timeoutSeconds: 1, periodSeconds: periodMs / 1000, successThreshold: 1, failureThreshold, terminationGracePeriodSeconds: null,
        },
      },
      liveness: null,
      startup: null,
      remediation: { maxUnavailable: 1, haltAbovePercentFailing: 50 },
    },
  };
}

function pod(resourceVersion: string, status?: 'True' | 'False'): Pod {
  const conditions: PodCondition[] = status === undefined ? [] : [{ type: gate, status, reason: status === 'True' ? 'ProbeSucceeded' : 'ProbeFailed', message: undefined, lastTransitionTime: undefined }];
  return {
    uid: 'uid-1', namespace: 'shop', name: 'web-1', resourceVersion, labels: { app: 'web' }, nodeName: 'n1', phase: 'Running', podIP: '127.0.10.1',
    deletionTimestamp: undefined, hostNetwork: false, restartPolicy: 'Always', terminationGracePeriodSeconds: 30, readinessGates: [gate],
    containers: [{ name: 'web', ports: [{ name: 'http', containerPort: 8080 }], env: {}, sidecar: false }],
    containerStatuses: [{ name: 'web', containerId: 'containerd://c1', restartCount: 0, state: 'running', startedAt: 1_699_999_000_000, started: true, ready: true }],
    conditions,
  };
}

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function setup(failureThreshold: number, onPassStart?: (share: Share, lagMs: number) => void) {
  const clock = new FakeClock();
  const scheduler = new Scheduler({ clock, random: () => 0, concurrency: 4, ...(onPassStart === undefined ? {} : { onPassStart }) });
  const writes: GateCondition[] = [];
  let rv = 100;
  const gates = new GateWriter({ clock, patch: (_p, condition) => (writes.push(condition), Promise.resolve<GatePatchResult>({ resourceVersion: String(++rv) })) });
  const pods = new Map<string, Pod>();
  const policies = new Map<string, PolicyEntry>([['shop/web', { key: 'shop/web', namespace: 'shop', name: 'web', uid: 'p1', generation: 1, policy: policy(failureThreshold), issues: [], stored: undefined }]]);
  const health = { outcome: { kind: 'success', output: '' } as Outcome };
  const probers: Probers = {
    httpGet: () => Promise.resolve(health.outcome),
    tcpSocket: () => Promise.resolve(health.outcome),
    grpc: () => Promise.resolve(health.outcome),
  };
  let owned = true;
  const set = new TargetSet({
    clock, observe: () => undefined, scheduler, gates, guard: new AddressGuard(['127.0.0.0/8']), probers, policies, pods,
    remediate: () => undefined, owns: () => owned, spread: (_k, _p, now) => now, // first passes at once (the kubelet's worker born later)
  });
  const show = (p: Pod, old?: Pod): void => {
    pods.set('shop/web-1', p);
    set.onPod(old === undefined ? 'ADDED' : 'MODIFIED', p, old);
  };
  /** One period later: the pass runs and its writes complete. */
  const pass = async (): Promise<void> => {
    scheduler.step();
    for (let i = 0; i < 5; i++) await flush();
    clock.advance(periodMs);
  };
  return { clock, gates, writes, health, show, pass, lose: () => (owned = false), set };
}

describe('TargetSet gate writes around a handover', () => {
  it('never writes the initial False of a first instance over a condition that arrived after the target was created', async () => {
    const t = setup(3);
    const first = pod('1'); // the informer showed no condition when the target was created: not seeded
    t.show(first);
    const later = pod('2', 'True'); // the previous owner's True arrives before the first pass
    t.show(later, first);
    t.health.outcome = { kind: 'failure', output: 'HTTP probe failed with statuscode: 503' };
    await t.pass();
    await t.pass();
    assert.equal(t.writes.length, 0, 'below the failure threshold the pod keeps what it shows');
    await t.pass();
    assert.deepEqual(t.writes.map((c) => [c.status, c.reason, c.message]), [['False', 'ProbeFailed', 'Readiness probe failed: HTTP probe failed with statuscode: 503']]);
  });

  it('writes a seeded True back after the next success when a late False of the previous owner lands', async () => {
    const t = setup(3);
    const seeded = pod('1', 'True');
    t.show(seeded);
    await t.pass();
    assert.equal(t.writes.length, 0, 'the inherited True, confirmed: nothing to write');
    const late = pod('7', 'False');
    t.show(late, seeded);
    await t.pass();
    assert.deepEqual(t.writes.map((c) => [c.status, c.reason]), [['True', 'ProbeSucceeded']]);
    // The informer shows the repair; steady state writes nothing more.
    t.show(pod('101', 'True'), late);
    await t.pass();
    await t.pass();
    assert.equal(t.writes.length, 1);
  });

  it('a pod this replica lost is neither probed nor written any more', async () => {
    const t = setup(1);
    const p = pod('1', 'True');
    t.show(p);
    t.health.outcome = { kind: 'failure', output: 'HTTP probe failed with statuscode: 503' };
    await t.pass();
    assert.equal(t.writes.length, 1, 'False written while owned');
    t.lose();
    const other = pod('2', 'True'); // the new owner's write
    t.show(other, p);
    assert.equal(t.set.size, 0, 'targets dropped');
    assert.equal(t.gates.desired('uid-1', gate), undefined, 'writes forgotten');
    await t.pass();
    assert.equal(t.writes.length, 1);
  });
});

describe('TargetSet hands targets to the scheduler', () => {
  it("with the pod's namespace and the policy as the target's fair share", async () => {
    const starts: [Share, number][] = [];
    const t = setup(3, (share, lagMs) => starts.push([share, lagMs]));
    t.show(pod('1', 'True'));
    await t.pass();
    assert.deepEqual(starts, [[{ namespace: 'shop', policy: 'shop/web' }, 0]]);
  });
});
