import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LedgerStore, appendEntry, decodeLedger, encodeLedger, ledgerAnnotation, ledgerName, maxLedgerEntries, pruneLedger, removeEntry } from '../../../src/writeback/index.ts';
import type { BudgetDecision, LedgerEntry } from '../../../src/writeback/index.ts';
import { FakeClock } from '../../support/fake-clock.ts';
import { FakeLeaseApi } from './fake-lease-api.ts';

const e = (uid: string, replica: string, at: number): LedgerEntry => ({ uid, key: `shop/${uid}`, replica, at });

void describe('remediation ledger (ADR 0033), pure', () => {
  void it('round-trips its entries and reads a malformed annotation as none', () => {
    const entries = [e('a', 'r1', 1000), e('b', 'r2', 2000)];
    assert.deepEqual(decodeLedger(encodeLedger(entries)), entries);
    assert.deepEqual(decodeLedger(undefined), []);
    assert.deepEqual(decodeLedger('{'), []);
    assert.deepEqual(decodeLedger('{"a":1}'), []);
    assert.deepEqual(decodeLedger('[["a","k","r",1],["b",2],"x",["c","k","r","soon"]]'), [{ uid: 'a', key: 'k', replica: 'r', at: 1 }]);
  });

  void it('prunes entries older than the window and keeps at most maxLedgerEntries', () => {
    assert.deepEqual(pruneLedger([e('a', 'r1', 1000), e('b', 'r1', 5000)], 10_000, 6000).map((x) => x.uid), ['b']);
    const many = Array.from({ length: maxLedgerEntries + 10 }, (_, i) => e(`p${i}`, 'r1', 9000 + i));
    const next = appendEntry(many, e('new', 'r1', 10_000), 10_000, 60_000);
    assert.equal(next.length, maxLedgerEntries);
    assert.equal(next.at(-1)?.uid, 'new');
    assert.ok(encodeLedger(next).length < 100_000);
  });

  void it('appending replaces the pod\'s older entry; removing takes only this replica\'s', () => {
    const next = appendEntry([e('a', 'r1', 1000), e('b', 'r2', 1000)], e('a', 'r2', 2000), 2000, 60_000);
    assert.deepEqual(next.map((x) => `${x.uid}@${x.replica}`), ['b@r2', 'a@r2']);
    assert.deepEqual(removeEntry(next, 'a', 'r1').length, 2);
    assert.deepEqual(removeEntry(next, 'a', 'r2').map((x) => x.uid), ['b']);
  });

  void it('names one Lease per policy UID', () => {
    assert.equal(ledgerName('0f1e'), 'outprobe-remediations-0f1e');
  });
});

void describe('LedgerStore (ADR 0033) over a Lease with optimistic concurrency', () => {
  const allowUnder = (max: number) => (entries: readonly LedgerEntry[]): BudgetDecision =>
    entries.length < max ? { allow: true } : { allow: false, reason: 'budget', message: `${entries.length} in flight` };

  void it('creates the Lease on first use, appends with the read resourceVersion, and refuses past the limit', async () => {
    const api = new FakeLeaseApi();
    const clock = new FakeClock();
    const store = new LedgerStore({ client: api.client(), clock, namespace: 'outprobe', replica: 'r1' });
    assert.deepEqual(await store.reserve('p1', { uid: 'a', key: 'shop/a' }, allowUnder(2)), { allow: true });
    assert.deepEqual(await store.reserve('p1', { uid: 'b', key: 'shop/b' }, allowUnder(2)), { allow: true });
    const third = await store.reserve('p1', { uid: 'c', key: 'shop/c' }, allowUnder(2));
    assert.equal(third.allow, false);
    const lease = api.leases.get(ledgerName('p1'));
    assert.deepEqual(decodeLedger(lease?.metadata?.annotations?.[ledgerAnnotation]).map((x) => x.uid), ['a', 'b']);
    assert.deepEqual(store.cached('p1').map((x) => x.uid), ['a', 'b']);
    await store.release('p1', 'a');
    assert.deepEqual(store.cached('p1').map((x) => x.uid), ['b']);
    clock.advance(store.windowMs + 1);
    assert.deepEqual(store.cached('p1'), [], 'pruned after the window');
  });

  void it('two writers racing for the last unit: the loser re-reads, decides again and is refused', async () => {
    const api = new FakeLeaseApi();
    const clock = new FakeClock();
    const r1 = new LedgerStore({ client: api.client(), clock, namespace: 'outprobe', replica: 'r1' });
    const r2 = new LedgerStore({ client: api.client(), clock, namespace: 'outprobe', replica: 'r2' });
    await r1.reserve('p1', { uid: 'a', key: 'shop/a' }, allowUnder(2));
    // r2 writes its entry between r1's read and r1's write.
    let inner: Promise<BudgetDecision> | undefined;
    api.beforeWrite = async () => {
      inner = r2.reserve('p1', { uid: 'b', key: 'shop/b' }, allowUnder(2));
      await inner;
    };
    const outer = await r1.reserve('p1', { uid: 'c', key: 'shop/c' }, allowUnder(2));
    assert.deepEqual(await inner, { allow: true });
    assert.equal(outer.allow, false, 'r1 saw r2\'s entry on its second read');
    assert.equal(api.conflicts, 1);
    assert.deepEqual(decodeLedger(api.leases.get(ledgerName('p1'))?.metadata?.annotations?.[ledgerAnnotation]).map((x) => x.uid), ['a', 'b']);
  });
});
