// /metrics authentication against a real kube-apiserver: the chart's RBAC is installed
// with helm, `node src/main.ts` runs with a token of the chart's ServiceAccount (so its
// TokenReviews and SubjectAccessReviews need the chart's metrics-auth ClusterRole),
// and scrapers present tokens of real ServiceAccounts: one bound to the chart's
// metrics-reader ClusterRole gets 200, one without it 403, no token or a made-up one 401.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { startControlPlane } from '../support/cluster/index.ts';
import type { ControlPlane } from '../support/cluster/index.ts';
import { waitFor } from '../integration/support/fake-kubelet.ts';
import { logsOnFailure } from '../support/replicas/index.ts';
import { startMetricsController } from './support/metrics-controller.ts';

const chart = fileURLToPath(new URL('../../charts/outprobe', import.meta.url));
const NS = 'outprobe';
const MON = 'monitoring';

void describe('/metrics behind TokenReview and SubjectAccessReview', () => {
  const logs = logsOnFailure('metrics-auth');
  let cp: ControlPlane;
  let tmp: string;
  let child: ChildProcess | undefined;
  let port = 0;
  let lines: readonly string[] = [];

  const tokenOf = async (namespace: string, sa: string): Promise<string> => {
    const tr = await cp.kube.create(`/api/v1/namespaces/${namespace}/serviceaccounts/${sa}/token`, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } });
    return (tr['status'] as { token: string }).token;
  };
  const scrape = (token?: string, p = '/metrics'): Promise<Response> => fetch(`http://127.0.0.1:${port}${p}`, token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } });

  logs.setup(async () => {
    tmp = mkdtempSync(path.join(tmpdir(), 'outprobe-metrics-auth-'));
    cp = await startControlPlane();
    logs.plane(cp);
    const env = { ...process.env, HELM_CACHE_HOME: `${tmp}/cache`, HELM_CONFIG_HOME: `${tmp}/config`, HELM_DATA_HOME: `${tmp}/data` };
    const r = spawnSync(cp.binaries.helm, ['--kubeconfig', cp.kubeconfigPath, 'install', 'outprobe', chart, '-n', NS, '--create-namespace', '--set', 'replicaCount=0',
      '--set', 'metrics.reader.subjects[0].kind=ServiceAccount', '--set', 'metrics.reader.subjects[0].name=prometheus', '--set', `metrics.reader.subjects[0].namespace=${MON}`],
    { encoding: 'utf8', env, timeout: 60_000 });
    assert.equal(r.status, 0, r.stderr);
    await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: MON } });
    for (const name of ['prometheus', 'stranger']) await cp.kube.create(`/api/v1/namespaces/${MON}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } });
    await waitFor('CRD served', async () => (await cp.kube.call('GET', '/apis/outprobe.io/v1alpha1/probepolicies')).status === 200, 30_000);

    // The controller with only its ServiceAccount's token, as in a pod.
    ({ child, port, lines } = await startMetricsController({ cp, dir: tmp, namespace: NS, token: await tokenOf(NS, 'outprobe'), record: (n, c) => logs.record(n, c) }));
  });
  logs.teardown(async () => {
    child?.kill('SIGTERM');
    await cp.stop();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('200 for a ServiceAccount bound to the metrics-reader ClusterRole, 403 without it, 401 without a valid token', async () => {
    const reader = await scrape(await tokenOf(MON, 'prometheus'));
    assert.equal(reader.status, 200, await reader.clone().text());
    assert.match(await reader.text(), /outprobe_api_requests_total/);
    const stranger = await scrape(await tokenOf(MON, 'stranger'));
    assert.equal(stranger.status, 403);
    assert.equal(await stranger.text(), 'Forbidden\n');
    const none = await scrape();
    assert.equal(none.status, 401);
    await none.text();
    const madeUp = await scrape('not-a-token');
    assert.equal(madeUp.status, 401);
    await madeUp.text();
    for (const p of ['/healthz', '/readyz']) {
      const res = await scrape(undefined, p);
      assert.equal(res.status, 200, p);
      assert.equal(await res.text(), 'ok\n');
    }
  });

  it('never logs a token, and was never forbidden itself', async () => {
    const tokens = [await tokenOf(MON, 'prometheus')];
    assert.equal((await scrape(tokens[0])).status, 200);
    child?.kill('SIGTERM');
    await new Promise((resolve) => child?.once('exit', resolve));
    child = undefined;
    const text = lines.join('\n');
    assert.doesNotMatch(text, /eyJ[A-Za-z0-9_-]{20,}/, 'no JWT in the logs');
    assert.doesNotMatch(text, /not-a-token/);
    assert.deepEqual(lines.filter((l) => /forbidden|\b403\b|review failed/i.test(l)), [], 'its own reviews were allowed by the chart\'s RBAC');
  });
});
