// The chart's metrics.tls (ADR 0068), rendered with `helm template`: off by default (plain
// HTTP, nothing of it rendered); with cert-manager (its own CA chain, or the user's issuer)
// or an existing Secret: the controller's --metrics-cert-dir from a 0440 volume (args the
// controller's own config accepts), HTTPS kubelet probes, the ServiceMonitor and PodMonitor
// on https verifying serverName against the CA, `helm test` over https with that CA; and
// the refusals (no source, two sources, a CA from both a Secret and a ConfigMap).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { loadConfig } from '../../src/config/index.ts';
import { REPO_ROOT, findBinaries } from '../support/cluster/bins.ts';

type Obj = { kind: string; apiVersion: string; metadata: { name: string }; spec?: Record<string, unknown> };
interface Probe { readonly httpGet: { readonly path: string; readonly port: string; readonly scheme?: string } }
interface Container {
  readonly args?: string[]; readonly env?: { name: string; value?: string }[]; readonly livenessProbe?: Probe; readonly readinessProbe?: Probe;
  readonly volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
}
interface PodSpec { readonly containers: Container[]; readonly volumes?: { name: string; secret?: { secretName: string; defaultMode?: number; items?: unknown[] }; configMap?: { name: string; items?: unknown[] } }[] }

const chart = path.join(REPO_ROOT, 'charts/outprobe');
const helmHome = mkdtempSync(path.join(tmpdir(), 'outprobe-helm-'));
const env = { ...process.env, HELM_CACHE_HOME: `${helmHome}/cache`, HELM_CONFIG_HOME: `${helmHome}/config`, HELM_DATA_HOME: `${helmHome}/data` };
const { helm } = findBinaries();

