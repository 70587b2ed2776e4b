// Issue 27, finding 6 (ADR 0055): a tenant with many probed pods that fails only one replica's
// source address (its pods refuse that address, answer the others) must not make that replica
// stand down, one replica after another. A replica really cut off (from the pods, or from
// everything) still stands down. On the code before ADR 0055 the first test fails: r1 is
// impaired ('failing') 10 s into the tenant's refusal.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SelfCheck } from '../../../src/impairment/index.ts';
import type { PeerView, SelfCheckEvent } from '../../../src/impairment/index.ts';
import { FakeClock } from '../../support/fake-clock.ts';

interface Ns { readonly name: string; readonly pods: number }
/** The cluster's probed namespaces: one tenant with most of the pods, four small ones. */
const cluster: readonly Ns[] = [{ name: 'tenant-a', pods: 80 }, { name: 'shop', pods: 10 }, { name: 'search', pods: 10 }, { name: 'auth', pods: 10 }, { name: 'billing', pods: 10 }];

/** What one replica owns (a third of every namespace, as the UID hash spreads them) and which of it fails. */
function owned(namespaces: readonly Ns[], fails: (ns: string) => boolean): { failing: number; targets: number; byNamespace: { failing: number; targets: number }[] } {
  const targets: { namespace: string; failing: boolean }[] = [];
  for (const ns of namespaces) for (let k = 0; k < Math.ceil(ns.pods / 3); k++) targets.push({ namespace: ns.name, failing: fails(ns.name) });
  const byNs = new Map<string, { failing: number; targets: number }>();
  for (const t of targets) {
    const n = byNs.get(t.namespace) ?? { failing: 0, targets: 0 };
    byNs.set(t.namespace, { failing: n.failing + (t.failing ? 1 : 0), targets: n.targets + 1 });
  }
  return { failing: targets.filter((t) => t.failing).length, targets: targets.length, byNamespace: [...byNs.values()] };
}

/**
 * r1 with two peers that publish fresh reports of their own (healthy) targets; `fails` says which
 * of r1's namespaces fail from r1's address; `reachesPeers` whether r1's peer checks answer.
 * Runs `seconds` rounds of 1 s and returns the impairment events.
 */
async function run(namespaces: readonly Ns[], fails: (ns: string) => boolean, reachesPeers: boolean, seconds: number): Promise<Extract<SelfCheckEvent, { type: 'impaired' }>[]> {
  const clock = new FakeClock();
  const healthy = owned(namespaces, () => false);
  const peers = (): PeerView[] => ['r2', 'r3'].map((id) => ({
    identity: id,
    report: { address: `${id}:9444`, failing: healthy.failing, targets: healthy.targets, reached: ['r1', 'r2', 'r3'].filter((x) => x !== id) },
    reportedAt: clock.now() - 500,
  }));
  const events: SelfCheckEvent[] = [];
  const self = new SelfCheck({ clock, identity: 'r1', address: 'r1:9444', peers, local: () => owned(namespaces, fails), check: () => Promise.resolve(reachesPeers), observe: (e) => events.push(e) });
  const signal = new AbortController().signal;
  for (let s = 0; s <= seconds; s++) {
    await self.step(signal);
    clock.advance(1000);
  }
  return events.filter((e): e is Extract<SelfCheckEvent, { type: 'impaired' }> => e.type === 'impaired');
}

describe('stand-down rule a tenant cannot trigger (ADR 0055)', () => {
  it('a tenant whose 80 pods (27 of r1\'s 43 targets, 63 %) refuse only r1\'s address, for 60 s: r1 does not stand down', async () => {
    const impaired = await run(cluster, (ns) => ns === 'tenant-a', true, 60);
    assert.deepEqual(impaired.map((e) => e.message), [], 'r1 stood down for one tenant\'s refusal (the attack of finding 6)');
  });

  it('the same tenant holding two namespaces (below --impaired-min-namespaces 3): still no stand-down', async () => {
    const two = [{ name: 'tenant-a', pods: 60 }, { name: 'tenant-a-2', pods: 60 }, ...cluster.slice(1)];
    assert.deepEqual((await run(two, (ns) => ns.startsWith('tenant-a'), true, 60)).map((e) => e.message), []);
  });

  it('a replica cut off from every pod but reaching its peers (failures in all 5 namespaces) still stands down, 10 s in (ADR 0034 sustain)', async () => {
    const impaired = await run(cluster, () => true, true, 15);
    const [first] = impaired;
    assert.equal(impaired.length, 1);
    assert.ok(first);
    assert.equal(first.reason, 'failing');
    assert.match(first.message, /100% of its 43 targets fail \(for 10s\), in 5 of its 5 namespaces/);
  });

  it('a replica cut off from everything stands down (unreachable), even where one tenant is the whole cluster', async () => {
    const impaired = await run([{ name: 'tenant-a', pods: 90 }], () => true, false, 10);
    assert.equal(impaired[0]?.reason, 'unreachable');
  });

});
