import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { systemRandom } from '../../../src/kernel/index.ts';
import { connectionFor, KubeClient, reviewBearerToken } from '../../../src/kube/index.ts';
import { Metrics, MetricsAuth, bearerToken, startObservabilityServer } from '../../../src/observability/index.ts';
import type { ObservabilityServer } from '../../../src/observability/index.ts';
import { FakeClock } from '../../support/fake-clock.ts';

/**
 * `/metrics` behind kube-rbac-proxy's check, against a loopback HTTP peer
 * that answers TokenReviews and SubjectAccessReviews like the API server
 * (the e2e tier runs the same against a real kube-apiserver).
 */
interface Review {
  readonly path: string;
  readonly authorization: string | undefined;
  readonly body: { spec: Record<string, unknown> };
}

const users: Record<string, { username: string; uid: string; groups: string[]; extra?: Record<string, string[]> }> = {
  'reader-token': { username: 'system:serviceaccount:monitoring:prometheus', uid: 'u-1', groups: ['system:serviceaccounts', 'system:authenticated'], extra: { 'authentication.kubernetes.io/pod-name': ['prom-0'] } },
  'other-token': { username: 'system:serviceaccount:shop:web', uid: 'u-2', groups: ['system:authenticated'] },
};

async function body(req: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of req as AsyncIterable<Buffer>) text += chunk.toString('utf8');
  return text;
}

/** A fake API server: the two review endpoints, and a switch that makes them fail. */
function fakeApiServer(reviews: Review[], state: { failing: boolean; holdMs: number }): Server {
  return createServer((req, res) => {
    void body(req).then(async (text) => {
      const parsed = JSON.parse(text) as Review['body'];
      reviews.push({ path: req.url ?? '', authorization: req.headers.authorization, body: parsed });
      if (state.holdMs > 0) await new Promise((r) => setTimeout(r, state.holdMs));
      res.setHeader('content-type', 'application/json');
      if (state.failing) {
        res.writeHead(500).end(JSON.stringify({ kind: 'Status', reason: 'InternalError', message: 'etcd is down' }));
        return;
      }
      if (req.url === '/apis/authentication.k8s.io/v1/tokenreviews') {
        const user = users[String(parsed.spec['token'])];
        res.end(JSON.stringify({ kind: 'TokenReview', status: user === undefined ? { authenticated: false, error: 'invalid bearer token' } : { authenticated: true, user } }));
        return;
      }
      if (req.url === '/apis/authorization.k8s.io/v1/subjectaccessreviews') {
        const s = parsed.spec as { user: string; nonResourceAttributes?: { path: string; verb: string } };
        const allowed = s.user === 'system:serviceaccount:monitoring:prometheus' && s.nonResourceAttributes?.path === '/metrics' && s.nonResourceAttributes.verb === 'get';
        res.end(JSON.stringify({ kind: 'SubjectAccessReview', status: { allowed, ...(allowed ? { reason: 'RBAC: allowed by ClusterRoleBinding' } : {}) } }));
        return;
      }
      res.writeHead(404).end('{}');
    });
  });
}