function render(...args: string[]): { status: number | null; objs: Obj[]; stderr: string } {
  const r = spawnSync(helm, ['template', 'outprobe', chart, '--namespace', 'outprobe', ...args], { encoding: 'utf8', env, timeout: 60_000 });
  const objs = r.status === 0 ? parseAllDocuments(r.stdout).map((d) => d.toJS() as Obj | null).filter((o): o is Obj => o !== null) : [];
  return { status: r.status, objs, stderr: r.stderr };
}
function ok(...args: string[]): Obj[] {
  const r = render(...args);
  assert.equal(r.status, 0, r.stderr);
  return r.objs;
}
const find = (objs: readonly Obj[], kind: string, name?: string): Obj | undefined => objs.find((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
const podSpec = (objs: readonly Obj[], kind: 'Deployment' | 'Pod'): PodSpec => {
  const o = find(objs, kind, kind === 'Pod' ? 'outprobe-test' : 'outprobe');
  assert.ok(o !== undefined, kind);
  return (kind === 'Pod' ? o.spec : (o.spec?.['template'] as { spec: unknown }).spec) as PodSpec;
};
const endpointOf = (objs: readonly Obj[], kind: 'ServiceMonitor' | 'PodMonitor'): Record<string, unknown> =>
  ((find(objs, kind)?.spec?.[kind === 'ServiceMonitor' ? 'endpoints' : 'podMetricsEndpoints'] as Record<string, unknown>[] | undefined) ?? [])[0] ?? {};
const tls = ['--set', 'metrics.tls.enabled=true'];

describe('chart: metrics.tls', () => {
  after(() => rmSync(helmHome, { recursive: true, force: true }));

  it('is off by default: plain HTTP, HTTP probes, nothing of it rendered', () => {
    const objs = ok('--set', 'metrics.serviceMonitor.enabled=true');
    const c = podSpec(objs, 'Deployment').containers[0];
    assert.ok(c !== undefined);
    assert.equal(c.args?.some((a) => a.startsWith('--metrics-cert-dir') || a.startsWith('--metrics-tls')), false);
    assert.equal(c.livenessProbe?.httpGet.scheme, undefined);
    assert.equal(c.readinessProbe?.httpGet.scheme, undefined);
    assert.equal(podSpec(objs, 'Deployment').volumes?.some((v) => v.name === 'metrics-tls'), false);
    const ep = endpointOf(objs, 'ServiceMonitor');
    assert.equal(ep['scheme'], undefined);
    assert.equal(ep['tlsConfig'], undefined);
    assert.equal(objs.some((o) => o.apiVersion.startsWith('cert-manager.io/') && o.metadata.name.includes('metrics')), false);
    assert.equal(podSpec(objs, 'Pod').volumes, undefined);
    // cert-manager or a Secret named without metrics.tls.enabled: still off
    const named = ok('--set', 'metrics.tls.certManager.enabled=true', '--set', 'metrics.tls.existingSecret=mine');
    assert.equal(podSpec(named, 'Deployment').containers[0]?.args?.some((a) => a.startsWith('--metrics-cert-dir')), false);
  });

  it('cert-manager: its own CA chain, a Certificate for the Service\'s names, the controller serving it over HTTPS, the ServiceMonitor verifying it', () => {
    const objs = ok(...tls, '--set', 'metrics.tls.certManager.enabled=true', '--set', 'metrics.serviceMonitor.enabled=true');
    const spec = podSpec(objs, 'Deployment');
    const c = spec.containers[0];
    assert.ok(c !== undefined);
    assert.ok(c.args?.includes('--metrics-cert-dir=/etc/outprobe/metrics-tls'), c.args?.join(' '));
    assert.deepEqual(c.volumeMounts?.find((m) => m.name === 'metrics-tls'), { name: 'metrics-tls', mountPath: '/etc/outprobe/metrics-tls', readOnly: true });
    assert.deepEqual(spec.volumes?.find((v) => v.name === 'metrics-tls')?.secret, { secretName: 'outprobe-metrics-tls', defaultMode: 0o440 });
    assert.deepEqual(c.livenessProbe?.httpGet, { path: '/healthz', port: 'metrics', scheme: 'HTTPS' });
    assert.deepEqual(c.readinessProbe?.httpGet, { path: '/readyz', port: 'metrics', scheme: 'HTTPS' });
    // the args are ones the controller accepts, with TLS on
    const loaded = loadConfig(c.args ?? [], { POD_NAME: 'outprobe-0', POD_NAMESPACE: 'outprobe', POD_UID: 'u', NODE_NAME: 'n', POD_IP: '10.0.0.1' });
    assert.ok(loaded.ok, loaded.ok ? '' : loaded.message);
    assert.equal(loaded.config.metricsCertDir, '/etc/outprobe/metrics-tls');
    assert.equal(loaded.config.metricsTlsMinVersion, 'TLSv1.2');
    const strict = podSpec(ok(...tls, '--set', 'metrics.tls.existingSecret=mine', '--set', 'metrics.tls.minVersion=VersionTLS13'), 'Deployment').containers[0]?.args ?? [];
    assert.ok(strict.includes('--metrics-tls-min-version=VersionTLS13'), strict.join(' '));
    // self-signed Issuer → CA Certificate → CA Issuer → serving Certificate
    assert.deepEqual(find(objs, 'Issuer', 'outprobe-metrics-selfsigned')?.spec, { selfSigned: {} });
    const caCert = find(objs, 'Certificate', 'outprobe-metrics-ca')?.spec;
    assert.equal(caCert?.['isCA'], true);
    assert.deepEqual(caCert['issuerRef'], { name: 'outprobe-metrics-selfsigned', kind: 'Issuer' });
    assert.deepEqual(find(objs, 'Issuer', 'outprobe-metrics-ca')?.spec, { ca: { secretName: 'outprobe-metrics-ca' } });
    const serving = find(objs, 'Certificate', 'outprobe-metrics')?.spec;
    assert.equal(serving?.['secretName'], 'outprobe-metrics-tls');
    assert.deepEqual(serving['issuerRef'], { name: 'outprobe-metrics-ca', kind: 'Issuer' });
    assert.deepEqual(serving['dnsNames'], ['outprobe-metrics.outprobe.svc', 'outprobe-metrics.outprobe.svc.cluster.local', 'outprobe-metrics.outprobe', 'outprobe-metrics']);
    assert.deepEqual(serving['usages'], ['server auth', 'digital signature']);
    assert.equal(serving['duration'], undefined);
    // the ServiceMonitor: https, the name on the certificate, the CA cert-manager writes beside it, the token as before
    assert.deepEqual(endpointOf(objs, 'ServiceMonitor'), {
      port: 'metrics', path: '/metrics', interval: '30s', scrapeTimeout: '10s', honorLabels: true,
      scheme: 'https', tlsConfig: { serverName: 'outprobe-metrics.outprobe.svc', ca: { secret: { name: 'outprobe-metrics-tls', key: 'ca.crt' } } },
      authorization: { type: 'Bearer', credentials: { name: 'outprobe-scraper-token', key: 'token' } },
    });
    // helm test: https, verified against the same CA for the same name
    const test = podSpec(objs, 'Pod');
    const testEnv = Object.fromEntries((test.containers[0]?.env ?? []).map((e) => [e.name, e.value]));
    assert.equal(testEnv['METRICS_CA_FILE'], '/etc/outprobe/metrics-ca/ca.crt');
    assert.equal(testEnv['METRICS_SERVER_NAME'], 'outprobe-metrics.outprobe.svc');
    assert.deepEqual(test.volumes, [{ name: 'metrics-ca', secret: { secretName: 'outprobe-metrics-tls', items: [{ key: 'ca.crt', path: 'ca.crt' }] } }]);
  });

  it('cert-manager with one\'s own issuer: only the serving Certificate, lifetimes and an extra name passed through', () => {
    const objs = ok(...tls, '--set', 'metrics.tls.certManager.enabled=true', '--set', 'metrics.tls.certManager.issuerRef.kind=ClusterIssuer', '--set', 'metrics.tls.certManager.issuerRef.name=internal-ca',
      '--set', 'metrics.tls.certManager.duration=720h', '--set', 'metrics.tls.certManager.renewBefore=240h', '--set', 'metrics.tls.serverName=metrics.outprobe.example');
    assert.deepEqual(objs.filter((o) => o.apiVersion.startsWith('cert-manager.io/')).map((o) => `${o.kind}/${o.metadata.name}`), ['Certificate/outprobe-metrics']);
    const serving = find(objs, 'Certificate', 'outprobe-metrics')?.spec;
    assert.deepEqual(serving?.['issuerRef'], { kind: 'ClusterIssuer', name: 'internal-ca' });
    assert.equal(serving['duration'], '720h');
    assert.equal(serving['renewBefore'], '240h');
    assert.equal((serving['dnsNames'] as string[])[0], 'metrics.outprobe.example');
  });

  it('an existing Secret: mounted, no Certificate; its ca.crt or a CA of one\'s own; the PodMonitor verifies it too', () => {
    const objs = ok(...tls, '--set', 'metrics.tls.existingSecret=mine', '--set', 'metrics.podMonitor.enabled=true');
    assert.equal(objs.some((o) => o.apiVersion.startsWith('cert-manager.io/')), false);
    assert.deepEqual(podSpec(objs, 'Deployment').volumes?.find((v) => v.name === 'metrics-tls')?.secret, { secretName: 'mine', defaultMode: 0o440 });
    const ep = endpointOf(objs, 'PodMonitor');
    assert.equal(ep['scheme'], 'https');
    assert.deepEqual(ep['tlsConfig'], { serverName: 'outprobe-metrics.outprobe.svc', ca: { secret: { name: 'mine', key: 'ca.crt' } } });
    const own = ok(...tls, '--set', 'metrics.tls.existingSecret=mine', '--set', 'metrics.tls.serverName=scrape.example', '--set-json', 'metrics.tls.ca={"configMap":{"name":"corp-ca","key":"root.pem"}}', '--set', 'metrics.serviceMonitor.enabled=true');
    assert.deepEqual(endpointOf(own, 'ServiceMonitor')['tlsConfig'], { serverName: 'scrape.example', ca: { configMap: { name: 'corp-ca', key: 'root.pem' } } });
    const test = podSpec(own, 'Pod');
    assert.deepEqual(test.volumes, [{ name: 'metrics-ca', configMap: { name: 'corp-ca', items: [{ key: 'root.pem', path: 'ca.crt' }] } }]);
    assert.equal(test.containers[0]?.env?.find((e) => e.name === 'METRICS_SERVER_NAME')?.value, 'scrape.example');
  });

  it('refuses TLS without a source, with two, and a CA from two places', () => {
    const none = render(...tls);
    assert.notEqual(none.status, 0);
    assert.match(none.stderr, /metrics\.tls\.enabled needs a certificate/);
    const both = render(...tls, '--set', 'metrics.tls.certManager.enabled=true', '--set', 'metrics.tls.existingSecret=mine');
    assert.notEqual(both.status, 0);
    assert.match(both.stderr, /exclude each other/);
    const twoCas = render(...tls, '--set', 'metrics.tls.existingSecret=mine', '--set-json', 'metrics.tls.ca={"configMap":{"name":"a","key":"k"},"secret":{"name":"b","key":"k"}}');
    assert.notEqual(twoCas.status, 0);
    const noKey = render(...tls, '--set', 'metrics.tls.existingSecret=mine', '--set-json', 'metrics.tls.ca={"secret":{"name":"b"}}');
    assert.notEqual(noKey.status, 0);
    assert.notEqual(render('--set', 'metrics.tls.certManager.duration=a week').status, 0);
    assert.notEqual(render('--set', 'metrics.tls.minVersion=VersionTLS11').status, 0);
  });
});
