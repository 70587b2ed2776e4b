import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TargetSet } from '../../../src/controller/target-set.ts';
import type { ControllerEvent } from '../../../src/controller/events.ts';
import type { PolicyEntry } from '../../../src/controller/policies.ts';
import type { Probers } from '../../../src/controller/runner.ts';
import type { Pod, PodCondition } from '../../../src/kube/index.ts';
import type { ProbePolicy } from '../../../src/policy/index.ts';
import { Scheduler } from '../../../src/probing/index.ts';
import { AddressGuard } from '../../../src/targets/index.ts';
import { GateWriter } from '../../../src/writeback/index.ts';
import type { GateCondition, GatePatchResult } from '../../../src/writeback/index.ts';
import { FakeClock } from '../../support/fake-clock.ts';

/**
 * The readiness cap counted across the replicas (issue 26 deliverable 3, ADR 0032): three
 * replicas r1, r2, r3 each own 8 of a policy's 24 gated pods; maxUnreadyPercent 33 → the policy
 * may have 7 False gates. This is r1, its pods all failing. Under ADR 0015's per-replica rule it
 * held ⌊33 % × 8⌋ = 2 False whatever the others held; now it holds within its share (3 of 7) less
 * what the others' pods show False, and a False decided while it fitted is not sent once it no
 * longer does (the GateWriter asks at send time, as the controller wires it).
 */
const periodMs = 1000;
const gate = 'outprobe.io/web';
const members = ['r1', 'r2', 'r3'];
const self = 'r1';

const policy: ProbePolicy = {
  metadata: { name: 'web', namespace: 'shop' },
  spec: {
    selector: { matchLabels: { app: 'web' }, matchExpressions: [] },
    mode: 'Enforce',
    readiness: {
      conditionType: gate,
      container: null,
      maxUnreadyPercent: 33,
      probe: {
        handler: { type: 'httpGet', path: '/healthz', port: 'http', scheme: 'HTTP', httpHeaders: [] },
        initialDelaySeconds: 0, timeoutSeconds: 1, periodSeconds: periodMs / 1000, successThreshold: 1, failureThreshold: 1, terminationGracePeriodSeconds: null,
      },
    },
    liveness: null,
    startup: null,
    remediation: { maxUnavailable: 1, haltAbovePercentFailing: 50 },
  },
};
const entry: PolicyEntry = { key: 'shop/web', namespace: 'shop', name: 'web', uid: 'uid-web', generation: 1, created: '2026-01-01T00:00:00Z', policy, issues: [], stored: undefined };

/** Pod i is owned by members[i % 3] (a stand-in for rendezvous: any owner function the replicas agree on). */
const ownerOf = (uid: string): string => members[Number(uid.slice(4)) % 3] ?? '';

function pod(i: number, status: 'True' | 'False' | undefined, rv = 1): Pod {
  const at = '2023-11-14T22:00:00Z'; // before the test's clock: a condition written earlier
  const conditions: PodCondition[] = status === undefined ? [] : [{ type: gate, status, reason: status === 'True' ? 'ProbeSucceeded' : 'ProbeFailed', message: undefined, lastTransitionTime: at }];
  return {
    uid: `pod-${i}`, namespace: 'shop', name: `web-${i}`, resourceVersion: String(rv), labels: { app: 'web' }, nodeName: 'n1', phase: 'Running', podIP: `127.0.20.${i + 1}`,
    deletionTimestamp: undefined, restartPolicy: 'Always', terminationGracePeriodSeconds: 30, hostNetwork: false, readinessGates: [gate],
    containers: [{ name: 'web', ports: [{ name: 'http', containerPort: 8080 }], env: {}, sidecar: false }],
    containerStatuses: [{ name: 'web', containerId: `containerd://c${i}`, restartCount: 0, state: 'running', startedAt: 1_699_999_000_000, started: true, ready: true }],
    conditions,
  };
}

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function setup() {
  const clock = new FakeClock();
  const scheduler = new Scheduler({ clock, random: () => 0, concurrency: 64 });
  const sent: { pod: string; condition: GateCondition }[] = [];
  let rv = 100;
  const pods = new Map<string, Pod>();
  const policies = new Map<string, PolicyEntry>([[entry.key, entry]]);
  const fail = { kind: 'failure', output: 'HTTP probe failed with statuscode: 503' } as const;
  const probers: Probers = { httpGet: () => Promise.resolve(fail), tcpSocket: () => Promise.resolve(fail), grpc: () => Promise.resolve(fail) };
  const events: ControllerEvent[] = [];
  // The controller's wiring: the readiness guard is asked right before every send.
  const holder: { set?: TargetSet } = {};
  const gates = new GateWriter({
    clock,
    patch: (p, condition) => {
      sent.push({ pod: p.name, condition });
      return Promise.resolve<GatePatchResult>({ resourceVersion: String(++rv) });
    },
    mayWrite: (c, _since, ctx) => {
      const guard = holder.set?.readiness;
      if (guard === undefined) return true;
      if (!guard.maySend(c, ctx.pod)) return false;
      guard.sending(c, ctx.pod);
      return true;
    },
  });
  const set = new TargetSet({
    clock, observe: (e) => events.push(e), scheduler, gates, guard: new AddressGuard(['127.0.0.0/8']), probers, policies, pods,
    remediate: () => undefined, owns: (p) => ownerOf(p.uid) === self, spread: (_k, _p, now) => now,
    replica: self, fleet: { members: () => members, owner: (_m, uid) => ownerOf(uid) },
  });
  holder.set = set;
  const show = (p: Pod): void => {
    const old = pods.get(`shop/${p.name}`);
    pods.set(`shop/${p.name}`, p);
    set.onPod(old === undefined ? 'ADDED' : 'MODIFIED', p, old);
  };
  /** One probe period: every due target probes (all fail), then a controller step. */
  const period = async (): Promise<void> => {
    scheduler.step();
    for (let i = 0; i < 5; i++) await flush();
    set.panicStep();
    gates.sweep();
    for (let i = 0; i < 5; i++) await flush();
    clock.advance(periodMs);
  };
  const falseSent = (): string[] => [...new Set(sent.filter((s) => s.condition.status === 'False').map((s) => s.pod))];
  return { show, period, set, gates, sent, falseSent, events };
}

