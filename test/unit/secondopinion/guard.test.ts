import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SecondOpinionGuard } from '../../../src/secondopinion/index.ts';
import type { AskPeer, PeerAddress, Question, SecondOpinionAnswer, SecondOpinionEvent, SecondOpinionRequest } from '../../../src/secondopinion/index.ts';
import { ranked } from '../../../src/sharding/index.ts';
import { Remediator } from '../../../src/controller/remediation.ts';
import type { Pod } from '../../../src/kube/index.ts';
import type { ProbePolicy } from '../../../src/policy/index.ts';
import { GateWriter } from '../../../src/writeback/index.ts';
import type { GateCondition } from '../../../src/writeback/index.ts';
import { FakeClock } from '../../support/fake-clock.ts';

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const peers: PeerAddress[] = [
  { identity: 'r1', address: 'r1:9' },
  { identity: 'r2', address: 'r2:9' },
  { identity: 'r3', address: 'r3:9' },
];
const pod = { namespace: 'shop', name: 'web-0', uid: 'uid-0' };
const falseGate: GateCondition = { type: 'outprobe.io/web', status: 'False', reason: 'ProbeFailed', message: 'x', lastTransitionTime: '2026-11-25T00:00:00Z', lastProbeTime: '2026-11-25T00:00:00Z' };
const trueGate: GateCondition = { ...falseGate, status: 'True', reason: 'ProbeSucceeded' };

/** A guard for replica r1 whose peers answer what the test says. */
function setup(answer: (address: string) => SecondOpinionAnswer | 'not-served' | Error, peerList: PeerAddress[] = peers) {
  const clock = new FakeClock();
  const asked: { address: string; request: SecondOpinionRequest; at: number }[] = [];
  const events: SecondOpinionEvent[] = [];
  const ask: AskPeer = (address, request) => {
    asked.push({ address, request, at: clock.now() });
    const a = answer(address);
    return a instanceof Error ? Promise.reject(a) : Promise.resolve(a);
  };
  let settled = 0;
  const guard = new SecondOpinionGuard({ clock, identity: 'r1', peers: () => peerList, ask, observe: (e) => events.push(e), onSettled: () => settled++ });
  const question = (since: number): Question => ({ policy: 'shop/web', podUid: pod.uid, probe: 'readiness', since, periodMs: 5000, timeoutMs: 1000, pod, ownView: 'HTTP probe failed with statuscode: 503' });
  return { clock, guard, asked, events, question, settled: () => settled };
}

function remediatorWith(s: ReturnType<typeof setup>, over: { readonly halt?: number; readonly failingPods?: number } = {}) {
  const target: Pod = {
    uid: pod.uid, namespace: 'shop', name: 'web-0', resourceVersion: '1', labels: {}, nodeName: 'n1', phase: 'Running', podIP: '127.0.10.1',
    deletionTimestamp: undefined, restartPolicy: 'Always', terminationGracePeriodSeconds: 30, hostNetwork: false, readinessGates: [],
    containers: [{ name: 'web', ports: [], env: {}, sidecar: false }],
    containerStatuses: [{ name: 'web', containerId: 'containerd://c0', restartCount: 0, state: 'running', startedAt: 1_699_999_000_000, started: true, ready: true }],
    conditions: [],
  };
  const probe = { handler: { type: 'tcpSocket' as const, port: 1 }, initialDelaySeconds: 0, timeoutSeconds: 1, periodSeconds: 5, successThreshold: 1, failureThreshold: 1, terminationGracePeriodSeconds: null };
  const policy: ProbePolicy = {
    metadata: { name: 'web', namespace: 'shop', uid: 'p1' },
    spec: { selector: { matchLabels: {}, matchExpressions: [] }, mode: 'Enforce', readiness: null, liveness: { action: 'Evict', container: null, probe }, startup: null, remediation: { maxUnavailable: '100%', haltAbovePercentFailing: over.halt ?? 100 } },
  };
  const evicted: string[] = [];
  const failing = over.failingPods ?? 1;
  const remediator = new Remediator({
    clock: s.clock,
    observe: () => undefined,
    pod: () => target,
    policy: () => policy,
    budgetPods: () => Array.from({ length: 4 }, (_, i) => ({ uid: i === 0 ? pod.uid : `other-${i}`, ready: true, failing: i < failing, remediating: false })),
    stillFailing: () => true,
    confirmed: (req, since) => s.guard.confirm({ ...s.question(since), probe: req.kind }),
    evict: (p) => {
      evicted.push(p.name);
      return Promise.resolve('done');
    },
    delete: () => Promise.reject(new Error('not asked')),
  });
  remediator.request({ policy: 'shop/web', podKey: 'shop/web-0', podUid: pod.uid, instance: 'containerd://c0#0', kind: 'liveness', container: 'web', output: 'refused', gracePeriodSeconds: null, settleMs: 0 });
  const steps = async (n: number): Promise<void> => {
    for (let i = 0; i < n; i++) {
      remediator.step();
      await flush();
      s.clock.advance(1000);
    }
  };
  return { evicted, steps };
}

