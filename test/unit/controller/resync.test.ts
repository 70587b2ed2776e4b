import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GateGuards } from '../../../src/controller/gate-guards.ts';
import { Resync, gateOwnership } from '../../../src/controller/resync.ts';
import type { ReadinessGuard } from '../../../src/controller/readiness-guard.ts';
import type { TargetSet } from '../../../src/controller/target-set.ts';
import type { Pod } from '../../../src/kube/index.ts';
import { owner } from '../../../src/sharding/rendezvous.ts';
import { GateWriter } from '../../../src/writeback/index.ts';
import type { GateCondition, PodRef } from '../../../src/writeback/index.ts';
import { FakeClock } from '../../support/fake-clock.ts';

/**
 * A resync after a shard membership change (issue 31 item 1, ADR 0072): in
 * slices of `sliceMs` with the event loop's turns in between (an injected
 * clock and yield), losses first, and no write for a lost pod in between.
 */
const gate = 'outprobe.io/web';

function pod(i: number): Pod {
  return {
    uid: `uid-${i}`, namespace: 'shop', name: `web-${i}`, resourceVersion: '1', labels: { app: 'web' }, nodeName: 'n1', phase: 'Running', podIP: `127.0.10.${i}`,
    deletionTimestamp: undefined, hostNetwork: false, restartPolicy: 'Always', terminationGracePeriodSeconds: 30, readinessGates: [gate],
    containers: [{ name: 'web', ports: [{ name: 'http', containerPort: 8080 }], env: {}, sidecar: false }],
    containerStatuses: [], conditions: [],
  };
}
const keyOf = (p: Pod): string => `${p.namespace}/${p.name}`;
const refOf = (p: Pod): PodRef => ({ uid: p.uid, namespace: p.namespace, name: p.name });

/** One replica's view: its members, its target set reduced to the pods it holds targets for. */
class Replica {
  members: readonly string[];
  readonly held = new Set<string>();
  readonly identity: string;
  constructor(identity: string, members: readonly string[]) {
    this.identity = identity;
    this.members = members;
  }
  owns = (p: Pod): boolean => owner(this.members, p.uid) === this.identity;
  /** What TargetSet.reconcilePod does to the held set: targets while owned, none after. */
  reconcile = (p: Pod): void => {
    if (this.owns(p)) this.held.add(keyOf(p));
    else this.held.delete(keyOf(p));
  };
}

