import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GateRelease } from '../../../src/controller/release.ts';
import type { PolicyEntry } from '../../../src/controller/policies.ts';
import type { Pod, PodCondition } from '../../../src/kube/index.ts';
import type { ProbePolicy } from '../../../src/policy/index.ts';
import { GateWriter } from '../../../src/writeback/index.ts';
import type { GateCondition, GatePatchResult } from '../../../src/writeback/index.ts';
import { FakeClock } from '../../support/fake-clock.ts';

/** The shell of the fail-open rules (ADR 0035): what it queues on the gate writer, and when it does not. */
const gate = 'outprobe.io/web';

function policy(over: { mode?: 'Enforce' | 'Observe'; type?: string } = {}): ProbePolicy {
  return {
    metadata: { name: 'web', namespace: 'shop' },
    spec: {
      selector: { matchLabels: { app: 'web' }, matchExpressions: [] },
      mode: over.mode ?? 'Enforce',
      readiness: {
        conditionType: over.type ?? gate, container: null, maxUnreadyPercent: 50,
        probe: { handler: { type: 'httpGet', path: '/', port: 'http', scheme: 'HTTP', httpHeaders: [] }, initialDelaySeconds: 0, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3, terminationGracePeriodSeconds: null },
      },
      liveness: null, startup: null, remediation: { maxUnavailable: 1, haltAbovePercentFailing: 50 },
    },
  };
}
const entry = (name: string, p: ProbePolicy | undefined): PolicyEntry => ({ key: `shop/${name}`, namespace: 'shop', name, uid: `uid-${name}`, generation: 1, created: '', policy: p, issues: [], stored: undefined });
const cond = (status: 'True' | 'False', reason: string): PodCondition => ({ type: gate, status, reason, message: undefined, lastTransitionTime: undefined });
const pod = (name: string, conditions: PodCondition[]): Pod => ({
  uid: `u-${name}`, namespace: 'shop', name, resourceVersion: '1', labels: { app: 'web' }, nodeName: 'n1', phase: 'Running', podIP: '10.0.0.1',
  deletionTimestamp: undefined, restartPolicy: 'Always', terminationGracePeriodSeconds: 30, hostNetwork: false, readinessGates: [gate],
  containers: [{ name: 'web', ports: [], env: {}, sidecar: false }], containerStatuses: [], conditions,
});

function setup(o: { synced?: boolean; owns?: boolean; fleetLive?: () => boolean } = {}) {
  const clock = new FakeClock();
  const writes: { pod: string; c: GateCondition }[] = [];
  const gates = new GateWriter({ clock, patch: (p, c) => (writes.push({ pod: p.name, c }), Promise.resolve<GatePatchResult>({ resourceVersion: '2' })) });
  const policies = new Map<string, PolicyEntry>();
  const pods = new Map<string, Pod>();
  let synced = o.synced ?? true;
  const release = new GateRelease({ clock, gates, policies, pods, synced: () => synced, owns: () => o.owns ?? true, ...(o.fleetLive === undefined ? {} : { fleetLive: o.fleetLive }) });
  return { clock, writes, policies, pods, release, sync: () => { synced = true; } };
}

describe('GateRelease', () => {
  it('Enforce → Observe: the pod held False is released with the policy named; another writer\'s False is not', () => {
    const t = setup();
    t.pods.set('shop/a', pod('a', [cond('False', 'ProbeFailed')]));
    t.pods.set('shop/b', pod('b', [cond('False', 'ManualHold')]));
    const before = entry('web', policy());
    const after = entry('web', policy({ mode: 'Observe' }));
    t.policies.set(after.key, after);
    t.release.policyChanged(before, after);
    assert.deepEqual(t.writes.map((w) => [w.pod, w.c.status, w.c.reason, w.c.message]), [['a', 'True', 'GateReleased', 'ProbePolicy shop/web is in Observe mode: outprobe no longer writes this gate']]);
  });

  it('nothing while another valid Enforce policy still writes the type there, nor on a pod another replica owns', () => {
    const t = setup();
    t.pods.set('shop/a', pod('a', [cond('False', 'ProbeFailed')]));
    const other = entry('other', policy());
    t.policies.set(other.key, other);
    t.release.policyChanged(entry('web', policy()), undefined);
    assert.equal(t.writes.length, 0);
    const u = setup({ owns: false });
    u.pods.set('shop/a', pod('a', [cond('False', 'ProbeFailed')]));
    u.release.policyChanged(entry('web', policy()), undefined);
    u.release.sweep();
    assert.equal(u.writes.length, 0);
  });

  it('before the caches synced nothing is released (the policy may not be listed yet); the sweep after does it', () => {
    const t = setup({ synced: false });
    t.pods.set('shop/a', pod('a', [cond('False', 'ProbeFailed')]));
    t.release.pod(t.pods.get('shop/a')!);
    t.release.sweep();
    assert.equal(t.writes.length, 0);
    t.sync();
    t.release.sweep();
    assert.deepEqual(t.writes.map((w) => w.c.reason), ['GateReleased']);
  });

  it('orphans: only after the fleet had no live member for longer than the bound', () => {
    let live = false;
    const t = setup({ fleetLive: () => live, owns: false });
    t.pods.set('shop/a', pod('a', [cond('False', 'ProbeFailed')]));
    t.pods.set('shop/b', pod('b', [cond('False', 'ManualHold')]));
    t.release.orphans();
    t.clock.advance(30_000);
    t.release.orphans();
    assert.equal(t.writes.length, 0, 'not before the bound');
    live = true;
    t.release.orphans();
    live = false;
    t.clock.advance(20_000);
    t.release.orphans();
    t.clock.advance(20_000);
    t.release.orphans();
    assert.equal(t.writes.length, 0, 'a live member in between starts the bound again');
    t.clock.advance(10_001);
    t.release.orphans();
    assert.deepEqual(t.writes.map((w) => [w.pod, w.c.reason, w.c.message]), [['a', 'GateReleased', 'No live outprobe replica owned this pod for more than 30 s: outprobe released its gate']]);
  });
});
