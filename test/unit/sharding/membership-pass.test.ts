import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Resync, gateOwnership } from '../../../src/controller/resync.ts';
import type { ResyncResult } from '../../../src/controller/resync.ts';
import { nextTurn, systemClock } from '../../../src/kernel/index.ts';
import type { Pod } from '../../../src/kube/index.ts';
import { Handover, ShardMembership, owner } from '../../../src/sharding/index.ts';
import type { ShardEvent } from '../../../src/sharding/index.ts';
import { FakeClock } from '../../support/fake-clock.ts';
import { MemoryLeases } from '../../support/memory-leases.ts';

/**
 * ShardMembership's recompute at a membership change (issue 31 item 1, ADR
 * 0073): every pod's vantage assignment, its handover and the owned count
 * ride on the controller's sliced resync (ADR 0072) instead of one turn of
 * their own before it. The event loop's work is charged to a fake clock (a
 * pod's vantage assignment 1 ms, planning it 0.5 ms); the resync yields one
 * real turn whenever it has spent 50 ms of it.
 */
const leaseMs = 15_000;

function pod(i: number): Pod {
  return {
    uid: `uid-${i}`, namespace: 'shop', name: `web-${i}`, resourceVersion: '1', labels: { app: 'web' }, nodeName: 'n1', phase: 'Running', podIP: `127.0.10.${i % 250}`,
    deletionTimestamp: undefined, hostNetwork: false, restartPolicy: 'Always', terminationGracePeriodSeconds: 30, readinessGates: ['outprobe.io/web'],
    containers: [{ name: 'web', ports: [{ name: 'http', containerPort: 8080 }], env: {}, sidecar: false }],
    containerStatuses: [], conditions: [],
  };
}
const keyOf = (p: Pod): string => `${p.namespace}/${p.name}`;

async function until(what: string, ok: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

/** Replica `a` with its Lease API, pod store, sliced resync and a fake clock of event-loop work. */
class World {
  readonly leases = new MemoryLeases('outprobe');
  readonly work = new FakeClock();
  readonly store = new Map<string, Pod>();
  readonly held = new Set<string>();
  readonly events: ShardEvent[] = [];
  readonly m: ShardMembership;
  readonly resync: Resync;
  readonly #stop = new AbortController();
  #running: Promise<void> = Promise.resolve();
  /** The resync of the latest change, and how many were started. */
  current: Promise<ResyncResult> | undefined;
  resyncs = 0;
  /** The longest stretch of work without a turn of the event loop, since `measure()`. */
  longest = 0;
  #since = 0;
  /** Called at every turn the resync yields (nth turn of the current resync, from 1). */
  onTurn: ((n: number) => void | Promise<void>) | undefined;
  #turns = 0;

  constructor(pods: number, peers: readonly string[]) {
    for (let i = 0; i < pods; i++) this.store.set(keyOf(pod(i)), pod(i));
    for (const p of peers) this.leases.hold(p, Date.now(), 60_000);
    this.m = new ShardMembership({
      client: this.leases.client, clock: systemClock, random: Math.random, namespace: 'outprobe', identity: 'a', leaseDurationMs: leaseMs,
      observe: (e) => this.events.push(e),
      // Every vantage assignment costs 1 ms of the loop.
      vantage: { spreadOf: () => (this.work.advance(1), 'node'), zoneOf: () => null },
    });
    this.resync = new Resync({
      clock: this.work, pods: this.store, held: () => this.held, owns: (p) => this.m.owns(p), sliceMs: 50,
      reconcile: (p) => {
        this.work.advance(0.5);
        if (this.m.owns(p)) this.held.add(keyOf(p));
        else this.held.delete(keyOf(p));
      },
      yieldTurn: async () => {
        this.#mark();
        await this.onTurn?.(++this.#turns);
        await nextTurn();
        this.#since = this.work.now();
      },
    });
  }

  async start(): Promise<void> {
    this.#running = this.m.run(this.#stop.signal, {
      ready: true, pods: () => this.store.values(), localCounts: () => new Map(),
      resync: (pass) => {
        this.resyncs++;
        this.#turns = 0;
        this.current = this.resync.run(undefined, pass);
      },
    });
    await this.settled(1);
  }

  /** Starts measuring the loop's longest stretch of work from now. */
  measure(): void {
    this.longest = 0;
    this.#since = this.work.now();
  }

  /** Waits until `n` resyncs were started and the latest ended; the stretch up to its end counts. */
  async settled(n: number): Promise<void> {
    await until(`resync ${n}`, () => this.resyncs >= n);
    let last: Promise<ResyncResult> | undefined;
    while (last !== this.current) {
      last = this.current;
      await last;
    }
    this.#mark();
  }

  membershipEvents(): { members: string; previous: string; owned: number }[] {
    return this.events.flatMap((e) => (e.type === 'membership' ? [{ members: e.members.join(','), previous: e.previous?.join(',') ?? '-', owned: e.owned }] : []));
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#running;
  }

  #mark(): void {
    this.longest = Math.max(this.longest, this.work.now() - this.#since);
    this.#since = this.work.now();
  }
}

let world: World | undefined;
afterEach(async () => {
  await world?.stop();
  world = undefined;
});

const owned = (members: readonly string[], pods: Iterable<Pod>): number => [...pods].filter((p) => owner(members, p.uid) === 'a').length;

