// Vantage against hostile and changing Nodes (issue 28, docs/adr/0040-vantage.md), with the
// replica's own Node reader (NodeZones: `get nodes`, a cache per node name, read again after a TTL)
// against a real kube-apiserver, and VantageOwnership on top of it as sharding wires them
// (src/fleet/sharding.ts: a zone learned or changed invalidates every assignment):
//
// - a Node without a zone label, under spread zone: a member there is in no zone (never "another
//   zone"), a pod there has no zone to avoid but still never its own node;
// - a Lease claiming a zone its Node does not have (or naming a node with no Node): the Node decides;
// - a pod with no spec.nodeName yet: any member with a known node; its node learned, it moves only
//   if that is its owner's node;
// - a node renamed (deleted, a Node of another name created, the replica's pod recreated there);
// - a pod's node relabelled to another zone: its pods follow within the TTL (ADR 0071).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { systemClock, systemRandom } from '../../src/kernel/index.ts';
import { KubeClient, fromKubeconfig } from '../../src/kube/index.ts';
import type { Pod } from '../../src/kube/index.ts';
import { owner } from '../../src/sharding/index.ts';
import { NodeZones, VantageOwnership, zoneLabel } from '../../src/vantage/index.ts';
import type { ProvenPlace, Spread } from '../../src/vantage/index.ts';
import { startControlPlane } from '../support/cluster/index.ts';
import type { ControlPlane } from '../support/cluster/index.ts';
import { waitFor } from './support/fake-kubelet.ts';
import { logsOnFailure } from '../support/replicas/index.ts';

const ttlMs = 500;
const retryMs = 200;
const uids = Array.from({ length: 400 }, (_, i) => createHash('sha1').update(`vantage-nodes-${i}`).digest('hex').slice(0, 32));
const pod = (uid: string, nodeName: string | undefined): Pod => ({ uid, namespace: 'ns', name: uid.slice(0, 8), nodeName } as unknown as Pod);