describe('the readiness cap across replicas (ADR 0032)', () => {
  it('r1 adds only what the policy\'s cap leaves: 6 False on the others\' pods, cap 7 → at most 1 of its own 8 failing pods False', async () => {
    const t = setup();
    const othersFalse = [1, 2, 4, 5, 7, 8]; // pods of r2 and r3 (i % 3 ≠ 0), False as their owners wrote them
    for (let i = 0; i < 24; i++) t.show(pod(i, ownerOf(`pod-${i}`) === self ? 'True' : othersFalse.includes(i) ? 'False' : 'True'));
    for (let k = 0; k < 8; k++) await t.period();
    const mine = t.falseSent();
    assert.ok(mine.length <= 1, `r1 sent False for ${mine.length} pods (${mine.join(', ')}); with the others' 6 the policy has ${6 + mine.length} > 7`);
    assert.equal(mine.length, 1, 'and it holds the one it may');
    const report = t.set.panicReport('shop/web');
    assert.ok(report !== null);
    assert.equal(report.panic, true);
    assert.deepEqual({ failing: report.counts.failing, held: report.counts.held }, { failing: 8, held: 1 }, 'the other 7 fail open');
    assert.equal(report.counts.maxUnready, 3, 'its share of the cap is reported (the status sums the shares: 7)');
  });

  it('a False decided within the allowance is not sent once the others\' gates took it: the check is at send time', async () => {
    const t = setup();
    for (let i = 0; i < 24; i++) t.show(pod(i, 'True'));
    // r1's 8 pods fail within one probe period: the first goes out alone; once a second one has
    // arrived they wait a period, and with more than its share (3) within one window they are held.
    await t.period();
    assert.ok(t.falseSent().length <= 1, `sent before the hold: ${t.falseSent().join(', ')}`);
    const before = t.falseSent().length;
    assert.ok(t.events.some((e) => e.type === 'readiness-hold' && e.holding), 'the hold is reported');
    const decided = t.set.panicReport('shop/web');
    assert.equal(decided?.counts.held, 3, 'the decision holds its share: 3 False desired');
    // Meanwhile the other replicas' pods turn False (6 of their 16): cap 7 − 6 leaves r1 one, taken.
    for (const i of [1, 2, 4, 5, 7, 8]) t.show(pod(i, 'False', 2));
    // The hold is over (one window: period 1 s × failureThreshold 1). The GateWriter retries its
    // held writes before the panic threshold is decided again: only the send-time check stops them.
    t.gates.sweep();
    for (let i = 0; i < 5; i++) await flush();
    assert.equal(t.falseSent().length, before, `sent at the sweep: ${t.falseSent().join(', ')}`);
    for (let k = 0; k < 6; k++) await t.period();
    assert.ok(t.falseSent().length <= 1, `sent False for ${t.falseSent().join(', ')}`);
  });

  it('gates already False on pods it took over count against its share', async () => {
    const t = setup();
    // r1 inherits 3 False gates (its share) from a replica that owned them before; its probes fail everywhere.
    for (let i = 0; i < 24; i++) t.show(pod(i, [0, 3, 6].includes(i) ? 'False' : 'True'));
    for (let k = 0; k < 8; k++) await t.period();
    const newFalse = t.falseSent().filter((p) => !['web-0', 'web-3', 'web-6'].includes(p));
    assert.deepEqual(newFalse, [], 'no False beyond the 3 it inherited');
  });
});
