import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Metrics, startObservabilityServer } from '../../../src/observability/index.ts';
import type { ObservabilityServer } from '../../../src/observability/index.ts';

describe('startObservabilityServer', () => {
  let server: ObservabilityServer;
  let ready: boolean | { ok: boolean; reason: string } = false;
  let live = true;
  const base = (): string => `http://127.0.0.1:${server.port}`;

  before(async () => {
    const metrics = new Metrics({ defaultMetrics: false });
    metrics.setShardMembers(3);
    server = await startObservabilityServer({ host: '127.0.0.1', port: 0, metrics, ready: () => ready, live: () => live });
  });
  after(() => server.close());

  it('serves /metrics in the Prometheus text format', async () => {
    const res = await fetch(`${base()}/metrics`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    assert.ok((await res.text()).includes('outprobe_shard_members 3'));
  });

  it('answers /healthz while the process is live', async () => {
    let res = await fetch(`${base()}/healthz`);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), 'ok\n');
    live = false;
    res = await fetch(`${base()}/healthz`);
    assert.equal(res.status, 503);
    await res.text();
    live = true;
  });

  it('answers /readyz 503 with the reason until ready, then 200', async () => {
    ready = { ok: false, reason: 'pods cache not synced' };
    let res = await fetch(`${base()}/readyz`);
    assert.equal(res.status, 503);
    assert.equal(await res.text(), 'not ready: pods cache not synced\n');
    ready = false;
    res = await fetch(`${base()}/readyz`);
    assert.equal(res.status, 503);
    await res.text();
    ready = true;
    res = await fetch(`${base()}/readyz?verbose`);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), 'ok\n');
  });

  it('shows no exception text on the unauthenticated health endpoints', async () => {
    const other = await startObservabilityServer({
      host: '127.0.0.1', port: 0, metrics: new Metrics({ defaultMetrics: false }),
      ready: () => { throw new Error('token abc123 rejected by https://10.0.0.1'); },
      live: () => { throw new Error('token abc123 rejected by https://10.0.0.1'); },
    });
    try {
      const ready = await fetch(`http://127.0.0.1:${other.port}/readyz`);
      assert.equal(ready.status, 503);
      assert.equal(await ready.text(), 'not ready: readiness check failed\n');
      const live = await fetch(`http://127.0.0.1:${other.port}/healthz`);
      assert.equal(live.status, 503);
      assert.equal(await live.text(), 'liveness check failed\n');
    } finally {
      await other.close();
    }
  });

  it('answers 404 for other paths and 405 for other methods', async () => {
    const res = await fetch(`${base()}/nope`);
    assert.equal(res.status, 404);
    await res.text();
    const post = await fetch(`${base()}/metrics`, { method: 'POST' });
    assert.equal(post.status, 405);
    await post.text();
  });

  it('closes with a keep-alive connection open', async () => {
    const other = await startObservabilityServer({ host: '127.0.0.1', port: 0, metrics: new Metrics({ defaultMetrics: false }), ready: () => true });
    const res = await fetch(`http://127.0.0.1:${other.port}/healthz`);
    await res.text();
    await other.close();
    await other.close();
    await assert.rejects(fetch(`http://127.0.0.1:${other.port}/healthz`));
  });
});