describe('vantage with hostile and changing Nodes (NodeZones and VantageOwnership, real kube-apiserver)', () => {
  const logs = logsOnFailure('vantage-nodes');
  let cp: ControlPlane;
  let client: KubeClient;
  let zones: NodeZones;
  let own: VantageOwnership;
  let changes = 0;
  const spread: { value: Spread } = { value: 'zone' };

  const node = async (name: string, zone: string | undefined): Promise<void> => {
    await cp.kube.create('/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: zone === undefined ? {} : { [zoneLabel]: zone } } });
  };
  /** What membership does on each poll: the members' places, their zones read through NodeZones. */
  const members = (places: readonly ProvenPlace[]): void => {
    own.setMembers(places.map((p) => p.identity).sort(), places);
  };
  const zoneOfMember = (id: string): string | undefined => own.members.find((m) => m.identity === id)?.zone;

  logs.setup(async () => {
    cp = await startControlPlane({ log: () => undefined });
    logs.plane(cp);
    client = new KubeClient({ connection: fromKubeconfig(cp.kubeconfigPath), clock: systemClock, random: systemRandom });
    await node('a1', 'a');
    await node('a2', 'a');
    await node('b1', 'b');
    await node('bare', undefined);
    zones = new NodeZones({
      client,
      clock: systemClock,
      ttlMs,
      retryMs,
      batchMs: 50,
      onChange: () => {
        changes++;
        own.invalidate();
      },
    });
    own = new VantageOwnership({ spreadOf: () => spread.value, zoneOf: (n) => zones.zoneOf(n) });
  });
  logs.teardown(async () => {
    await client.close();
    await cp.stop();
  });

  it('a Node without a zone label: its member is in no zone, its pods are never judged from it', async () => {
    const places: ProvenPlace[] = [{ identity: 'ra', nodeName: 'a1' }, { identity: 'rb', nodeName: 'b1' }, { identity: 'rx', nodeName: 'bare' }];
    await waitFor('zones read', () => {
      members(places);
      return Promise.resolve(zoneOfMember('ra') === 'a' && zoneOfMember('rb') === 'b');
    }, 10_000, 50);
    assert.equal(zones.zoneOf('bare'), null, 'read, no zone label');
    assert.equal(zoneOfMember('rx'), undefined);
    await waitFor('a2 read for its pods', () => Promise.resolve(own.responsible(pod(uids[0]!, 'a2')) !== undefined && zones.zoneOf('a2') === 'a'), 5000, 50);
    // Zone a's pods: the only member in another known zone is rb (rx's missing label is no other zone).
    for (const uid of uids.slice(0, 100)) assert.equal(own.responsible(pod(uid, 'a2')), 'rb');
    // The bare node's pods: no zone to avoid, but never their own node: ra or rb, by rendezvous.
    await waitFor('the bare node read for its pods', () => Promise.resolve(zones.zoneOf('bare') === null), 5000, 50);
    for (const uid of uids) {
      const who = own.responsible(pod(uid, 'bare'));
      assert.notEqual(who, 'rx', uid);
      assert.equal(who, owner(['ra', 'rb'], uid));
    }
    // Count 3 on a zone-a pod: the other zone first, then one per place (rx counts as a place of its own).
    assert.deepEqual(new Set(own.vantages(pod(uids[0]!, 'a2'), 3)), new Set(['rb', 'ra', 'rx']));
    assert.equal(own.vantages(pod(uids[0]!, 'a2'), 3)[0], 'rb');
  });

  it('a Lease claiming a zone its Node does not have: the Node decides; the liar never wins a pod of the zone it is in', async () => {
    // rl runs on a2 (zone a on its Node) and its Lease declares zone b; rg's pod names a node that
    // has no Node object at all and declares zone b too. Only rb is really in zone b.
    const places: ProvenPlace[] = [
      { identity: 'ra', nodeName: 'a1' },
      { identity: 'rb', nodeName: 'b1' },
      { identity: 'rl', nodeName: 'a2', zone: 'b' },
      { identity: 'rg', nodeName: 'ghost', zone: 'b' },
    ];
    try {
      await waitFor('the claimed nodes read', () => {
        members(places);
        return Promise.resolve(zoneOfMember('rl') === 'a' && zones.zoneOf('ghost') === null);
      }, 10_000, 50);
      assert.equal(zoneOfMember('rl'), 'a', 'the Node\'s label, not the Lease\'s claim');
      assert.equal(zoneOfMember('rg'), undefined, 'a Node read as gone gives no zone, whatever the Lease says');
      // Zone a's pods (on a1 and a2): the only member in another known zone is rb; the liars never win one.
      for (const uid of uids) {
        assert.equal(own.responsible(pod(uid, 'a1')), 'rb', uid);
        assert.equal(own.responsible(pod(uid, 'a2')), 'rb', uid);
      }
      // Nor are they asked for a second opinion before a member really in zone b.
      for (const uid of uids.slice(0, 50)) {
        const order = own.secondOpinionOrder(uid, ['ra', 'rb', 'rl', 'rg']);
        assert.ok(!order.includes('rl') || order.indexOf('rl') > order.indexOf('rb'), `${uid}: ${order.join(',')}`);
      }
    } finally {
      // The liars leave, pass or fail: the next tests start from the first test's three members.
      members([{ identity: 'ra', nodeName: 'a1' }, { identity: 'rb', nodeName: 'b1' }, { identity: 'rx', nodeName: 'bare' }]);
    }
  });

  it('a pod with no spec.nodeName yet: any member with a known node; its node learned, it moves only off its own node', () => {
    spread.value = 'node';
    own.invalidate();
    const ids = ['ra', 'rb', 'rx'];
    let moved = 0;
    for (const uid of uids) {
      const before = own.responsible(pod(uid, undefined));
      assert.equal(before, owner(ids, uid), 'plain rendezvous over the members with a known node');
      const after = own.responsible(pod(uid, 'a1'));
      assert.notEqual(after, 'ra', 'never from its own node');
      if (after !== before) {
        moved++;
        assert.equal(before, 'ra', 'only a pod whose owner sits on its node moves');
      }
    }
    assert.ok(moved > 0 && moved < uids.length / 2, `moved ${moved}`);
    spread.value = 'zone';
    own.invalidate();
  });

  it('a node renamed: the replica\'s pod recreated on a Node of another name; the old name gone', async () => {
    // rb's node b1 is deleted; rb's pod is recreated on b2 (zone b), which did not exist when the replicas started.
    await cp.kube.delete('/api/v1/nodes/b1');
    await node('b2', 'b');
    const places: ProvenPlace[] = [{ identity: 'ra', nodeName: 'a1' }, { identity: 'rb', nodeName: 'b2' }, { identity: 'rx', nodeName: 'bare' }];
    await waitFor('rb in zone b again, on b2', () => {
      members(places);
      return Promise.resolve(zoneOfMember('rb') === 'b' && own.members.find((m) => m.identity === 'rb')?.node === 'b2');
    }, 10_000, 50);
    for (const uid of uids.slice(0, 100)) assert.equal(own.responsible(pod(uid, 'a2')), 'rb');
    // A pod still naming the old node: its Node is gone (NotFound), so it has no zone to avoid, and no member is on b1: any of them.
    await waitFor('b1 read as gone', () => Promise.resolve(zones.zoneOf('b1') === null), 5000, 50);
    for (const uid of uids.slice(0, 100)) assert.equal(own.responsible(pod(uid, 'b1')), owner(['ra', 'rb', 'rx'], uid));
  });

  it('a pod\'s node relabelled to another zone: its pods follow within the TTL, though no member changed', async () => {
    const places: ProvenPlace[] = [{ identity: 'ra', nodeName: 'a1' }, { identity: 'rb', nodeName: 'b2' }, { identity: 'rx', nodeName: 'bare' }];
    const sample = uids.slice(0, 100);
    // Quiet first: membership polls go on, every zone read again at least twice, no change pending
    // (a change anywhere assigns every pod again, which would hide what this test is about).
    let quietSince = Date.now();
    let seen = changes;
    await waitFor('no zone change for 3 TTLs', async () => {
      members(places);
      for (const uid of sample) own.responsible(pod(uid, 'a2'));
      if (changes !== seen) {
        seen = changes;
        quietSince = Date.now();
      }
      await new Promise((r) => setTimeout(r, 50));
      return Date.now() - quietSince >= 3 * ttlMs;
    }, 20_000, 0);
    for (const uid of sample) assert.equal(own.responsible(pod(uid, 'a2')), 'rb');
    // a2 moves to zone b (a relabel; a cloud does this when a node's zone was wrong). Its pods' other zone is now a: ra.
    await cp.kube.patch('/api/v1/nodes/a2', { metadata: { labels: { [zoneLabel]: 'b' } } });
    const t0 = Date.now();
    const before = changes;
    await waitFor('a2\'s pods judged from zone a', () => {
      members(places); // membership polls go on; nothing about the members changes
      return Promise.resolve(sample.every((uid) => own.responsible(pod(uid, 'a2')) === 'ra'));
    }, ttlMs + 5000, 50);
    const ms = Date.now() - t0;
    // And sharding hears of it (onChange, batched): every pod is assigned again.
    await waitFor('the zone change reported', () => Promise.resolve(changes > before), 2000, 20);
    process.stderr.write(`# a2 relabelled a → b: its pods judged from zone a ${ms} ms later (TTL ${ttlMs} ms)\n`);
  });
});
