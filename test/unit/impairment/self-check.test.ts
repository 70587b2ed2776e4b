import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SelfCheck } from '../../../src/impairment/index.ts';
import type { PeerView, SelfCheckEvent } from '../../../src/impairment/index.ts';
import { GateWriter } from '../../../src/writeback/index.ts';
import type { GateCondition } from '../../../src/writeback/index.ts';
import { FakeClock } from '../../support/fake-clock.ts';

const peers: PeerView[] = [
  { identity: 'r2', report: { address: 'r2:1', failing: 0, targets: 50, reached: ['r1', 'r3'] } },
  { identity: 'r3', report: { address: 'r3:1', failing: 0, targets: 50, reached: ['r1', 'r2'] } },
];
const falseGate: GateCondition = { type: 'outprobe.io/web', status: 'False', reason: 'ProbeFailed', message: 'x', lastTransitionTime: '2026-11-25T00:00:00Z', lastProbeTime: '2026-11-25T00:00:00Z' };
const trueGate: GateCondition = { ...falseGate, status: 'True', reason: 'ProbeSucceeded' };

/** A replica whose network the test cuts and heals: checks answer only while `up`. */
function replica(clock: FakeClock, peerList: () => PeerView[] = () => peers) {
  const net = { up: true };
  const events: SelfCheckEvent[] = [];
  const self = new SelfCheck({
    clock,
    identity: 'r1',
    address: 'r1:1',
    peers: peerList,
    local: () => ({ failing: 0, targets: 50, byNamespace: [{ failing: 0, targets: 50 }] }),
    check: () => Promise.resolve(net.up),
    observe: (e) => events.push(e),
  });
  return { net, self, events };
}

describe('SelfCheck', () => {
  it('closes the race: a False desired after a cut is never sent, though impairment is declared only 3 s later', async () => {
    const clock = new FakeClock();
    const { net, self, events } = replica(clock);
    const sent: GateCondition[] = [];
    const held: GateCondition[] = [];
    const gates = new GateWriter({
      clock,
      patch: (_p, c) => { sent.push(c); return Promise.resolve({ resourceVersion: '1' }); },
      mayWrite: (c, since) => c.status === 'True' || self.confirmedSince(since),
      onHeld: (_p, c) => held.push(c),
    });
    const signal = new AbortController().signal;
    await self.step(signal); // healthy: both peers answer
    clock.advance(1000);
    net.up = false; // the cut
    clock.advance(10);
    gates.desire({ uid: 'u1', namespace: 'ns', name: 'p1' }, falseGate, 'True'); // the very first False after the cut
    gates.desire({ uid: 'u2', namespace: 'ns', name: 'p2' }, trueGate, 'False'); // True is never held
    assert.deepEqual(sent.map((c) => c.status), ['True']);
    assert.equal(held.length, 1);
    for (let i = 0; i < 5; i++) {
      clock.advance(1000);
      await self.step(signal);
      gates.sweep();
    }
    assert.equal(self.impaired, true);
    assert.ok(events.some((e) => e.type === 'impaired'));
    assert.deepEqual(sent.map((c) => c.status), ['True'], 'no False went out');
    assert.equal(held.length, 1, 'held once, reported once');
  });

  it('a healthy replica sends a False once a check that started after the desire succeeded', async () => {
    const clock = new FakeClock();
    const { self } = replica(clock);
    const sent: GateCondition[] = [];
    const gates = new GateWriter({ clock, patch: (_p, c) => { sent.push(c); return Promise.resolve({ resourceVersion: '1' }); }, mayWrite: (c, since) => c.status === 'True' || self.confirmedSince(since) });
    const signal = new AbortController().signal;
    await self.step(signal);
    clock.advance(300);
    gates.desire({ uid: 'u1', namespace: 'ns', name: 'p1' }, falseGate, 'True');
    assert.equal(sent.length, 0, 'the last success started before the failure was seen');
    clock.advance(700);
    await self.step(signal);
    gates.sweep();
    assert.deepEqual(sent.map((c) => c.status), ['False']);
  });

  it('recovers after reaching peers for recoverAfterMs; with no peers the guard is off', async () => {
    const clock = new FakeClock();
    const { net, self, events } = replica(clock);
    const signal = new AbortController().signal;
    await self.step(signal);
    net.up = false;
    for (let i = 0; i < 4; i++) {
      clock.advance(1000);
      await self.step(signal);
    }
    assert.equal(self.impaired, true);
    assert.equal(self.confirmedSince(0), false, 'impaired: nothing is confirmed');
    net.up = true;
    for (let i = 0; i < 10; i++) {
      clock.advance(1000);
      await self.step(signal);
    }
    assert.equal(self.impaired, true, 'not before 10 s of reaching peers');
    clock.advance(1000);
    await self.step(signal);
    assert.equal(self.impaired, false);
    assert.deepEqual(events.filter((e) => e.type !== 'peers').map((e) => e.type), ['impaired', 'recovered']);
    const alone = replica(clock, () => []);
    await alone.self.step(signal);
    assert.equal(alone.self.confirmedSince(clock.now() + 1), true, 'one replica: the guard is off');
  });
});