void describe('SecondOpinionGuard', () => {
  void it('asks the next replica in the pod\'s rendezvous order (never itself) and proceeds only on agreement', async () => {
    const s = setup(() => ({ result: 'failure', message: 'HTTP probe failed with statuscode: 503' }));
    const since = s.clock.now();
    assert.equal(s.guard.confirm(s.question(since)), false, 'held until the peer answers');
    assert.equal(s.guard.confirm(s.question(since)), false, 'one ask in flight, not two');
    assert.equal(s.asked.length, 1);
    const next = ranked(['r2', 'r3'], pod.uid)[0];
    assert.equal(s.asked[0]?.address, `${next}:9`);
    assert.deepEqual(s.asked.map((a) => a.request)[0], { policy: 'shop/web', podUid: pod.uid, probe: 'readiness' });
    await flush();
    assert.equal(s.settled(), 1);
    assert.equal(s.guard.confirm(s.question(since)), true);
    assert.deepEqual(s.events.map((e) => e.result), ['agreed']);
    // A later failure is not covered by an agreement asked before it.
    s.clock.advance(100);
    assert.equal(s.guard.confirm(s.question(s.clock.now())), false);
    assert.equal(s.asked.length, 2);
  });

  void it('holds on disagreement and asks again only one probe period later', async () => {
    const s = setup(() => ({ result: 'success', message: 'HTTP probe succeeded' }));
    const since = s.clock.now();
    assert.equal(s.guard.confirm(s.question(since)), false);
    await flush();
    assert.deepEqual(s.events.map((e) => e.result), ['disagreed']);
    for (let t = 500; t < 5000; t += 500) {
      s.clock.advance(500);
      assert.equal(s.guard.confirm(s.question(since)), false);
    }
    assert.equal(s.asked.length, 1, 'not asked again within the period');
    s.clock.advance(600);
    assert.equal(s.guard.confirm(s.question(since)), false);
    assert.equal(s.asked.length, 2, 'asked again after one period');
  });

  void it('holds on an error and asks the next peer after the retry delay; a 404 peer is skipped', async () => {
    const order = ranked(['r2', 'r3'], pod.uid);
    const first = `${order[0] ?? ''}:9`;
    const s = setup((address) => (address === first ? new Error('connect ECONNREFUSED') : { result: 'failure', message: 'refused' }));
    const since = s.clock.now();
    assert.equal(s.guard.confirm(s.question(since)), false);
    await flush();
    assert.equal(s.guard.confirm(s.question(since)), false, 'error: held, not asked again at once');
    assert.equal(s.asked.length, 1);
    s.clock.advance(1000);
    assert.equal(s.guard.confirm(s.question(since)), false);
    assert.equal(s.asked[1]?.address, `${order[1] ?? ''}:9`, 'the next peer in the order');
    await flush();
    assert.equal(s.guard.confirm(s.question(since)), true);
    assert.deepEqual(s.events.map((e) => e.result), ['error', 'agreed']);

    const n = setup(() => 'not-served', [peers[0]!, peers[1]!]);
    assert.equal(n.guard.confirm(n.question(n.clock.now())), false);
    await flush();
    assert.equal(n.guard.confirm(n.question(n.clock.now())), true, 'the only peer serves no second opinions: nobody to ask');
  });

  void it('never holds with no peer to ask (one replica, or peers without an address)', () => {
    const s = setup(() => ({ result: 'success', message: '' }), [peers[0]!, { identity: 'r2', address: '' }]);
    assert.equal(s.guard.confirm(s.question(s.clock.now())), true);
    assert.equal(s.asked.length, 0);
  });

  void it('in the GateWriter: the first False waits for agreement and is never sent on disagreement; True and False over False are not asked', async () => {
    let peerSays: 'success' | 'failure' = 'success';
    const s = setup(() => ({ result: peerSays, message: peerSays === 'success' ? '' : 'HTTP probe failed with statuscode: 503' }));
    const sent: string[] = [];
    const gates = new GateWriter({
      clock: s.clock,
      patch: (p, c) => {
        sent.push(`${p.name}=${c.status}`);
        return Promise.resolve({ resourceVersion: '2' });
      },
      mayWrite: (c, since, ctx) => c.status === 'True' || ctx.serverStatus === 'False' || s.guard.confirm({ ...s.question(since), podUid: ctx.pod.uid }),
    });
    gates.desire({ uid: pod.uid, namespace: 'shop', name: 'web-0' }, falseGate, 'True');
    await flush();
    for (let i = 0; i < 20; i++) {
      s.clock.advance(1000);
      gates.sweep();
      await flush();
    }
    assert.deepEqual(sent, [], 'disagreed: nothing written');
    assert.equal(gates.held, 1, 'the hold persists');
    assert.ok(s.asked.length >= 4 && s.asked.length <= 5, `asked once per period: ${s.asked.length}`);
    peerSays = 'failure';
    s.clock.advance(5000);
    gates.sweep();
    await flush();
    gates.sweep();
    await flush();
    assert.deepEqual(sent, ['web-0=False'], 'agreed: written');
    const before = s.asked.length;
    gates.desire({ uid: pod.uid, namespace: 'shop', name: 'web-0' }, { ...falseGate, message: 'another failure' }, 'False');
    gates.desire({ uid: 'uid-2', namespace: 'shop', name: 'web-2' }, trueGate, 'False');
    await flush();
    assert.deepEqual(sent, ['web-0=False', 'web-0=False', 'web-2=True']);
    assert.equal(s.asked.length, before, 'no second opinion for a repeat False or a True');
  });

  void it('in the Remediator: no eviction on disagreement; evicted once a peer agrees', async () => {
    let peerSays: 'success' | 'failure' = 'success';
    const s = setup(() => ({ result: peerSays, message: peerSays === 'success' ? 'ok' : 'dial tcp: connection refused' }));
    const r = remediatorWith(s);
    await r.steps(12);
    assert.deepEqual(r.evicted, [], 'the peer reaches it: no eviction');
    assert.equal(s.asked[0]?.request.probe, 'liveness');
    assert.ok(s.events.every((e) => e.result === 'disagreed'));
    peerSays = 'failure';
    await r.steps(6);
    assert.deepEqual(r.evicted, ['web-0']);
  });

  void it('in the Remediator: a remediation the budget refuses (halted) asks no peer', async () => {
    const s = setup(() => ({ result: 'failure', message: 'refused' }));
    const r = remediatorWith(s, { halt: 50, failingPods: 4 });
    await r.steps(10);
    assert.deepEqual(r.evicted, []);
    assert.equal(s.asked.length, 0);
  });
});