describe('membership recompute in the resync\'s slices (ADR 0073)', () => {
  it('a change holds the loop at most one slice at a time, recompute included; the event reports once every pod was passed', async () => {
    const w = (world = new World(400, []));
    await w.start();
    assert.deepEqual(w.membershipEvents(), [{ members: 'a', previous: '-', owned: 400 }]);
    assert.equal(w.held.size, 400);

    w.measure();
    w.leases.hold('b', Date.now());
    await sleep(2);
    w.leases.hold('c', Date.now());
    await w.settled(3);
    // Before: 400 assignments and 400 ownership checks (800 ms of loop) in one turn, before the resync's first slice.
    assert.ok(w.longest <= 55, `the loop was held ${w.longest} ms of work at once`);
    assert.deepEqual(w.membershipEvents().at(-1), { members: 'a,b,c', previous: 'a', owned: owned(['a', 'b', 'c'], w.store.values()) });
    assert.equal(w.held.size, owned(['a', 'b', 'c'], w.store.values()));

    w.measure();
    w.leases.drop('b');
    w.leases.drop('c');
    await w.settled(5);
    assert.ok(w.longest <= 55, `the loop was held ${w.longest} ms of work at once`);
    assert.deepEqual(w.membershipEvents().at(-1), { members: 'a', previous: 'a,b,c', owned: 400 });
    for (const p of w.store.values()) {
      const was = owner(['a', 'b', 'c'], p.uid);
      assert.equal(w.m.gainedAt(p) !== undefined, was !== 'a', `${p.uid} gained from ${was}`);
      assert.ok(w.m.mayRemediate(p), 'b and c are gone: at once');
    }
  });

  it('a pod the pass has not reached is judged under the new members already: ownership, gate writes, the handover hold', async () => {
    const w = (world = new World(300, ['b']));
    const checked: number[] = [];
    // At every turn of the join's resync: a joined [a, b], and gained its pods from b, live (scale-up).
    w.onTurn = (n) => {
      const write = gateOwnership((p) => w.m.owns(p), () => w.store);
      for (const p of w.store.values()) {
        const mine = owner(['a', 'b'], p.uid) === 'a';
        assert.equal(w.m.owns(p), mine);
        assert.equal(write?.({ uid: p.uid, namespace: p.namespace, name: p.name }), mine, 'a gate write is sent only for a pod owned now');
        assert.equal(w.m.mayRemediate(p), false, mine ? 'gained from b, live: waits a lease duration' : 'not owned');
        assert.equal(w.m.gainedAt(p) !== undefined, mine);
      }
      checked.push(n);
    };
    await w.start();
    assert.ok(checked.length >= 2, `checked at ${checked.length} turns`);
    const joinedAt = w.m.changedAt;
    assert.notEqual(joinedAt, undefined);

    // c joins: at every turn of its resync, a lost pods are no longer a's, those kept keep their hold.
    checked.length = 0;
    w.onTurn = (n) => {
      for (const p of w.store.values()) {
        const mine = owner(['a', 'b', 'c'], p.uid) === 'a';
        assert.equal(w.m.owns(p), mine);
        assert.equal(w.m.mayRemediate(p), false);
        if (mine) assert.equal(w.m.gainedAt(p), joinedAt, 'still gained when a joined');
      }
      checked.push(n);
    };
    w.leases.hold('c', Date.now());
    await w.settled(2);
    assert.ok(checked.length >= 1);
  });

  it('a newer change supersedes one in flight: reported once, the handover as if each change had been applied whole', async () => {
    const w = (world = new World(400, ['b']));
    await w.start();
    const times = [w.m.changedAt ?? 0];
    const gone = [...w.store.values()].find((p) => owner(['a', 'b'], p.uid) === 'a' && owner(['a', 'b', 'c'], p.uid) === 'a');
    assert.ok(gone !== undefined);
    w.onTurn = async (n) => {
      if (n !== 2) return;
      // The pass of [a, b, c] is under way: b leaves and a pod goes before the pass reaches them.
      times.push(w.m.changedAt ?? 0);
      await sleep(2);
      w.leases.drop('b');
      w.store.delete(keyOf(gone));
      w.held.delete(keyOf(gone)); // its DELETED event drops its targets
    };
    await sleep(2);
    w.leases.hold('c', Date.now());
    await w.settled(3);
    times.push(w.m.changedAt ?? 0);
    assert.equal(new Set(times).size, 3, 'three changes');
    assert.deepEqual(w.membershipEvents(), [
      { members: 'a,b', previous: '-', owned: owned(['a', 'b'], [...w.store.values(), gone]) },
      { members: 'a,c', previous: 'a,b', owned: owned(['a', 'c'], w.store.values()) },
    ]);
    // The same changes applied whole, one after the other.
    const replay = new Handover('a', leaseMs);
    const all = [...w.store.values(), gone].map((p) => p.uid);
    replay.update(undefined, ['a', 'b'], all, 0);
    replay.update(['a', 'b'], ['a', 'b', 'c'], all, 1);
    replay.update(['a', 'b', 'c'], ['a', 'c'], all.filter((u) => u !== gone.uid), 2);
    for (const p of w.store.values()) {
      const g = replay.gain(p.uid);
      assert.equal(w.m.gainedAt(p), g === undefined ? undefined : times[g.at], p.uid);
    }
    assert.equal(w.m.gainedAt(gone), undefined, 'a pod gone is forgotten');
    assert.equal(w.held.size, owned(['a', 'c'], w.store.values()));
  });
});
