import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ResultJournal, isLoopback, printExplain, printStatus, startDebugServer } from '../../../src/explain/index.ts';
import type { ApiView, PodReport } from '../../../src/explain/index.ts';
import { GateGuards } from '../../../src/controller/gate-guards.ts';
import { loadConfig } from '../../../src/config/index.ts';
import type { ControllerEvent } from '../../../src/controller/index.ts';
import type { TargetPlan } from '../../../src/targets/index.ts';
import type { Pod } from '../../../src/kube/index.ts';
import { FakeClock } from '../../support/fake-clock.ts';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { startDebugEndpoint } from '../../../src/fleet/index.ts';
import type { Config } from '../../../src/config/index.ts';

const plan = (key: string): TargetPlan => ({ key, policy: 'ns/web', podKey: 'ns/p', podUid: 'u1', kind: 'readiness', container: 'app', probe: {} as TargetPlan['probe'], conditionType: 'outprobe.io/web' });
const probe = (key: string, output: string, kind: 'success' | 'failure' = 'failure'): ControllerEvent => ({ type: 'probe', target: plan(key), pod: {} as Pod, outcome: { kind, output }, durationMs: 3.4, observe: false });

describe('ResultJournal', () => {
  it('keeps the last `depth` results per target, oldest first, each output cut; sweep drops targets no longer probed', () => {
    const clock = new FakeClock();
    const j = new ResultJournal({ clock, depth: 3, outputChars: 8 });
    for (let i = 0; i < 5; i++) {
      clock.advance(1000);
      j.observe(probe('a', `answer number ${i}`));
    }
    j.observe(probe('b', 'ok', 'success'));
    const a = j.probes('a');
    assert.equal(a.length, 3);
    assert.deepEqual(a.map((r) => r.output), ['answer n…', 'answer n…', 'answer n…']);
    assert.deepEqual(a.map((r) => r.at - a[0]!.at), [0, 1000, 2000]);
    assert.equal(a[2]?.durationMs, 3);
    assert.equal(j.size, 2);
    j.sweep((k) => k === 'b');
    assert.equal(j.size, 1);
    assert.deepEqual(j.probes('a'), []);
    assert.equal(j.probes('b')[0]?.result, 'success');
  });
});

describe('GateGuards', () => {
  const pod = { namespace: 'ns', name: 'p', uid: 'u1' };
  const falseGate = { type: 'outprobe.io/web', status: 'False', reason: 'ProbeFailed', message: 'm', lastTransitionTime: '' } as never;
  it('keeps why a write is held, guard by guard, since the first refusal; clears it when the write goes', () => {
    const clock = new FakeClock();
    let cap: string | null = 'readiness cap: this replica already holds 2 …';
    let confirmed = true;
    let peerHeld = 0;
    const sent: string[] = [];
    const guards = new GateGuards({
      clock,
      targets: () => ({}) as never,
      readiness: () => ({ whyHeld: () => cap, sending: () => sent.push('sent') }) as never,
      policies: new Map(),
      confirmedSince: () => confirmed,
      onPeerHeld: () => peerHeld++,
    });
    assert.equal(guards.mayWrite(falseGate, 0, { pod, serverStatus: 'True' }), false);
    guards.onHeld();
    const first = guards.heldFor('u1').get('outprobe.io/web');
    assert.equal(first?.guard, 'readiness');
    assert.match(first.reason, /^readiness cap/);
    assert.equal(peerHeld, 0, 'the readiness cap is not the peer guard');
    clock.advance(5000);
    cap = null;
    confirmed = false;
    assert.equal(guards.mayWrite(falseGate, 0, { pod, serverStatus: 'True' }), false);
    guards.onHeld();
    const second = guards.heldFor('u1').get('outprobe.io/web');
    assert.equal(second?.guard, 'peer-guard');
    assert.equal(second.since, first.since, 'held since the first refusal of the same status');
    assert.equal(peerHeld, 1);
    confirmed = true;
    assert.equal(guards.mayWrite(falseGate, 0, { pod, serverStatus: 'True' }), true);
    assert.deepEqual(sent, ['sent']);
    assert.equal(guards.heldFor('u1').size, 0);
    guards.mayWrite({ ...(falseGate as object), status: 'True' } as never, 0, { pod, serverStatus: 'False' });
    assert.equal(guards.heldFor('u1').size, 0, 'a True is never held by the peer guard');
  });
});

