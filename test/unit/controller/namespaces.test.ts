import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Controller } from '../../../src/controller/index.ts';
import type { ControllerEvent } from '../../../src/controller/index.ts';
import { systemClock, systemRandom } from '../../../src/kernel/index.ts';
import { connectionFor, KubeClient, ReflectorSet } from '../../../src/kube/index.ts';
import type { RawObject } from '../../../src/kube/index.ts';

/**
 * `--namespace a,b`: one list+watch per namespace, and nothing outside the
 * list is ever stored, probed or written to, even when the server sends it
 * (a loopback fake API server that smuggles objects of namespace `c` into the
 * lists and watches of `a`).
 */
const gate = 'outprobe.io/web';

function pod(namespace: string, name: string): Record<string, unknown> {
  const startedAt = new Date(Date.now() - 60_000).toISOString().replace(/\.\d+Z$/, 'Z');
  return {
    metadata: { name, namespace, uid: `uid-${namespace}-${name}`, resourceVersion: '5', labels: { app: 'web' } },
    spec: { nodeName: 'n1', readinessGates: [{ conditionType: gate }], containers: [{ name: 'web', ports: [{ name: 'http', containerPort: 8080 }] }] },
    status: {
      phase: 'Running', podIP: '127.0.0.1', podIPs: [{ ip: '127.0.0.1' }],
      conditions: [{ type: 'Ready', status: 'False' }],
      containerStatuses: [{ name: 'web', containerID: `containerd://${name}`, restartCount: 0, started: true, ready: true, state: { running: { startedAt } } }],
    },
  };
}

function policy(namespace: string): Record<string, unknown> {
  return {
    apiVersion: 'outprobe.io/v1alpha1', kind: 'ProbePolicy',
    metadata: { name: 'web', namespace, uid: `pol-${namespace}`, generation: 1, resourceVersion: '5' },
    spec: { selector: {}, readiness: { conditionType: gate, probe: { httpGet: { path: '/', port: 8080 }, periodSeconds: 1 } } },
  };
}

interface Seen { readonly method: string; readonly path: string }

/** Lists and watches per namespace; `a`'s answers also carry objects of namespace `c`. */
function fakeApiServer(seen: Seen[]): Server {
  const items: Record<string, { pods: unknown[]; policies: unknown[] }> = {
    a: { pods: [pod('a', 'p1'), pod('c', 'smuggled')], policies: [policy('a'), policy('c')] },
    b: { pods: [pod('b', 'p2')], policies: [policy('b')] },
  };
  const json = (res: ServerResponse, status: number, body: unknown): void => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
  return createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    seen.push({ method: req.method ?? '', path: url.pathname });
    req.resume();
    const m = /^\/(?:api\/v1|apis\/outprobe\.io\/v1alpha1)\/namespaces\/([^/]+)\/(pods|probepolicies)$/.exec(url.pathname);
    const ns = m?.[1] ?? '';
    const kind = m?.[2] === 'pods' ? 'pods' : 'policies';
    const data = items[ns];
    if (req.method === 'GET' && data !== undefined) {
      if (url.searchParams.get('watch') !== '1') {
        json(res, 200, { metadata: { resourceVersion: '10' }, items: data[kind] });
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      if (ns === 'a' && kind === 'pods') res.write(`${JSON.stringify({ type: 'ADDED', object: pod('c', 'smuggled-by-watch') })}\n`);
      return; // the watch stays open until the client goes away
    }
    if (req.method === 'PATCH' && /\/pods\/[^/]+\/status$/.test(url.pathname)) {
      json(res, 200, { metadata: { resourceVersion: '11' } });
      return;
    }
    if (req.method === 'POST' && url.pathname.endsWith('/events')) {
      json(res, 201, {});
      return;
    }
    json(res, 404, { kind: 'Status', reason: 'NotFound', message: `${req.method} ${url.pathname}` });
  });
}

