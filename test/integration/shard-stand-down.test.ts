// A replica that declares itself impaired (ADR 0017) gives up its shard Lease on a real
// kube-apiserver: the Lease is deleted at once, no renew re-creates it while it stands down
// (not even one in flight when it stood down), it owns nothing; rejoin() writes it again,
// with the peer report annotation the host publishes.
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { describe, it } from 'node:test';
import { systemClock, systemRandom } from '../../src/kernel/index.ts';
import { KubeClient, fromKubeconfig } from '../../src/kube/index.ts';
import { ShardMembership, leaseName, peerAnnotation } from '../../src/sharding/index.ts';
import type { ShardEvent } from '../../src/sharding/index.ts';
import { startControlPlane } from '../support/cluster/index.ts';
import type { ControlPlane } from '../support/cluster/index.ts';
import { waitFor } from './support/fake-kubelet.ts';
import { logsOnFailure } from '../support/replicas/index.ts';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('ShardMembership stand-down and rejoin against a real kube-apiserver', () => {
  const logs = logsOnFailure('shard-stand-down');
  let cp: ControlPlane;
  let client: KubeClient;
  const ns = `sd-${Date.now().toString(36)}`;
  const stop = new AbortController();
  let running: Promise<void> | undefined;
  const events: ShardEvent[] = [];
  let resyncs = 0;
  const leasePath = `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/${leaseName('r1')}`;
  const leaseExists = async (): Promise<boolean> => (await cp.kube.call('GET', leasePath)).status === 200;

  logs.setup(async () => {
    cp = await startControlPlane({ log: () => undefined });
    logs.plane(cp);
    client = new KubeClient({ connection: fromKubeconfig(cp.kubeconfigPath), clock: systemClock, random: systemRandom });
    await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  });
  logs.teardown(async () => {
    stop.abort();
    await running;
    await client.close();
    await cp.stop();
  });

  it('deletes the Lease, keeps it deleted across renew intervals, owns nothing; rejoin writes it back with the peer report', async () => {
    // A renew interval of 200 ms: many renews would have run while it stands down.
    const m = new ShardMembership({ client, clock: systemClock, random: systemRandom, namespace: ns, identity: 'r1', leaseDurationMs: 5000, renewIntervalMs: 200, observe: (e) => events.push(e) });
    running = m.run(stop.signal, {
      ready: true,
      pods: () => [],
      localCounts: () => new Map(),
      resync: () => {
        resyncs++;
      },
      annotations: () => ({ [peerAnnotation]: '{"a":"10.0.0.5:8080","f":0,"t":0,"r":[]}' }),
    });
    await waitFor('joined', () => Promise.resolve(m.members?.join(',') === 'r1'), 20_000, 50);
    const lease = await cp.kube.get(leasePath);
    assert.equal((lease['metadata'] as { annotations: Record<string, string> }).annotations[peerAnnotation], '{"a":"10.0.0.5:8080","f":0,"t":0,"r":[]}');
    const before = resyncs;
    await m.standDown();
    assert.deepEqual(m.members, [], 'owns nothing at once');
    assert.ok(resyncs > before, 'the controller re-planned (dropped its targets)');
    assert.equal(await leaseExists(), false, 'Lease deleted');
    const elu = performance.eventLoopUtilization();
    await sleep(1500);
    // Its loop sleeps while standing down (it once spun on a past renew time until out of memory).
    const busy = performance.eventLoopUtilization(elu).utilization;
    assert.ok(busy < 0.5, `event loop ${Math.round(busy * 100)}% busy while standing down`);
    assert.equal(await leaseExists(), false, 'no renew re-created it');
    assert.deepEqual(m.members, []);
    m.rejoin();
    await waitFor('Lease back', leaseExists, 10_000, 50);
    await waitFor('member again', () => Promise.resolve(m.members?.join(',') === 'r1'), 10_000, 50);
    assert.deepEqual(events.filter((e) => e.type === 'standing-down' || e.type === 'rejoining' || e.type === 'released').map((e) => e.type), ['standing-down', 'released', 'rejoining']);
  });
});
