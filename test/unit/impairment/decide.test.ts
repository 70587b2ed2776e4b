import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ImpairmentState, ReachTable, decodeReport, defaultThresholds, encodeReport, impairedNow, maxReached, tallyTargets } from '../../../src/impairment/index.ts';
import type { PeerView } from '../../../src/impairment/index.ts';

const t0 = 1_700_000_000_000;
const peer = (identity: string, reached: string[], failing = 0, targets = 100): PeerView => ({ identity, report: { address: `${identity}:8080`, failing, targets, reached } });

/** Its targets dealt round-robin over `namespaces` namespaces, the first `failing` of them failing (spread evenly). */
function local(failing: number, targets: number, namespaces = 5): { failing: number; targets: number; byNamespace: { failing: number; targets: number }[] } {
  const byNamespace = Array.from({ length: namespaces }, () => ({ failing: 0, targets: 0 }));
  for (let j = 0; j < targets; j++) {
    const n = byNamespace[j % namespaces]!;
    n.targets++;
    if (j < failing) n.failing++;
  }
  return { failing, targets, byNamespace };
}

/** A reach table where every peer was first seen at t0 and `ok` ones answered checks started at `okAt`. */
function reachOf(peers: readonly PeerView[], ok: Record<string, number>): ReachTable {
  const r = new ReachTable();
  r.setPeers(peers.map((p) => p.identity), t0);
  for (const [id, at] of Object.entries(ok)) r.record(id, at, at + 5, true);
  return r;
}

describe('impairment decision', () => {
  const peers = [peer('r2', ['r1', 'r3']), peer('r3', ['r1', 'r2'])];

  it('cut off: no peer answered for unreachableAfterMs while the peers reach each other → impaired (unreachable)', () => {
    const reach = reachOf(peers, { r2: t0 + 1000, r3: t0 + 1000 });
    const at = (now: number) => impairedNow({ now, self: 'r1', peers, reach, ...local(0, 50) }, defaultThresholds);
    assert.equal(at(t0 + 1005 + 2999).impaired, false, 'not before 3 s without an answer');
    const v = at(t0 + 1005 + 3000);
    assert.ok(v.impaired);
    assert.equal(v.reason, 'unreachable');
  });

  it('no peer reaches another either (e.g. the health port is blocked between all replicas): not impaired', () => {
    const isolated = [peer('r2', ['r1']), peer('r3', [])];
    const reach = reachOf(isolated, {});
    assert.equal(impairedNow({ now: t0 + 60_000, self: 'r1', peers: isolated, reach, ...local(0, 50) }, defaultThresholds).impaired, false);
  });

  it('one peer answering is enough; a new peer is given unreachableAfterMs from when it was first seen', () => {
    const reach = reachOf(peers, { r3: t0 + 9000 });
    assert.equal(impairedNow({ now: t0 + 10_000, self: 'r1', peers, reach, ...local(0, 50) }, defaultThresholds).impaired, false);
    const fresh = reachOf(peers, {});
    assert.equal(impairedNow({ now: t0 + 2000, self: 'r1', peers, reach: fresh, ...local(0, 50) }, defaultThresholds).impaired, false);
  });

  it('two replicas (a single peer): losing each other is never "unreachable" (no third view)', () => {
    const one = [peer('r2', ['r1'])];
    const reach = reachOf(one, {});
    assert.equal(impairedNow({ now: t0 + 60_000, self: 'r1', peers: one, reach, ...local(0, 50) }, defaultThresholds).impaired, false);
  });

  it('failing share: impaired at ≥ 50 % and ≥ 30 points above the peers\' median; not below either bound', () => {
    // Sustained since t0 − 10 s, and the peers' reports published after that (ADR 0034).
    const fresh = (p: PeerView): PeerView => ({ ...p, reportedAt: t0 });
    const ps = [peer('r2', ['r3'], 5, 100), peer('r3', ['r2'], 10, 100)].map(fresh); // median 7.5 %
    const reach = reachOf(ps, { r2: t0, r3: t0 });
    const since = t0 + 100 - defaultThresholds.failingSustainMs;
    const v = (failing: number, targets = 100) => impairedNow({ now: t0 + 100, self: 'r1', peers: ps, reach, ...local(failing, targets), failingSince: since }, defaultThresholds);
    assert.equal(v(49).impaired, false, 'below the 50 % floor');
    const hit = v(50);
    assert.equal(hit.impaired && hit.reason, 'failing');
    const close = [peer('r2', ['r3'], 30, 100), peer('r3', ['r2'], 30, 100)].map(fresh);
    assert.equal(impairedNow({ now: t0 + 100, self: 'r1', peers: close, reach, ...local(55, 100), failingSince: since }, defaultThresholds).impaired, false, 'peers fail nearly as much: a real outage');
    assert.equal(v(9, 9).impaired, false, 'too few targets to compare');
    const small = [peer('r2', ['r3'], 0, 5), peer('r3', ['r2'], 0, 5)].map(fresh);
    assert.equal(impairedNow({ now: t0 + 100, self: 'r1', peers: small, reach, ...local(90, 100), failingSince: since }, defaultThresholds).impaired, false, 'no peer has enough targets to compare');
  });

  it('failing share (ADR 0034): not before it has lasted failingSustainMs, and never against peer reports from before its failures began', () => {
    const reach = reachOf([], {});
    const healthy = [peer('r2', ['r3'], 0, 100), peer('r3', ['r2'], 0, 100)];
    const at = (now: number, failingSince: number, reportedAt: number | undefined) =>
      impairedNow({ now, self: 'r1', peers: healthy.map((p) => (reportedAt === undefined ? p : { ...p, reportedAt })), reach, ...local(100, 100), failingSince }, defaultThresholds).impaired;
    // Everything fails at t0 (the probers' network): the peers' last reports, published at t0 − 4 s, still show 0 %.
    assert.equal(at(t0 + 2000, t0, t0 - 4000), false, 'two seconds in: not sustained');
    assert.equal(at(t0 + 12_000, t0, t0 - 4000), false, 'sustained, but only reports from before the failure: no verdict (on main: impaired at once, each replica in turn)');
    assert.equal(at(t0 + 12_000, t0, undefined), false, 'a report of unknown age is not fresh');
    assert.equal(at(t0 + 12_000, t0, t0 + 5000), true, 'sustained, and the peers published 0 % after it began: this replica is the outlier');
  });

  it('no peers (one replica): never impaired', () => {
    assert.equal(impairedNow({ now: t0 + 60_000, self: 'r1', peers: [], reach: new ReachTable(), ...local(100, 100) }, defaultThresholds).impaired, false);
  });
});

