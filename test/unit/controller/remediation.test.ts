import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ControllerEvent } from '../../../src/controller/events.ts';
import { policyEntry } from '../../../src/controller/policies.ts';
import { Remediator } from '../../../src/controller/remediation.ts';
import type { RemediationRequest } from '../../../src/controller/remediation.ts';
import type { Pod } from '../../../src/kube/index.ts';
import type { ProbePolicy } from '../../../src/policy/index.ts';
import { computeStatus } from '../../../src/status/index.ts';
import type { DisruptionResult, RemediationLimits } from '../../../src/writeback/index.ts';
import { FakeClock } from '../../support/fake-clock.ts';

/**
 * The installer's remediation limits (issue #10 finding 4), on a fake clock:
 * the reproduction was `selector: {}`, liveness on a closed port, action
 * Delete, maxUnavailable 100%, haltAbovePercentFailing 100 — every pod of the
 * namespace deleted in 3 s.
 */
const limits: RemediationLimits = { perMinute: 10, maxHaltAbovePercentFailing: 50, allowDelete: false };

function policy(): ProbePolicy {
  return {
    metadata: { name: 'all', namespace: 'shop', uid: 'p1' },
    spec: {
      selector: { matchLabels: {}, matchExpressions: [] },
      mode: 'Enforce',
      readiness: null,
      liveness: {
        action: 'Delete',
        container: null,
        probe: {
          handler: { type: 'tcpSocket', port: 1 },
          initialDelaySeconds: 0, timeoutSeconds: 1, periodSeconds: 1, successThreshold: 1, failureThreshold: 1, terminationGracePeriodSeconds: null,
        },
      },
      startup: null,
      remediation: { maxUnavailable: '100%', haltAbovePercentFailing: 100 },
    },
  };
}

function pod(i: number): Pod {
  return {
    uid: `uid-${i}`, namespace: 'shop', name: `web-${i}`, resourceVersion: '1', labels: {}, nodeName: 'n1', phase: 'Running', podIP: `127.0.10.${i + 1}`,
    deletionTimestamp: undefined, restartPolicy: 'Always', terminationGracePeriodSeconds: 30, hostNetwork: false, readinessGates: [],
    containers: [{ name: 'web', ports: [], env: {}, sidecar: false }],
    containerStatuses: [{ name: 'web', containerId: `containerd://c${i}`, restartCount: 0, state: 'running', startedAt: 1_699_999_000_000, started: true, ready: true }],
    conditions: [],
  };
}

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function setup(podCount: number, failing: number, over: { readonly limits?: RemediationLimits; readonly mayAct?: (since: number) => boolean; readonly onHeld?: () => void } = {}) {
  const clock = new FakeClock();
  const pods = Array.from({ length: podCount }, (_, i) => pod(i));
  const calls: string[] = [];
  const events: ControllerEvent[] = [];
  const act = (verb: string) => (target: { readonly name: string }): Promise<DisruptionResult> => {
    calls.push(`${verb} ${target.name}`);
    return Promise.resolve('done');
  };
  const remediator = new Remediator({
    clock,
    observe: (e) => events.push(e),
    pod: (key) => pods.find((p) => `${p.namespace}/${p.name}` === key),
    policy: () => policy(),
    // Ready in the kubelet's view, so maxUnavailable (100%) never holds anything back.
    budgetPods: () => pods.map((p, i) => ({ uid: p.uid, ready: true, failing: i < failing, remediating: false })),
    stillFailing: () => true,
    evict: act('evict'),
    delete: act('delete'),
    ...(over.limits === undefined ? {} : { limits: over.limits }),
    ...(over.mayAct === undefined ? {} : { mayAct: over.mayAct }),
    ...(over.onHeld === undefined ? {} : { onHeld: over.onHeld }),
  });
  const fail = (i: number): void => {
    const p = pods[i];
    assert.ok(p);
    const req: RemediationRequest = {
      policy: 'shop/all', podKey: `shop/${p.name}`, podUid: p.uid, instance: `c${i}#0`, kind: 'liveness', container: 'web', output: 'dial tcp: connection refused', gracePeriodSeconds: null, settleMs: 0,
    };
    remediator.request(req);
  };
  return { clock, remediator, calls, events, fail };
}

void describe('Remediator under the peer write guard (ADR 0017)', () => {
  void it('holds a request until a peer check that started after it succeeded; then acts', async () => {
    let confirmedFrom = Number.POSITIVE_INFINITY;
    let held = 0;
    const s = setup(5, 1, { mayAct: (since) => confirmedFrom >= since, onHeld: () => held++ });
    s.fail(0);
    confirmedFrom = s.clock.now() - 1; // the last success started before the failure: not enough
    s.remediator.step();
    s.remediator.step();
    await flush();
    assert.deepEqual(s.calls, []);
    assert.equal(held, 1, 'reported once');
    s.clock.advance(1000);
    confirmedFrom = s.clock.now();
    s.remediator.step();
    await flush();
    assert.deepEqual(s.calls, ['delete web-0']);
  });
});