describe('/metrics with kube-rbac-proxy style authentication', () => {
  const reviews: Review[] = [];
  const state = { failing: false, holdMs: 0 };
  const clock = new FakeClock();
  const errors: unknown[] = [];
  let api: Server;
  let client: KubeClient;
  let server: ObservabilityServer;
  let auth: MetricsAuth;
  const scrape = (headers: Record<string, string> = {}, path = '/metrics'): Promise<Response> => fetch(`http://127.0.0.1:${server.port}${path}`, { headers });
  const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

  before(async () => {
    api = fakeApiServer(reviews, state);
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    client = new KubeClient({
      connection: connectionFor({ server: `http://127.0.0.1:${(api.address() as AddressInfo).port}`, namespace: 'outprobe', token: 'controller-own-token' }),
      clock,
      random: systemRandom,
      maxAttempts: 1,
    });
    auth = new MetricsAuth({ clock, ttlMs: 60_000, maxEntries: 2, maxInFlight: 2, review: (token) => reviewBearerToken(client, token, { path: '/metrics', verb: 'get' }), onError: (err) => errors.push(err) });
    const metrics = new Metrics({ defaultMetrics: false });
    metrics.setShardMembers(2);
    server = await startObservabilityServer({ host: '127.0.0.1', port: 0, metrics, ready: () => true, authorizeMetrics: (h) => auth.authorize(h) });
  });
  after(async () => {
    await server.close();
    await client.close();
    await new Promise((resolve) => api.close(resolve));
  });
  beforeEach(() => {
    clock.advance(61_000); // every cached answer expires between tests
    reviews.length = 0;
    errors.length = 0;
    state.failing = false;
    state.holdMs = 0;
  });

  it('answers 401 without a bearer token, asking nothing', async () => {
    for (const headers of [{}, { authorization: 'Basic dXNlcjpwYXNz' }, { authorization: 'Bearer ' }, { authorization: 'Bearer a b' }]) {
      const res = await scrape(headers);
      assert.equal(res.status, 401, JSON.stringify(headers));
      assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="outprobe"');
      assert.equal(await res.text(), 'Unauthorized\n');
    }
    assert.equal(reviews.length, 0);
  });

  it('serves a token allowed to get /metrics; TokenReview then SubjectAccessReview for the non-resource URL', async () => {
    const res = await scrape(bearer('reader-token'));
    assert.equal(res.status, 200);
    assert.ok((await res.text()).includes('outprobe_shard_members 2'));
    assert.deepEqual(reviews.map((r) => r.path), ['/apis/authentication.k8s.io/v1/tokenreviews', '/apis/authorization.k8s.io/v1/subjectaccessreviews']);
    // The controller asks with its own credentials; the scraper's token is only the reviewed object.
    assert.ok(reviews.every((r) => r.authorization === 'Bearer controller-own-token'));
    assert.deepEqual(reviews[0]?.body.spec, { token: 'reader-token' });
    assert.deepEqual(reviews[1]?.body.spec, {
      user: 'system:serviceaccount:monitoring:prometheus', uid: 'u-1', groups: ['system:serviceaccounts', 'system:authenticated'],
      extra: { 'authentication.kubernetes.io/pod-name': ['prom-0'] }, nonResourceAttributes: { path: '/metrics', verb: 'get' },
    });
  });

  it('answers 403 to an authenticated user without the permission and 401 to an unknown token', async () => {
    const other = await scrape(bearer('other-token'));
    assert.equal(other.status, 403);
    assert.equal(await other.text(), 'Forbidden\n');
    const unknown = await scrape(bearer('made-up'));
    assert.equal(unknown.status, 401);
    assert.equal(await unknown.text(), 'Unauthorized\n');
    // An unknown token is never sent on to a SubjectAccessReview.
    assert.deepEqual(reviews.map((r) => r.path.split('/').pop()), ['tokenreviews', 'subjectaccessreviews', 'tokenreviews']);
  });

  it('reuses an answer for the TTL, keyed by a hash of the token, then asks again', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await scrape(bearer('reader-token'))).status, 200);
    for (let i = 0; i < 3; i++) assert.equal((await scrape(bearer('other-token'))).status, 403);
    assert.equal(reviews.length, 4, 'one review pair per token');
    clock.advance(59_000);
    assert.equal((await scrape(bearer('reader-token'))).status, 200);
    assert.equal(reviews.length, 4);
    clock.advance(1_000);
    assert.equal((await scrape(bearer('reader-token'))).status, 200);
    assert.equal(reviews.length, 6, 'asked again once the answer expired');
  });

  it('remembers a bounded number of refused tokens apart from the allowed ones: refusals never push an allowed token out', async () => {
    for (const token of ['reader-token', 'other-token', 'made-up', 'made-up-2']) await (await scrape(bearer(token))).text();
    assert.equal(auth.size, 3, 'one allowed, the two newest refusals');
    reviews.length = 0;
    assert.equal((await scrape(bearer('reader-token'))).status, 200);
    await (await scrape(bearer('made-up-2'))).text();
    assert.equal(reviews.length, 0, 'the allowed token and the newest refusal are kept');
    assert.equal((await scrape(bearer('other-token'))).status, 403);
    assert.equal(reviews.filter((r) => r.path.endsWith('tokenreviews')).length, 1, 'the oldest refusal was dropped and is asked again');
  });

  it('a flood of made-up tokens is shed (429) while an allowed scraper is served from the cache, never refused', async () => {
    assert.equal((await scrape(bearer('reader-token'))).status, 200);
    // Refused tokens reviewed one after another fill the cache (2 entries here): they must not push the scraper out.
    for (let i = 0; i < 6; i++) await (await scrape(bearer(`refused-${i}`))).text();
    state.holdMs = 300; // every review of a new token is slow: the stranger pool stays full
    reviews.length = 0;
    const flood = Array.from({ length: 40 }, (_, i) => scrape(bearer(`random-${i}`)));
    const scrapes = Array.from({ length: 10 }, () => scrape(bearer('reader-token')));
    const [f, ok] = await Promise.all([Promise.all(flood), Promise.all(scrapes)]);
    await Promise.all([...f, ...ok].map((r) => r.text()));
    assert.deepEqual(ok.map((r) => r.status), Array(10).fill(200), 'the known scraper is never refused');
    const shed = f.filter((r) => r.status === 429).length;
    assert.ok(shed >= 38, `${shed} of 40 strangers shed: only 2 reviews fit in flight`);
    assert.ok(reviews.length <= 2, `${reviews.length} reviews for the flood`);
  });

  it('answers 500 when the review fails, caches nothing, and reports the error without the token', async () => {
    state.failing = true;
    const res = await scrape(bearer('reader-token'));
    assert.equal(res.status, 500);
    assert.equal(await res.text(), 'Token review failed\n');
    assert.equal(errors.length, 1);
    assert.doesNotMatch(String(errors[0]), /reader-token/);
    state.failing = false;
    assert.equal((await scrape(bearer('reader-token'))).status, 200, 'the failure was not cached');
  });

  it('shares one review between concurrent requests with a token and refuses more tokens in flight than the limit', async () => {
    state.holdMs = 200;
    const first = [scrape(bearer('reader-token')), scrape(bearer('reader-token')), scrape(bearer('other-token'))];
    await new Promise((r) => setTimeout(r, 50));
    const third = await scrape(bearer('made-up'));
    assert.equal(third.status, 429);
    await third.text();
    const done = await Promise.all(first);
    assert.deepEqual(done.map((r) => r.status), [200, 200, 403]);
    await Promise.all(done.map((r) => r.text()));
    assert.equal(reviews.filter((r) => r.path.endsWith('tokenreviews')).length, 2, 'one TokenReview per distinct token');
  });

  it('leaves /healthz and /readyz open', async () => {
    for (const path of ['/healthz', '/readyz']) {
      const res = await scrape({}, path);
      assert.equal(res.status, 200);
      assert.equal(await res.text(), 'ok\n');
    }
    assert.equal(reviews.length, 0);
  });
});

describe('bearerToken', () => {
  it('takes the token of a Bearer header, scheme case-insensitive', () => {
    assert.equal(bearerToken('Bearer abc.def'), 'abc.def');
    assert.equal(bearerToken('bearer  abc '), 'abc');
    assert.equal(bearerToken(undefined), undefined);
    assert.equal(bearerToken('Bearer'), undefined);
    assert.equal(bearerToken('Token abc'), undefined);
  });
});
