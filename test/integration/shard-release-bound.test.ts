// A replica stopping while its API connection has stalled (seen once in the sharding e2e: a
// replica held SIGTERM for 115 s, its Lease release never logged) still ends its shard loop in
// bounded time: the release at shutdown waits at most half of 5 s for a renew in flight and
// gives the DELETE the other half; the Lease then expires instead. The API server is real; a
// TCP proxy in front of it forwards everything until the test stalls it, after which no byte
// moves in either direction on any connection, old or new.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { systemClock, systemRandom } from '../../src/kernel/index.ts';
import { KubeClient, fromKubeconfig } from '../../src/kube/index.ts';
import { ShardMembership, leaseName } from '../../src/sharding/index.ts';
import type { ShardEvent } from '../../src/sharding/index.ts';
import { startControlPlane } from '../support/cluster/index.ts';
import type { ControlPlane } from '../support/cluster/index.ts';
import { waitFor } from './support/fake-kubelet.ts';
import { logsOnFailure } from '../support/replicas/index.ts';

/** Forwards TCP to `upstream` until stall(); then holds every socket open and silent. */
class StallingProxy {
  readonly #server: net.Server;
  readonly #sockets = new Set<net.Socket>();
  #stalled = false;

  constructor(upstream: { host: string; port: number }) {
    this.#server = net.createServer((client) => {
      this.#sockets.add(client);
      client.on('close', () => this.#sockets.delete(client));
      client.on('error', () => undefined);
      if (this.#stalled) return; // accepted, never forwarded
      const up = net.connect(upstream);
      this.#sockets.add(up);
      up.on('close', () => this.#sockets.delete(up));
      up.on('error', () => client.destroy());
      client.on('data', (b) => {
        if (!this.#stalled) up.write(b);
      });
      up.on('data', (b) => {
        if (!this.#stalled) client.write(b);
      });
      client.on('end', () => up.end());
      up.on('end', () => client.end());
    });
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    return (this.#server.address() as net.AddressInfo).port;
  }

  stall(): void {
    this.#stalled = true;
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise((resolve) => this.#server.close(resolve));
  }
}

describe('shard Lease release at shutdown over a stalled API connection (real kube-apiserver behind a stalling proxy)', () => {
  const logs = logsOnFailure('shard-release-bound');
  let cp: ControlPlane;
  let proxy: StallingProxy;
  let client: KubeClient;
  let dir: string;
  const ns = `rb-${Date.now().toString(36)}`;

  logs.setup(async () => {
    cp = await startControlPlane({ log: () => undefined });
    logs.plane(cp);
    const server = new URL(cp.server);
    proxy = new StallingProxy({ host: server.hostname, port: Number(server.port) });
    const port = await proxy.listen();
    dir = mkdtempSync(path.join(tmpdir(), 'outprobe-release-'));
    const kubeconfig = path.join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, readFileSync(cp.kubeconfigPath, 'utf8').replaceAll(cp.server, `https://127.0.0.1:${port}`));
    client = new KubeClient({ connection: fromKubeconfig(kubeconfig), clock: systemClock, random: systemRandom });
    await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  });
  logs.teardown(async () => {
    await client.close().catch(() => undefined);
    await proxy.close();
    await cp.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('ends the shard loop within the 5 s release bound, reports the failed release, and leaves the Lease to expire', async () => {
    const events: ShardEvent[] = [];
    const stop = new AbortController();
    // Renews every 200 ms, so one is almost always in flight when the proxy stalls.
    const m = new ShardMembership({ client, clock: systemClock, random: systemRandom, namespace: ns, identity: 'r1', leaseDurationMs: 30_000, renewIntervalMs: 200, observe: (e) => events.push(e) });
    const running = m.run(stop.signal, { ready: true, pods: () => [], localCounts: () => new Map(), resync: () => undefined });
    await waitFor('joined', () => Promise.resolve(m.members?.join(',') === 'r1'), 20_000, 50);
    await new Promise((r) => setTimeout(r, 500));
    proxy.stall();
    await new Promise((r) => setTimeout(r, 300)); // a renew is now stuck on the stalled connection
    const t0 = Date.now();
    stop.abort();
    const ended = await Promise.race([running.then(() => Date.now() - t0), new Promise<number>((r) => setTimeout(() => r(Number.POSITIVE_INFINITY), 20_000))]);
    assert.ok(ended <= 6_500, `the shard loop ended ${ended} ms after the stop (bound: 5,000 ms release + slack)`);
    const released = events.filter((e) => e.type === 'released');
    assert.equal(released.length, 1);
    assert.ok(released[0]?.type === 'released' && released[0].error !== undefined, 'the release is reported as failed');
    // Nothing was deleted: the Lease is still there (it expires after its duration).
    const lease = await cp.kube.call('GET', `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/${leaseName('r1')}`);
    assert.equal(lease.status, 200);
  });
});