describe('resync in slices (ADR 0072)', () => {
  it('yields whenever a slice is spent, plans the lost pods first, then every pod, then runs done once', async () => {
    const clock = new FakeClock();
    const pods = new Map<string, Pod>();
    for (let i = 0; i < 30; i++) pods.set(keyOf(pod(i)), pod(i));
    const a = new Replica('a', ['a']);
    for (const p of pods.values()) a.reconcile(p);
    assert.equal(a.held.size, 30);
    a.members = ['a', 'b'];
    const lostKeys = [...pods.values()].filter((p) => !a.owns(p)).map(keyOf);
    assert.ok(lostKeys.length > 5 && lostKeys.length < 25, `rendezvous splits the pods (${lostKeys.length} lost)`);
    const log: string[] = [];
    let done = 0;
    const resync = new Resync({
      clock, pods, held: () => a.held, owns: a.owns,
      reconcile: (p) => {
        log.push(keyOf(p));
        a.reconcile(p);
        clock.advance(20); // 20 ms of planning per pod: a 50 ms slice holds 3
      },
      done: () => done++,
      sliceMs: 50,
      yieldTurn: () => {
        log.push('yield');
        return Promise.resolve();
      },
    });
    const r = await resync.run();
    assert.equal(done, 1);
    assert.deepEqual({ lost: r.lost, planned: r.planned, superseded: r.superseded }, { lost: lostKeys.length, planned: 30, superseded: false });
    // Never more than 3 pods (60 ms) between two turns of the loop.
    let run = 0;
    for (const e of log) {
      run = e === 'yield' ? 0 : run + 1;
      assert.ok(run <= 3, `more than one slice without a turn: ${log.join(' ')}`);
    }
    assert.equal(r.yields, log.filter((e) => e === 'yield').length);
    assert.ok(r.yields >= Math.floor((lostKeys.length + 30) / 3) - 1);
    // Losses first: the first lost.length pods planned are exactly the lost ones.
    const planned = log.filter((e) => e !== 'yield');
    assert.deepEqual(new Set(planned.slice(0, lostKeys.length)), new Set(lostKeys));
    // None dropped: it holds targets for exactly the pods it owns now.
    assert.deepEqual(new Set(a.held), new Set([...pods.values()].filter(a.owns).map(keyOf)));
  });

  it('skips a pod deleted while it yielded and plans a changed one as it is now', async () => {
    const clock = new FakeClock();
    const pods = new Map<string, Pod>();
    for (let i = 0; i < 6; i++) pods.set(keyOf(pod(i)), pod(i));
    const seen: Pod[] = [];
    let turns = 0;
    const changed = { ...pod(5), resourceVersion: '2' };
    const resync = new Resync({
      clock, pods, held: () => [], owns: () => true,
      reconcile: (p) => {
        seen.push(p);
        clock.advance(50);
      },
      sliceMs: 50,
      yieldTurn: () => {
        if (++turns === 1) {
          pods.delete('shop/web-3');
          pods.set('shop/web-5', changed);
        }
        return Promise.resolve();
      },
    });
    await resync.run();
    assert.deepEqual(seen.map((p) => p.name), ['web-0', 'web-1', 'web-2', 'web-4', 'web-5']);
    assert.equal(seen.at(-1), changed);
  });

  it('a newer resync supersedes one still running; the controller stop ends one', async () => {
    const clock = new FakeClock();
    const pods = new Map<string, Pod>();
    for (let i = 0; i < 10; i++) pods.set(keyOf(pod(i)), pod(i));
    let done = 0;
    let second: Promise<unknown> | undefined;
    const resync = new Resync({
      clock, pods, held: () => [], owns: () => true,
      reconcile: () => clock.advance(50),
      done: () => done++,
      sliceMs: 50,
      yieldTurn: () => {
        second ??= resync.run();
        return Promise.resolve();
      },
    });
    const first = await resync.run();
    assert.equal(first.superseded, true);
    assert.ok(first.planned < 10);
    assert.deepEqual(await second, { lost: 0, planned: 10, yields: 9, longestSliceMs: 50, collectMs: 0, superseded: false });
    assert.equal(done, 1);
    assert.equal(resync.running, false);
    const stop = new AbortController();
    stop.abort();
    const stopped = await resync.run(stop.signal);
    assert.equal(stopped.superseded, true);
    assert.equal(done, 1);
  });

  it('between slices, a gate write queued for a pod this replica lost is not sent; the gainer writes it; one writer per pod at every turn', async () => {
    const clock = new FakeClock();
    const pods = new Map<string, Pod>();
    for (let i = 0; i < 40; i++) pods.set(keyOf(pod(i)), pod(i));
    const a = new Replica('a', ['a']);
    const b = new Replica('b', ['a']);
    for (const p of pods.values()) a.reconcile(p);
    const sent: { replica: string; uid: string }[] = [];
    let failing = true;
    const writerOf = (r: Replica): { gates: GateWriter; guards: GateGuards } => {
      const guards = new GateGuards({
        clock,
        targets: () => undefined as unknown as TargetSet,
        readiness: () => ({ whyHeld: () => null, sending: () => undefined }) as unknown as ReadinessGuard,
        policies: new Map(),
        owns: gateOwnership(r.owns, () => pods),
      });
      const gates = new GateWriter({
        clock,
        mayWrite: guards.mayWrite,
        patch: (ref) => {
          if (failing) return Promise.reject(new Error('API server unavailable'));
          sent.push({ replica: r.identity, uid: ref.uid });
          return Promise.resolve({ resourceVersion: '2' });
        },
      });
      return { gates, guards };
    };
    const wa = writerOf(a);
    const wb = writerOf(b);
    const trueGate: GateCondition = { type: gate, status: 'True', reason: 'ProbeSucceeded', message: 'ok', lastTransitionTime: '2026-01-01T00:00:00Z', lastProbeTime: '2026-01-01T00:00:00Z' };
    // Replica a wants every gate True; the API server fails the first attempt, so the writes wait for a retry.
    for (const p of pods.values()) wa.gates.desire(refOf(p), trueGate, undefined);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(sent.length, 0);
    failing = false;
    // b joins: both see members [a, b]. Each resyncs in slices; between slices the loop runs
    // their other work (a retry sweep of failed gate writes, a verdict on a gained pod).
    a.members = ['a', 'b'];
    b.members = ['a', 'b'];
    const lost = [...pods.values()].filter((p) => !a.owns(p));
    assert.ok(lost.length > 5);
    let turns = 0;
    const turn = async (): Promise<void> => {
      turns++;
      clock.advance(1000);
      wa.gates.sweep();
      for (const p of pods.values()) if (b.held.has(keyOf(p))) wb.gates.desire(refOf(p), trueGate, undefined);
      await new Promise((resolve) => setImmediate(resolve));
      // At every turn: no pod is written by both replicas, and a writes none it lost.
      const byPod = new Map<string, Set<string>>();
      for (const s of sent) byPod.set(s.uid, (byPod.get(s.uid) ?? new Set()).add(s.replica));
      for (const [uid, writers] of byPod) assert.equal(writers.size, 1, `${uid} written by ${[...writers].join(' and ')}`);
      for (const p of lost) assert.ok(!sent.some((s) => s.replica === 'a' && s.uid === p.uid), `a wrote ${p.name} after losing it`);
    };
    const resyncOf = (r: Replica, g: { gates: GateWriter }): Resync => new Resync({
      clock, pods, held: () => r.held, owns: r.owns,
      reconcile: (p) => {
        r.reconcile(p);
        if (!r.owns(p)) g.gates.forget(p.uid); // as TargetSet.reconcilePod does for a lost pod
        clock.advance(25);
      },
      sliceMs: 50,
      yieldTurn: turn,
    });
    await Promise.all([resyncOf(a, wa).run(), resyncOf(b, wb).run()]);
    await turn();
    assert.ok(turns >= 10, `${turns} turns`);
    // a wrote the pods it kept, b the ones it gained: every pod written once, by its owner now.
    assert.deepEqual(new Set(sent.map((s) => s.uid)), new Set([...pods.values()].map((p) => p.uid)));
    for (const s of sent) assert.equal(owner(['a', 'b'], s.uid), s.replica);
    assert.deepEqual(new Set([...a.held, ...b.held]), new Set(pods.keys()), 'none dropped');
    assert.equal(wa.guards.heldFor(lost[0]?.uid ?? '').size, 0, 'forgotten once the resync reached it');
  });

  it('a replica that owns no verdict on the pod still sends a fail-open True (a release, NoVantage), and no verdict', () => {
    // The orphan release is by definition written by a replica that owns nothing (test/integration/release.test.ts
    // 'orphans' caught the ownership check holding it).
    const guards = new GateGuards({
      clock: new FakeClock(),
      targets: () => undefined as unknown as TargetSet,
      readiness: () => ({ whyHeld: () => null, sending: () => undefined }) as unknown as ReadinessGuard,
      policies: new Map(),
      owns: () => false,
    });
    const ctx = { pod: refOf(pod(1)), serverStatus: 'False' };
    const cond = (status: 'True' | 'False', reason: string): GateCondition => ({ type: gate, status, reason, message: 'm', lastTransitionTime: '2026-12-07T12:00:00Z', lastProbeTime: '2026-12-07T12:00:00Z' });
    for (const reason of ['GateReleased', 'PolicyRemoved', 'NoVantage']) assert.equal(guards.mayWrite(cond('True', reason), 0, ctx), true, `${reason} goes out`);
    for (const reason of ['ProbeSucceeded', 'PanicFailOpen', 'NotYetProbed']) assert.equal(guards.mayWrite(cond('True', reason), 0, ctx), false, `${reason} (a verdict or the owner's panic) is held`);
    assert.equal(guards.mayWrite(cond('False', 'GateReleased'), 0, ctx), false, 'a False is never a release');
    assert.match(guards.heldFor(pod(1).uid).get(gate)?.reason ?? '', /no longer owns the pod/);
  });
});
