import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { policyEntry } from '../../../src/controller/policies.ts';
import { answerSecondOpinion } from '../../../src/controller/second-opinion.ts';
import type { Pod } from '../../../src/kube/index.ts';
import { Metrics, MetricsAuth, startObservabilityServer } from '../../../src/observability/index.ts';
import type { ObservabilityServer } from '../../../src/observability/index.ts';
import { createHttpProber, tcpProbe, createGrpcProber } from '../../../src/probing/index.ts';
import { allowedUsersReview, httpAskPeer, secondOpinionEndpoint, secondOpinionPath } from '../../../src/secondopinion/index.ts';
import type { SecondOpinionAnswer } from '../../../src/secondopinion/index.ts';
import { AddressGuard } from '../../../src/targets/index.ts';
import { FakeClock } from '../../support/fake-clock.ts';

/** The pod's server on 127.0.0.1 and a decoy on 127.0.0.2 that no probe may reach. */
async function listen(host: string, onHit: (path: string) => number): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    res.writeHead(onHit(req.url ?? '/'));
    res.end('x');
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

const self = 'system:serviceaccount:outprobe:outprobe';
const users: Record<string, string> = { 'good-token': self, 'other-token': 'system:serviceaccount:shop:stranger' };

void describe('POST /v1/second-opinion on a real loopback listener', () => {
  let obs: ObservabilityServer;
  let podServer: { server: Server; port: number };
  let decoy: { server: Server; port: number };
  const podHits: string[] = [];
  const decoyHits: string[] = [];
  let healthy = true;
  let answer: ((signal: AbortSignal) => Promise<SecondOpinionAnswer>) | undefined;

  before(async () => {
    podServer = await listen('127.0.0.1', (p) => (podHits.push(p), healthy ? 200 : 503));
    decoy = await listen('127.0.0.2', (p) => (decoyHits.push(p), 200));
    const raw = {
      apiVersion: 'outprobe.io/v1alpha1', kind: 'ProbePolicy',
      metadata: { name: 'web', namespace: 'shop', uid: 'p1', generation: 1 },
      spec: { selector: { matchLabels: { app: 'web' } }, readiness: { probe: { httpGet: { path: '/healthz', port: podServer.port }, timeoutSeconds: 1 } } },
    };
    const entry = policyEntry(raw, { execEnabled: false, execNamespaces: [] });
    assert.ok(entry.policy !== undefined);
    const pod: Pod = {
      uid: 'uid-web-0', namespace: 'shop', name: 'web-0', resourceVersion: '1', labels: { app: 'web' }, nodeName: 'n1', phase: 'Running', podIP: '127.0.0.1',
      deletionTimestamp: undefined, restartPolicy: 'Always', terminationGracePeriodSeconds: 30, hostNetwork: false, readinessGates: [],
      containers: [{ name: 'web', ports: [], env: {}, sidecar: false }],
      containerStatuses: [{ name: 'web', containerId: 'containerd://c0', restartCount: 0, state: 'running', startedAt: 1_699_999_000_000, started: true, ready: true }],
      conditions: [],
    };
    const deps = {
      policies: new Map([[entry.key, entry]]),
      pods: () => [pod],
      probers: { httpGet: createHttpProber({ userAgent: 'kube-probe/1.37' }), tcpSocket: tcpProbe, grpc: createGrpcProber({ userAgent: 'kube-probe/1.37' }) },
      guard: new AddressGuard(['127.0.0.1/32']),
    };
    const auth = new MetricsAuth({
      clock: new FakeClock(),
      review: allowedUsersReview((token) => Promise.resolve(Object.hasOwn(users, token) ? users[token] : undefined), () => Promise.resolve(new Set([self]))),
    });
    const route = secondOpinionEndpoint({
      authorize: (a) => auth.authorize(a),
      answer: (req, signal) => answer?.(signal) ?? answerSecondOpinion(req, deps, signal),
      maxInFlight: 2,
    });
    obs = await startObservabilityServer({ host: '127.0.0.1', port: 0, metrics: new Metrics({ defaultMetrics: false }), ready: () => true, routes: new Map([[secondOpinionPath, route]]) });
  });

  after(async () => {
    await obs.close();
    podServer.server.close();
    decoy.server.close();
  });

  const post = (body: unknown, token?: string): Promise<Response> =>
    fetch(`http://127.0.0.1:${obs.port}${secondOpinionPath}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const ask = { policy: 'shop/web', podUID: 'uid-web-0', probe: 'readiness' };

  void it('401 without a token or with one TokenReview does not know, 403 for another user, and never echoes the token', async () => {
    assert.equal((await post(ask)).status, 401);
    const bad = await post(ask, 'made-up-token');
    assert.equal(bad.status, 401);
    assert.doesNotMatch(await bad.text(), /made-up-token/);
    const other = await post(ask, 'other-token');
    assert.equal(other.status, 403);
    assert.doesNotMatch(await other.text(), /other-token/);
    assert.equal((await fetch(`http://127.0.0.1:${obs.port}${secondOpinionPath}`)).status, 405, 'GET is refused');
  });

  void it('answers unknown for a pod or policy it does not know, 400 for a malformed request, 413 for a large body', async () => {
    const pod = await post({ ...ask, podUID: 'no-such-uid' }, 'good-token');
    assert.deepEqual(await pod.json(), { result: 'unknown', message: 'pod unknown on this replica' });
    const policy = await post({ ...ask, policy: 'shop/nope' }, 'good-token');
    assert.equal(((await policy.json()) as SecondOpinionAnswer).result, 'unknown');
    const kind = await post({ ...ask, probe: 'liveness' }, 'good-token');
    assert.equal(((await kind.json()) as SecondOpinionAnswer).result, 'unknown', 'the policy has no liveness probe');
    assert.equal((await post({ ...ask, probe: 'exec' }, 'good-token')).status, 400);
    assert.equal((await post('{not json', 'good-token')).status, 400);
    assert.equal((await post({ ...ask, pad: 'x'.repeat(5000) }, 'good-token')).status, 413);
  });

  void it('probes the pod its own informer shows, never an address or port from the request', async () => {
    podHits.length = 0;
    const res = await post({ ...ask, ip: '127.0.0.2', host: '127.0.0.2', port: decoy.port, podIP: '127.0.0.2', url: `http://127.0.0.2:${decoy.port}/` }, 'good-token');
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as SecondOpinionAnswer).result, 'success');
    assert.deepEqual(podHits, ['/healthz']);
    assert.deepEqual(decoyHits, []);
    healthy = false;
    const failing = await post(ask, 'good-token');
    assert.deepEqual(await failing.json(), { result: 'failure', message: 'HTTP probe failed with statuscode: 503' });
    healthy = true;
  });

  void it('the client side: asks with its bearer token and reads the answer', async () => {
    const askPeer = httpAskPeer(() => 'good-token');
    assert.deepEqual(await askPeer(`127.0.0.1:${obs.port}`, { policy: 'shop/web', podUid: 'uid-web-0', probe: 'readiness' }, AbortSignal.timeout(5000)), { result: 'success', message: 'x' });
    await assert.rejects(httpAskPeer(() => 'other-token')(`127.0.0.1:${obs.port}`, { policy: 'shop/web', podUid: 'uid-web-0', probe: 'readiness' }, AbortSignal.timeout(5000)), /HTTP 403/);
  });

  void it('answers 429 beyond its bound of requests in flight', async () => {
    const release: (() => void)[] = [];
    answer = () => new Promise((resolve) => release.push(() => resolve({ result: 'success', message: '' })));
    const slow = [post(ask, 'good-token'), post(ask, 'good-token')];
    while (release.length < 2) await new Promise((r) => setTimeout(r, 10));
    const third = await post(ask, 'good-token');
    assert.equal(third.status, 429);
    for (const r of release) r();
    assert.deepEqual((await Promise.all(slow)).map((r) => r.status), [200, 200]);
    answer = undefined;
  });
});
