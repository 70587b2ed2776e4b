// The fleet's remediation ledger (ADR 0033) on a real kube-apiserver: two replicas' LedgerStores
// race to append to the same policy's Lease with resourceVersion preconditions. However their
// reads and writes interleave, the ledger never holds more remediations in flight than the
// decision allows, every allowed reservation is in it, and a refused one is not.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { systemClock, systemRandom } from '../../src/kernel/index.ts';
import { KubeClient, fromKubeconfig } from '../../src/kube/index.ts';
import { LedgerStore, decodeLedger, ledgerAnnotation, ledgerName } from '../../src/writeback/index.ts';
import type { BudgetDecision, LedgerEntry } from '../../src/writeback/index.ts';
import { startControlPlane } from '../support/cluster/index.ts';
import type { ControlPlane } from '../support/cluster/index.ts';
import { logsOnFailure } from '../support/replicas/index.ts';

describe('remediation ledger against a real kube-apiserver (ADR 0033)', () => {
  const logs = logsOnFailure('remediation-ledger');
  let cp: ControlPlane;
  const clients: KubeClient[] = [];
  const ns = `ledger-${Date.now().toString(36)}`;

  logs.setup(async () => {
    cp = await startControlPlane({ log: () => undefined });
    logs.plane(cp);
    for (let i = 0; i < 2; i++) clients.push(new KubeClient({ connection: fromKubeconfig(cp.kubeconfigPath), clock: systemClock, random: systemRandom }));
    await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  });
  logs.teardown(async () => {
    for (const c of clients) await c.close();
    await cp.stop();
  });

  const stored = async (policyUid: string): Promise<LedgerEntry[]> => {
    const lease = await cp.kube.get(`/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/${ledgerName(policyUid)}`);
    return decodeLedger((lease['metadata'] as { annotations?: Record<string, string> }).annotations?.[ledgerAnnotation]);
  };

  for (const max of [1, 3]) {
    it(`two writers, 20 pods each, racing on one Lease: never more than ${max} in flight, exactly the allowed ones written`, async () => {
      const policyUid = `policy-max-${max}`;
      const stores = ['r1', 'r2'].map((replica, i) => new LedgerStore({ client: clients[i] ?? clients[0]!, clock: systemClock, namespace: ns, replica, attempts: 100 }));
      // In flight = every entry (no pod goes away in this test).
      const decide = (entries: readonly LedgerEntry[]): BudgetDecision =>
        entries.length < max ? { allow: true } : { allow: false, reason: 'budget', message: `${entries.length} in flight, max ${max}` };
      const results = await Promise.all(
        stores.flatMap((s, w) => Array.from({ length: 20 }, (_, i) => s.reserve(policyUid, { uid: `w${w}-pod-${i}`, key: `shop/w${w}-pod-${i}` }, decide).then((d) => ({ uid: `w${w}-pod-${i}`, allow: d.allow })))),
      );
      const allowed = results.filter((r) => r.allow).map((r) => r.uid).sort();
      const entries = await stored(policyUid);
      assert.equal(allowed.length, max, `allowed: ${allowed.join(', ')}`);
      assert.deepEqual(entries.map((e) => e.uid).sort(), allowed, 'the ledger holds exactly the allowed reservations');
      // A release frees a unit, and the other writer can take it.
      const first = entries[0];
      assert.ok(first !== undefined);
      await stores[first.replica === 'r1' ? 0 : 1]?.release(policyUid, first.uid);
      const other = stores[first.replica === 'r1' ? 1 : 0];
      assert.equal((await other?.reserve(policyUid, { uid: 'late', key: 'shop/late' }, decide))?.allow, true);
      assert.equal((await stored(policyUid)).length, max);
    });
  }
});
