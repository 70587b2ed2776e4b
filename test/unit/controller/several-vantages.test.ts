import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SeveralVantages } from '../../../src/controller/several-vantages.ts';
import type { PolicyEntry } from '../../../src/controller/policies.ts';
import type { Probers } from '../../../src/controller/runner.ts';
import { TargetSet } from '../../../src/controller/target-set.ts';
import type { Pod, PodCondition } from '../../../src/kube/index.ts';
import type { ProbePolicy, VantageDecision } from '../../../src/policy/index.ts';
import type { Outcome } from '../../../src/probing/index.ts';
import { Scheduler } from '../../../src/probing/index.ts';
import { AddressGuard } from '../../../src/targets/index.ts';
import { ReportSender, parseBatch } from '../../../src/vantage/index.ts';
import type { ReportBatch } from '../../../src/vantage/index.ts';
import { GateWriter } from '../../../src/writeback/index.ts';
import type { GateCondition, GatePatchResult } from '../../../src/writeback/index.ts';
import { FakeClock } from '../../support/fake-clock.ts';

const gate = 'outprobe.io/web';

function policy(count: number, decision: VantageDecision): ProbePolicy {
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
      secondOpinion: false,
      vantage: { spread: 'node', count, decision },
    },
  };
}

function pod(status: 'True' | 'False', reason?: string): Pod {
  const conditions: PodCondition[] = [{ type: gate, status, reason: reason ?? (status === 'True' ? 'ProbeSucceeded' : 'ProbeFailed'), message: undefined, lastTransitionTime: undefined }];
  return {
    uid: 'uid-1', namespace: 'shop', name: 'web-1', resourceVersion: '1', labels: { app: 'web' }, nodeName: 'n1', phase: 'Running', podIP: '127.0.10.1',
    deletionTimestamp: undefined, hostNetwork: false, restartPolicy: 'Always', terminationGracePeriodSeconds: 30, readinessGates: [gate],
    containers: [{ name: 'web', ports: [{ name: 'http', containerPort: 8080 }], env: {}, sidecar: false }],
    containerStatuses: [{ name: 'web', containerId: 'containerd://c1', restartCount: 0, state: 'running', startedAt: 1_699_999_000_000, started: true, ready: true }],
    conditions,
  };
}

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** One replica (`self`) with the pod's vantages fixed: owner first. */
function setup(o: { readonly self: string; readonly vantages: readonly string[]; readonly count: number; readonly decision?: VantageDecision }) {
  const clock = new FakeClock();
  const scheduler = new Scheduler({ clock, random: () => 0, concurrency: 4 });
  const writes: GateCondition[] = [];
  const state = { outcome: { kind: 'success', output: '' } as Outcome, pod: pod('True') };
  const gates = new GateWriter({
    clock,
    patch: (_p, condition) => {
      writes.push(condition);
      state.pod = { ...state.pod, conditions: [{ type: gate, status: condition.status, reason: condition.reason, message: condition.message, lastTransitionTime: condition.lastTransitionTime }] };
      return Promise.resolve<GatePatchResult>({ resourceVersion: '2' });
    },
  });
  const pods = new Map<string, Pod>();
  const policies = new Map<string, PolicyEntry>([['shop/web', { key: 'shop/web', namespace: 'shop', name: 'web', uid: 'p1', generation: 1, policy: policy(o.count, o.decision ?? 'quorum'), issues: [], stored: undefined }]]);
  const probers: Probers = { httpGet: () => Promise.resolve(state.outcome), tcpSocket: () => Promise.resolve(state.outcome), grpc: () => Promise.resolve(state.outcome) };
  const sent: ReportBatch[] = [];
  const sender = new ReportSender({
    identity: o.self,
    addressOf: (id) => `${id}:9444`,
    send: (_address, body) => {
      const parsed = parseBatch(JSON.parse(body));
      if (parsed.ok) sent.push(parsed.batch);
      return Promise.resolve(true);
    },
  });
  const owns = (): boolean => o.vantages[0] === o.self;
  const guard = new AddressGuard(['127.0.0.0/8']);
  const ref: { set: TargetSet | undefined } = { set: undefined };
  const several = new SeveralVantages(
    { vantages: () => o.vantages, placeOf: (id) => `replica ${id}`, sender },
    { clock, identity: o.self, scheduler, probers, guard, policies, pods, gates, owns, ownTarget: (uid, type) => ref.set?.readinessTarget(uid, type) },
  );
  const set = new TargetSet({ clock, observe: () => undefined, scheduler, gates: several.gates(), guard, probers, policies, pods, remediate: () => undefined, owns, spread: (_k, _p, now) => now });
  ref.set = set;
  const show = (): void => {
    pods.set('shop/web-1', state.pod);
    set.onPod('MODIFIED', state.pod, undefined);
  };
  const pass = async (): Promise<void> => {
    several.step();
    scheduler.step();
    for (let i = 0; i < 5; i++) await flush();
    show();
    clock.advance(10_000);
  };
  const report = async (from: string, result: 'success' | 'failure'): Promise<void> => {
    several.accept({ from, reports: [{ policy: 'shop/web', podUid: 'uid-1', result, message: result === 'failure' ? 'timeout' : '' }] });
    for (let i = 0; i < 5; i++) await flush();
    show();
  };
  return { state, writes, sent, several, show, pass, report, last: (): string => writes.map((w) => w.status).at(-1) ?? '' };
}