describe('watching a list of namespaces', () => {
  const seen: Seen[] = [];
  let api: Server;
  let client: KubeClient;

  before(async () => {
    api = fakeApiServer(seen);
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    const server = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
    client = new KubeClient({ connection: connectionFor({ server, namespace: 'outprobe' }), clock: systemClock, random: systemRandom });
  });
  after(async () => {
    api.closeAllConnections();
    await client.close();
    await new Promise((resolve) => api.close(resolve));
  });

  it('ReflectorSet: one list+watch per namespace, one store, synced when all are, objects of other namespaces dropped', async () => {
    seen.length = 0;
    const events: string[] = [];
    const set = new ReflectorSet<RawObject>({
      client, clock: systemClock, random: systemRandom, namespaces: ['a', 'b', 'a'],
      path: (ns) => (ns === undefined ? '/api/v1/pods' : `/api/v1/namespaces/${ns}/pods`),
      project: (raw) => raw,
      onEvent: (e) => events.push(`${e.type} ${e.key}`),
    });
    assert.equal(set.synced, false);
    const stop = new AbortController();
    const done = set.run(stop.signal);
    const synced = (): boolean => set.synced;
    for (let i = 0; i < 100 && (!synced() || events.length < 2); i++) await sleep(20);
    await sleep(100); // the watch of `a` has sent its smuggled object by now
    stop.abort();
    await done;
    assert.equal(set.synced, true);
    assert.deepEqual([...set.store.keys()].sort(), ['a/p1', 'b/p2']);
    assert.deepEqual(events.sort(), ['ADDED a/p1', 'ADDED b/p2']);
    const lists = seen.filter((s) => s.method === 'GET').map((s) => s.path);
    assert.deepEqual([...new Set(lists)].sort(), ['/api/v1/namespaces/a/pods', '/api/v1/namespaces/b/pods'], 'never the cluster-wide collection');
  });

  it('the controller probes and writes gates only in the listed namespaces', async () => {
    seen.length = 0;
    const probed: string[] = [];
    const events: ControllerEvent[] = [];
    const controller = new Controller({
      client, clock: systemClock, random: systemRandom, observe: (e) => events.push(e),
      namespaces: ['a', 'b'],
      allowedCidrs: ['127.0.0.0/8'], // the fake pods have loopback IPs
      probers: {
        httpGet: () => {
          probed.push('httpGet');
          return Promise.resolve({ kind: 'success', output: '' });
        },
        tcpSocket: () => Promise.resolve({ kind: 'success', output: '' }),
        grpc: () => Promise.resolve({ kind: 'success', output: '' }),
      },
      statusIntervalMs: 60_000,
    });
    const stop = new AbortController();
    const done = controller.run(stop.signal);
    const patched = (): string[] => seen.filter((s) => s.method === 'PATCH' && s.path.startsWith('/api/v1/')).map((s) => s.path).sort();
    const statusWritten = (): number => new Set(seen.filter((s) => s.method === 'PATCH' && s.path.startsWith('/apis/')).map((s) => s.path)).size;
    // Gate writes and the first status write of each policy, in whatever order they come.
    for (let i = 0; i < 250 && (patched().length < 2 || statusWritten() < 2); i++) await sleep(20);
    await sleep(300); // time for any write to the smuggled pods to show up
    stop.abort();
    await done;
    assert.deepEqual(patched(), ['/api/v1/namespaces/a/pods/p1/status', '/api/v1/namespaces/b/pods/p2/status']);
    assert.deepEqual([...controller.pods.store.keys()].sort(), ['a/p1', 'b/p2']);
    const statusWrites = new Set(seen.filter((s) => s.method === 'PATCH' && s.path.startsWith('/apis/')).map((s) => s.path));
    assert.deepEqual([...statusWrites].sort(), ['/apis/outprobe.io/v1alpha1/namespaces/a/probepolicies/web/status', '/apis/outprobe.io/v1alpha1/namespaces/b/probepolicies/web/status']);
    assert.ok(!seen.some((s) => s.path.includes('/namespaces/c/')), 'nothing sent about namespace c');
    assert.ok(!seen.some((s) => s.path === '/api/v1/pods' || s.path === '/apis/outprobe.io/v1alpha1/probepolicies'), 'no cluster-wide list or watch');
    assert.equal(probed.length > 0, true);
    assert.ok(!events.some((e) => JSON.stringify(e).includes('smuggled') || JSON.stringify(e).includes('"namespace":"c"')), 'no target, event or write for namespace c');
  });
});
