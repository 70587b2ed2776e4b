import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ControllerEvent } from '../../../src/controller/index.ts';
import type { PolicyEntry } from '../../../src/controller/policies.ts';
import type { Remediator } from '../../../src/controller/remediation.ts';
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

/** The divergence view in the target set (ADR 0023): counted incrementally, one Event per transition into it, Observe mode writes nothing. */
const gate = 'outprobe.io/web';

function policy(mode: 'Enforce' | 'Observe'): ProbePolicy {
  return {
    metadata: { name: 'web', namespace: 'shop' },
    spec: {
      selector: { matchLabels: { app: 'web' }, matchExpressions: [] },
      mode,
      readiness: {
        conditionType: gate, container: null, maxUnreadyPercent: 100,
        probe: { handler: { type: 'httpGet', path: '/', port: 8080, scheme: 'HTTP', httpHeaders: [{ name: 'Authorization', value: 'Bearer s3cr3t' }] }, initialDelaySeconds: 0, timeoutSeconds: 1, periodSeconds: 1, successThreshold: 1, failureThreshold: 2, terminationGracePeriodSeconds: null },
      },
      liveness: null,
      startup: null,
      remediation: { maxUnavailable: 1, haltAbovePercentFailing: 50 },
    },
  };
}

function pod(containersReady: 'True' | 'False', since: string | undefined): Pod {
  return {
    uid: 'u1', namespace: 'shop', name: 'web-0', resourceVersion: '1', labels: { app: 'web' }, nodeName: 'n1', phase: 'Running', podIP: '127.0.10.1',
    deletionTimestamp: undefined, hostNetwork: false, restartPolicy: 'Always', terminationGracePeriodSeconds: 30, readinessGates: [gate],
    containers: [{ name: 'web', ports: [], env: {}, sidecar: false }],
    containerStatuses: [{ name: 'web', containerId: 'containerd://1', restartCount: 0, state: 'running', startedAt: 1_600_000_000_000, started: true, ready: true }],
    conditions: [{ type: 'ContainersReady', status: containersReady, reason: undefined, message: undefined, lastTransitionTime: since }],
  };
}

const flush = async (): Promise<void> => {
  for (let i = 0; i < 6; i++) await new Promise((resolve) => setImmediate(resolve));
};

function world(mode: 'Enforce' | 'Observe', initial: Pod) {
  const clock = new FakeClock();
  const events: ControllerEvent[] = [];
  let healthy = true;
  let patches = 0;
  const scheduler = new Scheduler({ clock, random: () => 0, concurrency: 4 });
  const gates = new GateWriter({ clock, patch: () => { patches++; return Promise.resolve<GatePatchResult>({ resourceVersion: '2' }); } });
  const outcome = (): Promise<Outcome> => Promise.resolve(healthy ? { kind: 'success', output: '' } : { kind: 'failure', output: 'HTTP probe failed with statuscode: 503' });
  const probers: Probers = { httpGet: outcome, tcpSocket: outcome, grpc: outcome };
  const pods = new Map<string, Pod>([['shop/web-0', initial]]);
  const entry: PolicyEntry = { key: 'shop/web', namespace: 'shop', name: 'web', uid: 'pu', generation: 1, policy: policy(mode), issues: [], stored: undefined };
  const policies = new Map([[entry.key, entry]]);
  const set = new TargetSet({ clock, observe: (e) => events.push(e), scheduler, gates, guard: new AddressGuard(['127.0.0.0/8']), probers, policies, pods, remediate: () => undefined, owns: () => true, spread: (_k, _p, now) => now, replica: 'r-7' });
  set.policyChanged(entry);
  const remediator = { count: () => 0, halted: () => false } as unknown as Remediator;
  return {
    events,
    set,
    patches: () => patches,
    diverged: () => set.statusInput(entry, true, remediator).diverged,
    setHealthy: (h: boolean) => { healthy = h; },
    updatePod: (p: Pod) => { const old = pods.get('shop/web-0'); pods.set('shop/web-0', p); set.onPod('MODIFIED', p, old); },
    tick: async (n: number) => {
      for (let i = 0; i < n; i++) {
        clock.advance(1000);
        scheduler.step();
        await flush();
      }
    },
    now: () => clock.now(),
  };
}

const divergences = (events: ControllerEvent[]): Extract<ControllerEvent, { type: 'divergence' }>[] =>
  events.flatMap((e) => (e.type === 'divergence' ? [e] : []));

describe('divergence in the target set', () => {
  it('Observe mode: node ready, outprobe failing → counted once with one Event naming both views; no gate written; back to 0 when they agree', async () => {
    const w = world('Observe', pod('True', undefined));
    await w.tick(3);
    assert.equal(w.diverged(), 0, 'agree while healthy');
    w.setHealthy(false);
    await w.tick(4);
    assert.equal(w.diverged(), 1);
    const ds = divergences(w.events);
    assert.equal(ds.length, 1, 'one Event per transition, not per probe');
    assert.equal(ds[0]?.diverged, true);
    assert.equal(ds[0].message, "ProbePolicy web, container web: node says ready (ContainersReady=True), outprobe's readiness probe fails from replica r-7: HTTP probe failed with statuscode: 503");
    assert.ok(!JSON.stringify(ds).includes('s3cr3t'), 'no header value in the Event');
    w.setHealthy(true);
    await w.tick(3);
    assert.equal(w.diverged(), 0);
    assert.deepEqual(divergences(w.events).map((e) => e.diverged), [true, false]);
    assert.equal(w.patches(), 0, 'Observe writes no gate');
  });

  it('a ContainersReady that changed less than a probe period ago is not diverged yet', async () => {
    const w = world('Enforce', pod('False', undefined));
    w.setHealthy(false);
    await w.tick(3);
    assert.equal(w.diverged(), 0, 'both say not ready');
    // The kubelet turns ContainersReady True now while outprobe keeps failing: not stable yet...
    const justNow = new Date(w.now()).toISOString().replace(/\.\d+Z$/, 'Z');
    w.updatePod(pod('True', justNow));
    assert.equal(w.diverged(), 0, 'younger than one period');
    assert.equal(divergences(w.events).length, 0);
    // ...and diverged once it has held for a period (the next pass sees it).
    await w.tick(1);
    assert.equal(w.diverged(), 1);
    assert.equal(divergences(w.events).length, 1);
  });

  it('node not ready while outprobe succeeds is diverged too', async () => {
    const w = world('Enforce', pod('False', undefined));
    await w.tick(3);
    assert.equal(w.diverged(), 1);
    assert.match(divergences(w.events)[0]?.message ?? '', /node says not ready \(ContainersReady=False\), outprobe's readiness probe succeeds from replica r-7/);
  });
});
