// TLS on the metrics port (ADR 0068) against a real kube-apiserver: the chart installed with
// metrics.tls from an existing Secret (server-side: the Deployment with HTTPS probes and the
// 0440 volume), that Secret created through the API and written to disk as the kubelet
// writes a Secret volume, and `node src/main.ts --metrics-cert-dir` running with the chart's
// ServiceAccount token. A scraper that trusts the Secret's ca.crt reads /metrics with a token
// bound to metrics-reader; without that CA the handshake fails; authentication is still
// enforced over TLS (401, 403); health answers an unverifying client (the kubelet's HTTPS
// probe); nothing answers in clear text; and a Secret updated with a new CA and certificate is
// served without a restart, a broken update in between leaving the old one in service.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { issueCertificate } from '../../src/injection/index.ts';
import { startControlPlane } from '../support/cluster/index.ts';
import type { ControlPlane } from '../support/cluster/index.ts';
import { waitFor } from '../integration/support/fake-kubelet.ts';
import { logsOnFailure } from '../support/replicas/index.ts';
import { startMetricsController } from './support/metrics-controller.ts';

const chart = fileURLToPath(new URL('../../charts/outprobe', import.meta.url));
const NS = 'outprobe';
const MON = 'monitoring';
const SECRET = 'outprobe-metrics-cert';
const serverName = 'outprobe-metrics.outprobe.svc';
const day = 24 * 3600 * 1000;

interface Answer { readonly status: number; readonly body: string; readonly fingerprint: string }