describe('ImpairmentState', () => {
  const peers = [peer('r2', ['r1', 'r3']), peer('r3', ['r1', 'r2'])];

  it('impaired, then recovered only after reaching a peer for recoverAfterMs without a break', () => {
    const s = new ImpairmentState(defaultThresholds);
    const reach = reachOf(peers, {});
    const input = (now: number) => ({ now, self: 'r1', peers, reach, ...local(0, 0) });
    assert.equal(s.step(input(t0 + 2999)), undefined);
    assert.equal(s.step(input(t0 + 3000))?.type, 'impaired');
    assert.equal(s.impaired, true);
    assert.equal(s.step(input(t0 + 60_000)), undefined, 'still cut off');
    reach.record('r2', t0 + 60_000, t0 + 60_001, true);
    assert.equal(s.step(input(t0 + 60_001)), undefined, 'healthy since now');
    reach.record('r2', t0 + 62_000, t0 + 62_001, true);
    assert.equal(s.step(input(t0 + 62_001)), undefined);
    // A break: no answer for unreachableAfterMs restarts the count.
    assert.equal(s.step(input(t0 + 65_500)), undefined);
    reach.record('r2', t0 + 66_000, t0 + 66_001, true);
    assert.equal(s.step(input(t0 + 66_001)), undefined);
    for (let at = t0 + 67_000; at < t0 + 76_000; at += 1000) {
      reach.record('r3', at, at + 1, true);
      assert.equal(s.step(input(at + 1)), undefined, `not yet at ${at - t0}`);
    }
    reach.record('r3', t0 + 76_000, t0 + 76_001, true);
    assert.equal(s.step(input(t0 + 76_001))?.type, 'recovered');
    assert.equal(s.impaired, false);
  });
});

describe('ReachTable', () => {
  it('okStartedSince counts a success by when its check started, and only for current peers', () => {
    const r = new ReachTable();
    r.setPeers(['a', 'b'], t0);
    r.record('a', t0 + 100, t0 + 900, true);
    assert.equal(r.okStartedSince(t0 + 100), true);
    assert.equal(r.okStartedSince(t0 + 101), false, 'a check started before the failure does not confirm it, however late it ended');
    r.record('b', t0 + 200, t0 + 300, false);
    assert.equal(r.okStartedSince(t0 + 150), false, 'a failed check confirms nothing');
    r.setPeers(['b'], t0 + 1000);
    assert.equal(r.okStartedSince(t0), false, 'a peer that left no longer confirms');
  });
});