void describe('Remediator under the installer\'s limits', () => {
  void it('without limits (the original behaviour) the reproduction deletes every failing pod at once', async () => {
    const s = setup(5, 2);
    for (let i = 0; i < 2; i++) s.fail(i);
    s.remediator.step();
    await flush();
    assert.deepEqual(s.calls, ['delete web-0', 'delete web-1']);
  });

  void it('clamps haltAbovePercentFailing to the ceiling: 3 of 5 failing (60%) halts although the policy says 100', async () => {
    const s = setup(5, 3, { limits });
    for (let i = 0; i < 3; i++) s.fail(i);
    s.remediator.step();
    await flush();
    assert.deepEqual(s.calls, []);
    assert.ok(s.remediator.halted('shop/all'));
    const halt = s.events.find((e) => e.type === 'remediation' && e.result === 'halted');
    assert.ok(halt !== undefined && halt.type === 'remediation');
    assert.match(halt.message, /above haltAbovePercentFailing 50%: remediation halted \(the policy asks 100%; the installer's ceiling applies\)/);
  });

  void it('evicts instead of deleting when Delete is not allowed', async () => {
    const s = setup(5, 2, { limits });
    s.fail(0);
    s.remediator.step();
    await flush();
    assert.deepEqual(s.calls, ['evict web-0']);
    const done = s.events.find((e) => e.type === 'remediation' && e.result === 'evicted');
    assert.ok(done !== undefined && done.type === 'remediation' && done.action === 'Evict');
  });

  void it('sends at most perMinute remediations across policies, then one more per 60/perMinute seconds', async () => {
    // 50 pods, 20 failing (40%, below the ceiling): only 10 go in the first minute.
    const s = setup(50, 20, { limits: { ...limits, allowDelete: true } });
    for (let i = 0; i < 20; i++) s.fail(i);
    s.remediator.step();
    await flush();
    assert.equal(s.calls.length, 10);
    assert.ok(s.calls.every((c) => c.startsWith('delete ')));
    const deferred = s.events.filter((e) => e.type === 'remediation' && e.result === 'rate_limited');
    assert.equal(deferred.length, 10, 'each deferred pod is told once');
    assert.match(deferred[0]?.type === 'remediation' ? deferred[0].message : '', /limit of 10 remediations per minute is reached \(--max-remediations-per-minute\)/);
    s.clock.advance(5_999);
    s.remediator.step();
    await flush();
    assert.equal(s.calls.length, 10, 'no token before 6 s');
    s.clock.advance(1);
    s.remediator.step();
    await flush();
    assert.equal(s.calls.length, 11);
    s.clock.advance(60_000);
    s.remediator.step();
    await flush();
    assert.equal(s.calls.length, 20, 'the rest once the bucket refilled');
  });

  void it('a rate of 0 remediates nothing', async () => {
    const s = setup(5, 1, { limits: { ...limits, perMinute: 0 } });
    s.fail(0);
    s.clock.advance(3_600_000);
    s.remediator.step();
    await flush();
    assert.deepEqual(s.calls, []);
  });

  void it('tells the author in the policy status and an event what the installer overrides', () => {
    const raw = { apiVersion: 'outprobe.io/v1alpha1', kind: 'ProbePolicy', metadata: { name: 'all', namespace: 'shop', uid: 'p1', generation: 1 },
      spec: { selector: {}, liveness: { action: 'Delete', probe: { tcpSocket: { port: 1 } } }, remediation: { maxUnavailable: '100%', haltAbovePercentFailing: 100 } } };
    const entry = policyEntry(raw, { execEnabled: false }, limits);
    assert.deepEqual(entry.limited, [
      "haltAbovePercentFailing 100 is above the installer's ceiling of 50 (--max-halt-above-percent-failing): 50 applies",
      'liveness.action Delete is not allowed by the installer (--allow-delete-action): pods are evicted instead',
    ]);
    const status = computeStatus({ generation: 1, invalid: null, synced: true, pods: 5, ready: 5, failing: 0, ungated: 0, erroring: 0, planIssues: [], remediations: 0, halted: false, limited: entry.limited ?? [], now: '2026-01-01T00:00:00Z' }, undefined);
    const halted = status.conditions.find((c) => c.type === 'RemediationHalted');
    assert.match(halted?.message ?? '', /^Remediation is allowed; haltAbovePercentFailing 100 is above the installer's ceiling of 50 .*; liveness.action Delete is not allowed/);
    // Observe mode remediates nothing, so nothing is overridden.
    assert.deepEqual(policyEntry({ ...raw, spec: { ...raw.spec, mode: 'Observe' } }, { execEnabled: false }, limits).limited, []);
  });
});
