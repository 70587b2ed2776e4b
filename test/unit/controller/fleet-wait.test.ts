import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fleetWait } from '../../../src/controller/fleet-wait.ts';
import type { FleetWaitInput } from '../../../src/controller/fleet-wait.ts';

const base: FleetWaitInput = {
  now: 100_000, since: 90_000, settleMs: 2000, periodMs: 1000, leaseDurationMs: 15_000,
  membershipChangedAt: 0, peers: [{ holder: 'r2', renewedAt: 95_000 }, { holder: 'r3', renewedAt: 93_000 }], stalled: false,
};

void describe('when remediation waits (ADR 0033)', () => {
  void it('acts when membership is settled, peers reported after the failure settled and no stall', () => {
    assert.equal(fleetWait(base), undefined);
  });

  void it('waits while a handover is in progress: membership changed within lease duration + one period', () => {
    assert.equal(fleetWait({ ...base, membershipChangedAt: 100_000 - 15_999 })?.cause, 'handover');
    assert.equal(fleetWait({ ...base, membershipChangedAt: 100_000 - 16_000 }), undefined);
  });

  void it('waits while a peer has not renewed its report since the failure settled', () => {
    const w = fleetWait({ ...base, peers: [{ holder: 'r2', renewedAt: 95_000 }, { holder: 'r3', renewedAt: 91_999 }] });
    assert.ok(w !== undefined);
    assert.equal(w.cause, 'peers-stale');
    assert.match(w.message, /r3/);
    assert.equal(fleetWait({ ...base, peers: [{ holder: 'r3', renewedAt: Number.NaN }] })?.cause, 'peers-stale');
    assert.equal(fleetWait({ ...base, peers: [] }), undefined, 'no peers: nothing to wait for');
  });

  void it('waits after its own event-loop stall within the last probe run', () => {
    assert.equal(fleetWait({ ...base, stalled: true })?.cause, 'stall');
  });
});