describe('peer report annotation', () => {
  it('round-trips, stays bounded and tolerates garbage', () => {
    const reached = Array.from({ length: 200 }, (_, i) => `r${String(i).padStart(3, '0')}${'x'.repeat(300)}`);
    const text = encodeReport({ address: '10.0.0.5:8080', failing: 3, targets: 40, reached });
    assert.ok(text.length < 20_000, `${text.length} chars`);
    const back = decodeReport(text);
    assert.ok(back !== undefined);
    assert.equal(back.address, '10.0.0.5:8080');
    assert.equal(back.failing, 3);
    assert.equal(back.targets, 40);
    assert.equal(back.reached.length, maxReached);
    assert.equal(back.reached[0]?.length, 253);
    assert.equal(decodeReport('nope'), undefined);
    assert.equal(decodeReport('[1]'), undefined);
    assert.deepEqual(decodeReport('{"f":-1,"t":"x","r":[1,"a"],"__proto__":{"a":"evil"}}'), { address: undefined, failing: 0, targets: 0, reached: ['a'] });
  });
});

describe('ImpairmentState: the failing share must be sustained (ADR 0034)', () => {
  it('all three replicas fail at once: their peers\' renewed reports fail too, and none becomes the outlier', () => {
    const s = new ImpairmentState(defaultThresholds);
    const reach = reachOf([], {});
    // The peers' reports before the failure (0 %), renewed every 5 s: from t0 + 5 s they fail as much.
    const peersAt = (now: number): PeerView[] => ['r2', 'r3'].map((id) => ({ ...peer(id, []), report: { address: `${id}:8080`, failing: now >= t0 + 5000 ? 100 : 0, targets: 100, reached: [] }, reportedAt: now >= t0 + 5000 ? t0 + 5000 : t0 - 1000 }));
    for (let now = t0; now <= t0 + 30_000; now += 1000) {
      assert.equal(s.step({ now, self: 'r1', peers: peersAt(now), reach, ...local(100, 100) }), undefined, `${(now - t0) / 1000} s in`);
    }
  });

  it('one replica fails alone: impaired once its share has lasted failingSustainMs against fresh reports', () => {
    const s = new ImpairmentState(defaultThresholds);
    const reach = reachOf([], {});
    const peersAt = (now: number): PeerView[] => ['r2', 'r3'].map((id) => ({ ...peer(id, [], 0, 100), reportedAt: now - 500 }));
    let change;
    let now = t0;
    for (; now <= t0 + 30_000 && change === undefined; now += 1000) change = s.step({ now, self: 'r1', peers: peersAt(now), reach, ...local(80, 100) });
    assert.equal(change?.type, 'impaired');
    assert.equal(now - 1000 - t0, defaultThresholds.failingSustainMs);
  });
});

describe('ImpairmentState back-off', () => {
  it('impaired again within 10 min of recovering: twice the time to recover each time, up to 16×; later: back to 1×', () => {
    const peers = [peer('r2', ['r1', 'r3']), peer('r3', ['r1', 'r2'])];
    const s = new ImpairmentState(defaultThresholds);
    let now = t0;
    const reach = reachOf(peers, {});
    const input = () => ({ now, self: 'r1', peers, reach, ...local(0, 0) });
    const cycle = (): number => {
      now += 3000; // no answer for 3 s (from the last one, or first sight)
      assert.equal(s.step(input())?.type, 'impaired');
      const from = now;
      for (;;) {
        now += 1000;
        reach.record('r2', now - 1, now, true);
        if (s.step(input())?.type === 'recovered') return now - from;
      }
    };
    assert.deepEqual([cycle(), cycle(), cycle(), cycle(), cycle(), cycle()], [11_000, 21_000, 41_000, 81_000, 161_000, 161_000]);
    now += 10 * 60_000;
    reach.record('r2', now - 1, now, true);
    assert.equal(cycle(), 11_000);
  });
});

describe('tallyTargets (ADR 0055)', () => {
  it('tallyTargets counts per namespace', () => {
    const t = tallyTargets([{ namespace: 'a', failing: true }, { namespace: 'a', failing: false }, { namespace: 'b', failing: true }]);
    assert.equal(t.failing, 2);
    assert.equal(t.targets, 3);
    assert.deepEqual(t.byNamespace, [{ failing: 1, targets: 2 }, { failing: 1, targets: 1 }]);
  });
});