/** One GET on a new connection: `ca` trusted (else the system's roots), or no verification at all (`insecure`). */
function get(port: number, p: string, o: { ca?: string | undefined; token?: string; insecure?: boolean } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({
      host: '127.0.0.1', port, path: p, agent: false, servername: serverName, timeout: 10_000,
      ...(o.ca === undefined ? {} : { ca: o.ca }),
      ...(o.insecure === true ? { rejectUnauthorized: false } : {}),
      ...(o.token === undefined ? {} : { headers: { authorization: `Bearer ${o.token}` } }),
    }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, fingerprint: (res.socket as unknown as { getPeerCertificate(): { fingerprint256: string } }).getPeerCertificate().fingerprint256 }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

/** A CA, and a serving certificate it signed for the metrics Service's names and 127.0.0.1. */
function issue(label: string, days = 7): { ca: string; cert: string; key: string } {
  const now = Date.now();
  const ca = issueCertificate({ commonName: `outprobe metrics e2e CA ${label}`, notBefore: now - day, notAfter: now + 30 * day });
  const serving = issueCertificate({ commonName: serverName, names: [serverName, `outprobe-metrics.${NS}`, '127.0.0.1'], notBefore: now - day, notAfter: now + days * day, issuer: ca });
  return { ca: ca.cert, cert: serving.cert, key: serving.key };
}

void describe('/metrics over TLS, authentication still enforced', () => {
  const logs = logsOnFailure('metrics-tls');
  let cp: ControlPlane;
  let tmp: string;
  let certDir: string;
  let generation = 0;
  let child: ChildProcess | undefined;
  let port = 0;
  let lines: readonly string[] = [];

  const tokenOf = async (namespace: string, sa: string): Promise<string> => {
    const tr = await cp.kube.create(`/api/v1/namespaces/${namespace}/serviceaccounts/${sa}/token`, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } });
    return (tr['status'] as { token: string }).token;
  };
  const secretData = async (): Promise<Record<string, string>> => {
    const s = await cp.kube.call('GET', `/api/v1/namespaces/${NS}/secrets/${SECRET}`);
    assert.equal(s.status, 200);
    const data = (s.body as { data: Record<string, string> }).data;
    return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
  };
  const putSecret = async (d: { ca: string; cert: string; key: string }, verb: 'POST' | 'PUT'): Promise<void> => {
    const body = {
      apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/tls', metadata: { name: SECRET, namespace: NS },
      data: { 'tls.crt': Buffer.from(d.cert).toString('base64'), 'tls.key': Buffer.from(d.key).toString('base64'), 'ca.crt': Buffer.from(d.ca).toString('base64') },
    };
    const r = verb === 'POST' ? await cp.kube.call('POST', `/api/v1/namespaces/${NS}/secrets`, body) : await cp.kube.call('PUT', `/api/v1/namespaces/${NS}/secrets/${SECRET}`, body);
    assert.ok(r.status === 200 || r.status === 201, JSON.stringify(r.body));
  };
  /** The Secret's keys written as the kubelet's AtomicWriter does: a new directory, then the ..data symlink swapped at once. */
  const project = (data: Record<string, string>): void => {
    const ts = `..${generation++}`;
    mkdirSync(path.join(certDir, ts));
    for (const [k, v] of Object.entries(data)) writeFileSync(path.join(certDir, ts, k), v, { mode: 0o440 });
    symlinkSync(ts, path.join(certDir, '..data_tmp'));
    renameSync(path.join(certDir, '..data_tmp'), path.join(certDir, '..data'));
    if (generation === 1) for (const k of Object.keys(data)) symlinkSync(path.join('..data', k), path.join(certDir, k));
  };

  logs.setup(async () => {
    tmp = mkdtempSync(path.join(tmpdir(), 'outprobe-metrics-tls-'));
    certDir = path.join(tmp, 'metrics-tls');
    mkdirSync(certDir);
    cp = await startControlPlane();
    logs.plane(cp);
    const env = { ...process.env, HELM_CACHE_HOME: `${tmp}/cache`, HELM_CONFIG_HOME: `${tmp}/config`, HELM_DATA_HOME: `${tmp}/data` };
    const r = spawnSync(cp.binaries.helm, ['--kubeconfig', cp.kubeconfigPath, 'install', 'outprobe', chart, '-n', NS, '--create-namespace', '--set', 'replicaCount=0',
      '--set', 'metrics.tls.enabled=true', '--set', `metrics.tls.existingSecret=${SECRET}`,
      '--set', 'metrics.reader.subjects[0].kind=ServiceAccount', '--set', 'metrics.reader.subjects[0].name=prometheus', '--set', `metrics.reader.subjects[0].namespace=${MON}`],
    { encoding: 'utf8', env, timeout: 60_000 });
    assert.equal(r.status, 0, r.stderr);
    // What the API server kept of the chart's Deployment: HTTPS probes, the Secret's volume, the flag.
    const dep = await cp.kube.call('GET', `/apis/apps/v1/namespaces/${NS}/deployments/outprobe`);
    const pod = (dep.body as { spec: { template: { spec: { containers: { args: string[]; livenessProbe: { httpGet: { scheme: string } }; readinessProbe: { httpGet: { scheme: string } } }[]; volumes: { name: string; secret?: { secretName: string } }[] } } } }).spec.template.spec;
    const container = pod.containers[0];
    assert.ok(container !== undefined);
    assert.ok(container.args.includes('--metrics-cert-dir=/etc/outprobe/metrics-tls'));
    assert.equal(container.livenessProbe.httpGet.scheme, 'HTTPS');
    assert.equal(container.readinessProbe.httpGet.scheme, 'HTTPS');
    assert.equal(pod.volumes.find((v) => v.name === 'metrics-tls')?.secret?.secretName, SECRET);

    await putSecret(issue('one'), 'POST');
    project(await secretData());
    await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: MON } });
    for (const name of ['prometheus', 'stranger']) await cp.kube.create(`/api/v1/namespaces/${MON}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } });
    await waitFor('CRD served', async () => (await cp.kube.call('GET', '/apis/outprobe.io/v1alpha1/probepolicies')).status === 200, 30_000);

    ({ child, port, lines } = await startMetricsController({ cp, dir: tmp, namespace: NS, token: await tokenOf(NS, 'outprobe'), record: (n, c) => logs.record(n, c), extraArgs: ['--metrics-cert-dir', certDir] }));
  });
  logs.teardown(async () => {
    child?.kill('SIGTERM');
    await cp.stop();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('a scraper trusting the Secret\'s ca.crt reads /metrics; without that CA the handshake fails; 401 and 403 as over HTTP', async () => {
    assert.ok(lines.some((l) => /"msg":"outprobe started".*"metricsTls":true/.test(l)), 'started with TLS');
    const { 'ca.crt': ca } = await secretData();
    const reader = await get(port, '/metrics', { ca, token: await tokenOf(MON, 'prometheus') });
    assert.equal(reader.status, 200, reader.body);
    assert.match(reader.body, /outprobe_api_requests_total/);
    await assert.rejects(get(port, '/metrics', { token: await tokenOf(MON, 'prometheus') }), (err: NodeJS.ErrnoException) => err.code === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'no trust without the CA');
    const none = await get(port, '/metrics', { ca });
    assert.equal(none.status, 401);
    assert.equal(none.body, 'Unauthorized\n');
    assert.equal((await get(port, '/metrics', { ca, token: 'not-a-token' })).status, 401);
    const stranger = await get(port, '/metrics', { ca, token: await tokenOf(MON, 'stranger') });
    assert.equal(stranger.status, 403);
    assert.equal(stranger.body, 'Forbidden\n');
  });

  it('health answers the kubelet\'s unverifying HTTPS probe; nothing answers in clear text', async () => {
    for (const p of ['/healthz', '/readyz']) {
      const r = await get(port, p, { insecure: true });
      assert.equal(r.status, 200, p);
      assert.equal(r.body, 'ok\n');
    }
    await assert.rejects(new Promise((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path: '/metrics', agent: false, timeout: 10_000 }, resolve);
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', reject);
      req.end();
    }), 'no plain HTTP on the TLS port');
  });

  it('serves the Secret\'s new CA and certificate without a restart; a broken update in between keeps the old one', async () => {
    const pid = child?.pid;
    const old = await secretData();
    const next = issue('two', 5);
    // half an update (the new certificate with the old key): not served
    project({ ...old, 'tls.crt': next.cert });
    await waitFor('the broken pair reported', () => Promise.resolve(lines.some((l) => /cannot be served; the previous one stays in service/.test(l))), 30_000);
    assert.equal((await get(port, '/healthz', { ca: old['ca.crt'] })).status, 200, 'the old certificate still in service');
    await putSecret(next, 'PUT');
    const fresh = await secretData();
    const swappedAt = Date.now();
    project(fresh);
    let answer: Answer | undefined;
    for (;;) {
      answer = await get(port, '/metrics', { ca: fresh['ca.crt'], token: await tokenOf(MON, 'prometheus') }).catch(() => undefined);
      if (answer !== undefined) break;
      assert.ok(Date.now() - swappedAt < 30_000, 'the new certificate was not served within 30 s');
      await sleep(250);
    }
    const tookMs = Date.now() - swappedAt;
    process.stderr.write(`metrics-tls: the updated Secret was served ${tookMs} ms after its files changed\n`);
    assert.equal(answer.status, 200);
    assert.ok(tookMs <= 15_000, `served within one reload interval and a bit: ${tookMs} ms`);
    await assert.rejects(get(port, '/metrics', { ca: old['ca.crt'] }), 'the old CA no longer verifies it');
    assert.equal((await get(port, '/metrics', { ca: fresh['ca.crt'] })).status, 401, 'authentication still enforced after the swap');
    assert.equal(child?.pid, pid);
    assert.equal(child?.exitCode, null, 'no restart');
    assert.ok(lines.some((l) => /"msg":"serving certificate reloaded"/.test(l)));
    // what an operator alerts on: the end of the certificate in service, and the reloads
    const text = answer.body;
    const expiry = Number(/outprobe_serving_certificate_expiry_timestamp_seconds\{listener="metrics"\} (\d+)/.exec(text)?.[1]);
    assert.equal(expiry, Math.floor(Date.parse(new X509Certificate(next.cert).validTo) / 1000));
    assert.match(text, /outprobe_serving_certificate_reloads_total\{listener="metrics",result="loaded"\} 1\n/);
    assert.match(text, /outprobe_serving_certificate_reloads_total\{listener="metrics",result="rejected"\} 1\n/);
  });

  it('never logs a token or a key', async () => {
    child?.kill('SIGTERM');
    await new Promise((resolve) => child?.once('exit', resolve));
    child = undefined;
    const text = lines.join('\n');
    assert.doesNotMatch(text, /eyJ[A-Za-z0-9_-]{20,}/, 'no JWT in the logs');
    assert.doesNotMatch(text, /PRIVATE KEY/);
    assert.deepEqual(lines.filter((l) => /forbidden|\b403\b|review failed/i.test(l)), [], 'its own reviews were allowed by the chart\'s RBAC');
  });
});