const api: ApiView = {
  pod: { namespace: 'shop', name: 'web-1', uid: 'u1', node: 'n1', ip: '198.18.0.7', phase: 'Running', gates: ['outprobe.io/web'], conditions: [{ type: 'outprobe.io/web', status: 'True', reason: 'ProbeSucceeded', message: 'Readiness probe of container app succeeded', lastTransitionTime: '2026-12-07T05:00:00Z' }] },
  policies: [{ key: 'shop/web', summary: 'Enforce, readiness gate outprobe.io/web' }],
  members: [{ identity: 'outprobe-a', node: 'n2', zone: 'b' }, { identity: 'outprobe-b', node: 'n3', zone: null }],
  events: [{ at: '2026-12-07T05:00:00Z', reason: 'ReadinessGateChanged', message: 'Set condition outprobe.io/web to True', from: 'outprobe-a' }],
};
const report: PodReport = {
  version: 1,
  replica: { identity: 'outprobe-a', vantage: 'node n2 (zone b)', standingDown: false },
  at: '2026-12-07T05:01:00Z',
  members: ['outprobe-a', 'outprobe-b'],
  pod: { namespace: 'shop', name: 'web-1', uid: 'u1', node: 'n1', ip: '198.18.0.7', phase: 'Running' },
  owner: 'outprobe-a',
  ownedHere: true,
  noVantage: false,
  targets: [{
    policy: 'shop/web', kind: 'readiness', container: 'app', probe: 'httpGet http :8080/healthz', periodSeconds: 10, successThreshold: 1, failureThreshold: 3,
    state: { committed: 'failure', confirmed: 'failure', lastResult: 'failure', consecutive: 4, onHold: false, stopped: false },
    failingSince: '2026-12-07T05:00:30Z',
    lastTransition: { at: '2026-12-07T05:00:30Z', from: 'success', to: 'failure', cause: 'probe' },
    recent: [{ at: '2026-12-07T05:00:50Z', result: 'failure', output: 'HTTP probe failed with statuscode: 503', durationMs: 2 }],
  }],
  gates: [{ type: 'outprobe.io/web', onPod: { status: 'True', reason: 'ProbeSucceeded', message: null }, desired: { status: 'False', reason: 'ProbeFailed', since: '2026-12-07T05:00:30Z', write: 'held' }, held: { guard: 'second-opinion', reason: 'second opinion: asked another replica …', since: '2026-12-07T05:00:30Z' } }],
  remediation: null,
};

describe('printExplain', () => {
  it('a held False: the gate on the pod, what outprobe wants, the guard and why, the machine and the results', () => {
    const text = printExplain(api, [{ identity: 'outprobe-a', report }, { identity: 'outprobe-b', error: 'kubectl port-forward ended: forbidden' }]);
    const lines = text.split('\n');
    assert.equal(lines[0], 'Pod:          shop/web-1 (uid u1)');
    assert.equal(lines[1], 'Node:         n1   IP: 198.18.0.7   Phase: Running');
    assert.equal(lines[3], '  shop/web: Enforce, readiness gate outprobe.io/web');
    assert.equal(lines[4], 'Owner:        outprobe-a (node n2, zone b)');
    assert.equal(lines[5], 'Vantage:      node n2 (zone b)');
    assert.equal(lines[6], '  (replica outprobe-b could not be asked: kubectl port-forward ended: forbidden)');
    assert.equal(lines[8], '  outprobe.io/web: True ProbeSucceeded since 2026-12-07T05:00:00Z');
    assert.equal(lines[9], '    message: Readiness probe of container app succeeded');
    assert.equal(lines[10], '    outprobe wants: False ProbeFailed (since 2026-12-07T05:00:30Z), write held');
    assert.equal(lines[11], '    HELD since 2026-12-07T05:00:30Z by the second-opinion guard: second opinion: asked another replica …');
    assert.equal(lines[13], '  shop/web readiness container app: httpGet http :8080/healthz, every 10s, success 1 / failure 3');
    assert.equal(lines[14], '    state: committed failure; last result failure ×4 in a row (confirmed failure); on-hold no; failing since 2026-12-07T05:00:30Z');
    assert.equal(lines[15], '    last change: success → failure at 2026-12-07T05:00:30Z (probe)');
    assert.equal(lines[16], '    2026-12-07T05:00:50Z  failure     2 ms  HTTP probe failed with statuscode: 503');
    assert.equal(lines[17], 'Remediation:  none pending');
    assert.equal(lines[19], '  2026-12-07T05:00:00Z  ReadinessGateChanged  Set condition outprobe.io/web to True  (outprobe-a)');
  });

  it('replicas that disagree on the owner (a handover under way) are named', () => {
    const other: PodReport = { ...report, replica: { ...report.replica, identity: 'outprobe-b' }, owner: 'outprobe-b', ownedHere: false };
    const text = printExplain(api, [{ identity: 'outprobe-a', report }, { identity: 'outprobe-b', report: other }]);
    assert.match(text, /^Owner: +outprobe-a \(node n2, zone b\) +replicas disagree: outprobe-a, outprobe-b \(a handover is under way\)$/m);
  });

  it('status: a replica standing down, one not asked, and the policies', () => {
    const fleet = { version: 1 as const, replica: { identity: 'outprobe-a', vantage: null, standingDown: true }, at: '', members: ['outprobe-a'], ready: true, pods: 7, targets: { readiness: 7, liveness: 2, startup: 0 }, gateWrites: { pending: 1, held: 0 }, schedulerLagMs: 3 };
    const text = printStatus(api.members, [{ identity: 'outprobe-a', report: fleet }, { identity: 'outprobe-b', error: 'HTTP 500' }], [{ key: 'shop/web', status: 'Probing', ready: '6/7', failing: '1', notes: ['RemediationHalted: 3 of 7 fail'] }]);
    assert.equal(text, [
      'Replicas (2 live members):',
      '  outprobe-a  node n2, zone b  STANDING DOWN (impaired)  pods 7  targets 7/2/0 (readiness/liveness/startup)  writes pending 1, held 0  lag 3 ms',
      '  outprobe-b  node n3  (not asked: HTTP 500)',
      'Policies (1):',
      '  shop/web  Probing  ready 6/7  failing 1',
      '    RemediationHalted: 3 of 7 fail',
      '',
    ].join('\n'));
  });
});