void describe('several vantages (ADR 0058): the owner writes the combined verdict', () => {
  void it('count 2, quorum: its own failure alone keeps the gate True; the other vantage failing too turns it False at once; it recovering turns it True (no stranded False)', async () => {
    const t = setup({ self: 'r1', vantages: ['r1', 'r2'], count: 2 });
    t.show();
    await t.report('r2', 'success');
    t.state.outcome = { kind: 'failure', output: 'connection refused' };
    for (let i = 0; i < 4; i++) await t.pass();
    assert.ok(!t.writes.some((w) => w.status === 'False'), `no False: ${JSON.stringify(t.writes)}`);
    assert.match(t.writes.at(-1)?.message ?? '', /failed here, but 1 of 2 vantages failing \(vantage.decision quorum\): succeeded from replica r2/);
    const before = t.writes.length;
    // More passes write nothing more (no rewrite per pass), while r2 reports (its refresh).
    for (let i = 0; i < 3; i++) {
      await t.report('r2', 'success');
      await t.pass();
    }
    assert.equal(t.writes.length, before);
    await t.report('r2', 'failure');
    assert.equal(t.last(), 'False');
    assert.match(t.writes.at(-1)?.message ?? '', /2 of 2 vantages failing.*failed from replica r2: timeout/);
    await t.report('r2', 'success');
    assert.equal(t.last(), 'True');
  });

  void it('count 2, quorum: the other vantage failing alone writes nothing', async () => {
    const t = setup({ self: 'r1', vantages: ['r1', 'r2'], count: 2 });
    t.show();
    for (let i = 0; i < 3; i++) await t.pass();
    await t.report('r2', 'failure');
    for (let i = 0; i < 3; i++) await t.pass();
    assert.ok(!t.writes.some((w) => w.status === 'False'));
  });

  void it('a failure below the threshold keeps the last confirmed verdict: the owner does not abstain, the other vantage alone does not turn it False', async () => {
    const t = setup({ self: 'r1', vantages: ['r1', 'r2'], count: 2 });
    t.show();
    for (let i = 0; i < 2; i++) await t.pass();
    t.state.outcome = { kind: 'failure', output: 'timeout' };
    await t.pass();
    await t.report('r2', 'failure');
    assert.ok(!t.writes.some((w) => w.status === 'False'), 'one failure of three is no verdict of failure');
    await t.pass();
    await t.pass();
    assert.equal(t.last(), 'False', 'its own third failure: both vantages fail');
  });

  void it('decision any: one other vantage failing turns it False though its own probes pass', async () => {
    const t = setup({ self: 'r1', vantages: ['r1', 'r2', 'r3'], count: 3, decision: 'any' });
    t.show();
    for (let i = 0; i < 3; i++) await t.pass();
    await t.report('r3', 'failure');
    assert.equal(t.last(), 'False');
    // Its own passes keep it False (the combination, not its own verdict).
    for (let i = 0; i < 3; i++) await t.pass();
    assert.equal(t.last(), 'False');
  });

  void it('decision any, its own failure while the other vantage passes: the False is the rule the user chose, no second opinion (ADR 0070: it would ask that very vantage and veto it)', async () => {
    const t = setup({ self: 'r1', vantages: ['r1', 'r2'], count: 2, decision: 'any' });
    t.show();
    await t.report('r2', 'success');
    t.state.outcome = { kind: 'failure', output: 'connection refused' };
    for (let i = 0; i < 4; i++) await t.pass();
    const falseWrite = t.writes.find((w) => w.status === 'False');
    assert.ok(falseWrite !== undefined, `False under any: ${JSON.stringify(t.writes)}`);
    assert.match(falseWrite.message, /1 of 2 vantages failing \(vantage\.decision any\); succeeded from replica r2/);
    assert.equal(t.several.backed(falseWrite, 'uid-1'), true, 'backed by the other vantages\' verdicts: the second opinion is already in');
  });

  void it('a lone vantage\'s False (the others abstain) still asks for a second opinion, under every decision', async () => {
    for (const decision of ['quorum', 'all', 'any'] as const) {
      const t = setup({ self: 'r1', vantages: ['r1', 'r2'], count: 2, decision });
      t.show();
      t.state.outcome = { kind: 'failure', output: 'connection refused' };
      for (let i = 0; i < 4; i++) await t.pass();
      const falseWrite = t.writes.find((w) => w.status === 'False');
      assert.ok(falseWrite !== undefined, `${decision}: False from its own verdict alone`);
      assert.equal(t.several.backed(falseWrite, 'uid-1'), false, decision);
    }
  });

  void it('count 3, quorum: 2 of 3 failing is False even where its own probes pass; a report of a replica that is not a vantage is not heard', async () => {
    const t = setup({ self: 'r1', vantages: ['r1', 'r2', 'r3'], count: 3 });
    t.show();
    for (let i = 0; i < 3; i++) await t.pass();
    await t.report('r4', 'failure');
    await t.report('r2', 'failure');
    assert.notEqual(t.last(), 'False');
    await t.report('r3', 'failure');
    assert.equal(t.last(), 'False');
  });

  void it('a silent vantage abstains after the stale bound: its owner decides alone (count 1)', async () => {
    const t = setup({ self: 'r1', vantages: ['r1', 'r2'], count: 2 });
    t.show();
    await t.report('r2', 'success');
    t.state.outcome = { kind: 'failure', output: 'connection refused' };
    for (let i = 0; i < 3; i++) await t.pass();
    assert.notEqual(t.last(), 'False');
    // 45 s without a report from r2: the next pass writes its own verdict.
    for (let i = 0; i < 5; i++) await t.pass();
    assert.equal(t.last(), 'False');
  });
});