describe('the debug endpoint', () => {
  it('binds loopback only; GET only; names are checked', async () => {
    assert.ok(isLoopback('127.0.0.1') && isLoopback('127.3.4.5') && isLoopback('::1'));
    assert.ok(!isLoopback('0.0.0.0') && !isLoopback('10.0.0.1') && !isLoopback('::'));
    await assert.rejects(startDebugServer({ host: '0.0.0.0', port: 0, source: { pod: () => ({}), fleet: () => ({}) } }), /loopback only/);
    const asked: string[] = [];
    const s = await startDebugServer({ host: '127.0.0.1', port: 0, source: { pod: (ns, name) => (asked.push(`${ns}/${name}`), { ok: true }), fleet: () => ({ fleet: true }) } });
    try {
      const base = `http://127.0.0.1:${s.port}`;
      assert.deepEqual(await (await fetch(`${base}/debug/pods/shop/web-1`)).json(), { ok: true });
      assert.deepEqual(await (await fetch(`${base}/debug/fleet`)).json(), { fleet: true });
      assert.equal((await fetch(`${base}/debug/pods/Shop/web-1`)).status, 400);
      assert.equal((await fetch(`${base}/debug/pods/shop`)).status, 404);
      assert.equal((await fetch(`${base}/metrics`)).status, 404);
      assert.equal((await fetch(`${base}/debug/fleet`, { method: 'DELETE' })).status, 405);
      assert.deepEqual(asked, ['shop/web-1']);
    } finally {
      await s.close();
    }
  });

  it('--debug-addr: loopback by default, off disables, any other address is refused', () => {
    const env = { POD_NAME: 'outprobe-0', POD_NAMESPACE: 'outprobe', POD_UID: 'uid-0', NODE_NAME: 'node-a', POD_IP: '10.1.2.3' };
    const d = loadConfig([], env);
    assert.ok(d.ok);
    assert.deepEqual(d.config.debug, { host: '127.0.0.1', port: 9446 });
    const off = loadConfig(['--debug-addr', 'off'], env);
    assert.ok(off.ok);
    assert.equal(off.config.debug, undefined);
    const six = loadConfig(['--debug-addr', '[::1]:0'], env);
    assert.ok(six.ok);
    assert.deepEqual(six.config.debug, { host: '::1', port: 0 });
    const open = loadConfig(['--debug-addr', '0.0.0.0:9446'], env);
    assert.ok(!open.ok);
    assert.match(open.message, /loopback/);
  });
});

describe('startDebugEndpoint', () => {
  it('a port another process holds costs the debug endpoint, never the replica: a warning, and it runs on', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as AddressInfo).port;
    const warned: string[] = [];
    const log = { debug: () => undefined, info: () => undefined, warn: (m: string) => warned.push(m), error: () => undefined, child: () => log } as never;
    try {
      const config = { identity: 'r1', self: {}, debug: { host: '127.0.0.1', port } } as unknown as Config;
      const d = await startDebugEndpoint({ config, controller: { targets: { get: () => undefined } } as never, shard: undefined, journal: new ResultJournal({ clock: new FakeClock() }), clock: new FakeClock(), log });
      await d.close();
      assert.equal(warned.length, 1);
      assert.match(warned[0] ?? '', /^debug endpoint not serving/);
    } finally {
      holder.close();
    }
  });
});