void describe('several vantages (ADR 0058): another vantage probes and reports', () => {
  void it('runs the state machine on its own probes and reports each committed verdict to the owner, and again on refresh', async () => {
    const t = setup({ self: 'r2', vantages: ['r1', 'r2'], count: 2 });
    t.show();
    await t.pass();
    await t.pass();
    assert.equal(t.several.following, 1);
    t.state.outcome = { kind: 'failure', output: 'timeout' };
    for (let i = 0; i < 4; i++) await t.pass();
    const results = t.sent.flatMap((b) => b.reports.map((r) => `${b.from}:${r.result}`));
    assert.ok(results.includes('r2:success'), results.join(','));
    assert.equal(results.at(-1), 'r2:failure');
    assert.equal(t.writes.length, 0, 'it writes no gate');
    assert.match(t.sent.at(-1)?.reports[0]?.message ?? '', /timeout/);
    // Between the first failure and the third it said success still, never unknown.
    assert.ok(!results.slice(results.indexOf('r2:success')).includes('r2:unknown'), results.join(','));
  });

  void it('the owner follows nothing; count 1 follows nothing', async () => {
    const owner = setup({ self: 'r1', vantages: ['r1', 'r2'], count: 2 });
    owner.show();
    await owner.pass();
    assert.equal(owner.several.following, 0);
    const one = setup({ self: 'r2', vantages: ['r1', 'r2'], count: 1 });
    one.show();
    await one.pass();
    assert.equal(one.several.following, 0);
  });
});
