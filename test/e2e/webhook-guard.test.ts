// Least privilege for the webhook configuration (issue 27 finding 5, ADR 0053):
// the controller may patch its MutatingWebhookConfiguration to set caBundle, and
// nothing else of it; it may create its certificate Secret, and no other. The chart is installed with helm on a real kube-apiserver;
// requests are made as the chart's ServiceAccount, by impersonation
// (`kubectl --as system:serviceaccount:…`, authorized by RBAC like the real
// token) and with a real TokenRequest token running the controller's own
// certificate code (WebhookCertStore), whose caBundle patches must still pass,
// at install, after a CA rotation and after the Secret is deleted; the API
// server then calls the webhook over TLS with the patched bundle.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { Webhook, WebhookCertStore, cacheView, mutatePodsPath } from '../../src/injection/index.ts';
import type { RotationOptions, WebhookEvent } from '../../src/injection/index.ts';
import { systemClock, systemRandom } from '../../src/kernel/index.ts';
import { KubeClient, fromKubeconfig } from '../../src/kube/index.ts';
import { validatePolicy } from '../../src/policy/index.ts';
import { startControlPlane } from '../support/cluster/index.ts';
import type { ControlPlane } from '../support/cluster/index.ts';
import { waitFor } from '../integration/support/fake-kubelet.ts';
import { logsOnFailure } from '../support/replicas/index.ts';

const chart = fileURLToPath(new URL('../../charts/outprobe', import.meta.url));
const NS = 'outprobe';
const SA = `system:serviceaccount:${NS}:outprobe`;
const MWC = 'outprobe';
const SECRET = 'outprobe-webhook-tls';
const APP = 'guard-app';
const gate = 'outprobe.io/web';

interface Outcome { readonly ok: boolean; readonly out: string }

void describe('the webhook configuration: the controller\'s ServiceAccount may change caBundle only', () => {
  const logs = logsOnFailure('webhook-guard');
  let cp: ControlPlane;
  let tmp: string;
  let saClient: KubeClient | undefined;
  let webhook: Webhook | undefined;
  const events: WebhookEvent[] = [];
  const stop = new AbortController();
  const kubectl = (args: readonly string[]): Outcome => {
    const r = spawnSync(cp.binaries.kubectl, ['--kubeconfig', cp.kubeconfigPath, ...args], { encoding: 'utf8', timeout: 30_000 });
    return { ok: r.status === 0, out: `${r.stdout}${r.stderr}` };
  };
  const helm = (...args: string[]): void => {
    const env = { ...process.env, HELM_CACHE_HOME: `${tmp}/cache`, HELM_CONFIG_HOME: `${tmp}/config`, HELM_DATA_HOME: `${tmp}/data` };
    const r = spawnSync(cp.binaries.helm, ['--kubeconfig', cp.kubeconfigPath, ...args], { encoding: 'utf8', env, timeout: 60_000 });
    assert.equal(r.status, 0, `helm ${args.join(' ')}: ${r.stderr}`);
  };
  /** A JSON patch of the chart's configuration as the controller's ServiceAccount (optionally a server-side dry run). */
  const patchAs = (ops: unknown, dryRun = false): Outcome =>
    kubectl(['patch', '--as', SA, 'mutatingwebhookconfiguration', MWC, '--type', 'json', '-p', JSON.stringify(ops), ...(dryRun ? ['--dry-run=server'] : [])]);
  const refused = (o: Outcome, what: RegExp): void => {
    assert.equal(o.ok, false, `expected a denial, got: ${o.out}`);
    assert.match(o.out, /ValidatingAdmissionPolicy 'outprobe-webhook-cabundle-only'/);
    assert.match(o.out, /outprobe's ServiceAccount may change only clientConfig.caBundle of a MutatingWebhookConfiguration/);
    assert.match(o.out, what);
  };
  const hook = async (): Promise<Record<string, unknown> & { clientConfig: Record<string, unknown> }> => {
    const mwc = await cp.kube.get(`/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${MWC}`);
    const first = (mwc['webhooks'] as (Record<string, unknown> & { clientConfig: Record<string, unknown> })[] | undefined)?.[0];
    assert.ok(first !== undefined);
    return first;
  };

  /** A kubeconfig holding only a fresh TokenRequest token of the chart's ServiceAccount. */
  const serviceAccountKubeconfig = async (): Promise<string> => {
    const tr = await cp.kube.create(`/api/v1/namespaces/${NS}/serviceaccounts/outprobe/token`, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } });
    const token = (tr['status'] as { token: string }).token;
    const admin = cp.kubeconfig as { clusters: { cluster: Record<string, unknown> }[] };
    const kubeconfig = path.join(tmp, 'sa-kubeconfig');
    writeFileSync(kubeconfig, JSON.stringify({
      apiVersion: 'v1', kind: 'Config', 'current-context': 'sa',
      clusters: [{ name: 'c', cluster: admin.clusters[0]?.cluster }],
      users: [{ name: 'sa', user: { token } }],
      contexts: [{ name: 'sa', context: { cluster: 'c', user: 'sa', namespace: NS } }],
    }), { mode: 0o600 });
    return kubeconfig;
  };

  logs.setup(async () => {
    tmp = mkdtempSync(path.join(tmpdir(), 'outprobe-webhook-guard-'));
    cp = await startControlPlane();
    logs.plane(cp);
    helm('install', 'outprobe', chart, '-n', NS, '--create-namespace', '--set', 'replicaCount=0');
    await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: APP, labels: { 'outprobe.io/inject-readiness-gates': 'enabled' } } });
    // The guard takes effect once the API server has compiled it: probe with server-side dry runs
    // (only when the chart has one, so that on a chart without it the tests below say what got through).
    const guard = await cp.kube.call('GET', '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/outprobe-webhook-cabundle-only');
    if (guard.status === 200) {
      await waitFor('webhook guard in effect', () => Promise.resolve(!patchAs([{ op: 'replace', path: '/webhooks/0/timeoutSeconds', value: 9 }], true).ok), 60_000, 500);
      await waitFor('Secret guard in effect', () => Promise.resolve(!kubectl(['create', 'secret', 'generic', 'probe', '-n', NS, '--as', SA, '--dry-run=server']).ok), 60_000, 500);
    }
  });
  logs.teardown(async () => {
    stop.abort();
    await webhook?.close();
    await saClient?.close();
    await cp.stop();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('the chart installed the guards and their bindings; every expression type-checks', async () => {
    for (const name of ['outprobe-webhook-cabundle-only', 'outprobe-webhook-secret-only']) {
      const vap = await cp.kube.get(`/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/${name}`);
      const status = vap['status'] as { typeChecking?: { expressionWarnings?: unknown[] } } | undefined;
      assert.deepEqual(status?.typeChecking?.expressionWarnings ?? [], [], `every CEL expression of ${name} type-checks against the schema`);
      const binding = await cp.kube.get(`/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/${name}`);
      assert.deepEqual((binding['spec'] as { validationActions?: string[] }).validationActions, ['Deny']);
    }
  });

  it('the ServiceAccount cannot redirect the webhook: clientConfig service or url', async () => {
    const before = await hook();
    refused(patchAs([{ op: 'replace', path: '/webhooks/0/clientConfig/service/name', value: 'attacker' }]), /may not change the webhooks, their clientConfig/);
    refused(patchAs([{ op: 'replace', path: '/webhooks/0/clientConfig/service/namespace', value: APP }]), /clientConfig/);
    refused(patchAs([{ op: 'replace', path: '/webhooks/0/clientConfig', value: { url: 'https://attacker.example:8443/mutate' } }]), /clientConfig/);
    // A caBundle change riding along does not let a clientConfig change through.
    refused(patchAs([{ op: 'replace', path: '/webhooks/0/clientConfig', value: { caBundle: Buffer.from('x').toString('base64'), service: { ...(before.clientConfig['service'] as object), path: '/steal' } } }]), /clientConfig/);
    assert.deepEqual((await hook()).clientConfig, before.clientConfig, 'unchanged');
  });

  it('the ServiceAccount cannot widen or weaken the webhook: rules, selectors, policies, more webhooks, metadata', async () => {
    const before = await hook();
    const everything = [{ apiGroups: ['*'], apiVersions: ['*'], operations: ['*'], resources: ['*/*'], scope: '*' }];
    refused(patchAs([{ op: 'replace', path: '/webhooks/0/rules', value: everything }]), /may not change the webhooks/);
    refused(patchAs([{ op: 'remove', path: '/webhooks/0/namespaceSelector' }]), /may not change the webhooks/);
    refused(patchAs([{ op: 'add', path: '/webhooks/0/objectSelector', value: { matchLabels: { a: 'b' } } }]), /may not change the webhooks/);
    refused(patchAs([{ op: 'replace', path: '/webhooks/0/failurePolicy', value: 'Fail' }]), /may not change the webhooks/);
    refused(patchAs([{ op: 'replace', path: '/webhooks/0/timeoutSeconds', value: 30 }]), /may not change the webhooks/);
    refused(patchAs([{ op: 'replace', path: '/webhooks/0/reinvocationPolicy', value: 'IfNeeded' }]), /may not change the webhooks/);
    refused(patchAs([{ op: 'add', path: '/webhooks/0/matchConditions', value: [{ name: 'x', expression: 'true' }] }]), /may not change the webhooks/);
    refused(patchAs([{ op: 'replace', path: '/webhooks/0/name', value: 'renamed.outprobe.io' }]), /may not change the webhooks/);
    refused(patchAs([{ op: 'add', path: '/webhooks/-', value: { ...before, name: 'second.outprobe.io' } }]), /may not change the webhooks/);
    refused(patchAs([{ op: 'add', path: '/metadata/finalizers', value: ['example.com/hold'] }]), /may not change the labels, annotations, owners or finalizers/);
    refused(patchAs([{ op: 'add', path: '/metadata/labels/extra', value: 'x' }]), /may not change the labels/);
    assert.deepEqual(await hook(), before, 'unchanged');
    // RBAC still holds the rest: no other verb, no other configuration.
    assert.equal(kubectl(['auth', 'can-i', '--as', SA, 'delete', `mutatingwebhookconfigurations/${MWC}`]).out.split('\n')[0], 'no');
    assert.equal(kubectl(['auth', 'can-i', '--as', SA, 'create', 'mutatingwebhookconfigurations']).out.split('\n')[0], 'no');
    assert.equal(kubectl(['auth', 'can-i', '--as', SA, 'patch', 'mutatingwebhookconfigurations/another']).out.split('\n')[0], 'no');
  });

  it('the ServiceAccount may create its certificate Secret only: no other name, no service-account token Secret', () => {
    const create = (obj: Record<string, unknown>): Outcome => {
      const r = spawnSync(cp.binaries.kubectl, ['--kubeconfig', cp.kubeconfigPath, 'create', '--as', SA, '-f', '-'], { encoding: 'utf8', timeout: 30_000, input: JSON.stringify(obj) });
      return { ok: r.status === 0, out: `${r.stdout}${r.stderr}` };
    };
    const secret = (name: string, type: string, annotations: Record<string, string> = {}): Record<string, unknown> =>
      ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: NS, annotations }, type, stringData: type === 'Opaque' ? { a: 'b' } : {} });
    const secretRefused = (o: Outcome): void => {
      assert.equal(o.ok, false, `expected a denial, got: ${o.out}`);
      assert.match(o.out, /ValidatingAdmissionPolicy 'outprobe-webhook-secret-only'/);
      assert.match(o.out, /outprobe's ServiceAccount may create only its webhook certificate Secret \(outprobe-webhook-tls, type kubernetes.io\/tls\)/);
    };
    // The escalation RBAC alone allowed: a Secret the token controller fills with a token that never expires.
    secretRefused(create(secret('outprobe-forever', 'kubernetes.io/service-account-token', { 'kubernetes.io/service-account.name': 'outprobe' })));
    secretRefused(create(secret(SECRET, 'kubernetes.io/service-account-token', { 'kubernetes.io/service-account.name': 'outprobe' })));
    secretRefused(create(secret('anything', 'Opaque')));
    // Dry run: the right name and type pass (the controller's own create is exercised below).
    const own = spawnSync(cp.binaries.kubectl, ['--kubeconfig', cp.kubeconfigPath, 'create', '--dry-run=server', '--as', SA, '-f', '-'], { encoding: 'utf8', timeout: 30_000,
      input: JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: SECRET, namespace: NS }, type: 'kubernetes.io/tls', data: { 'tls.crt': '', 'tls.key': '' } }) });
    assert.equal(own.status, 0, `${own.stdout}${own.stderr}`);
  });

  it('caBundle alone passes, and the installer (helm, an admin) still changes anything', async () => {
    const ca = Buffer.from('-----BEGIN CERTIFICATE-----\nnot checked here\n-----END CERTIFICATE-----\n').toString('base64');
    const o = kubectl(['patch', '--as', SA, 'mutatingwebhookconfiguration', MWC, '--type', 'strategic', '-p', JSON.stringify({ webhooks: [{ name: 'readiness-gates.outprobe.io', clientConfig: { caBundle: ca } }] })]);
    assert.equal(o.ok, true, o.out);
    assert.equal((await hook()).clientConfig['caBundle'], ca);
    helm('upgrade', 'outprobe', chart, '-n', NS, '--reuse-values', '--set', 'webhook.timeoutSeconds=3');
    assert.equal((await hook())['timeoutSeconds'], 3);
  });

  it('the controller\'s own certificate code with the ServiceAccount\'s token: caBundle patched at start, after a CA rotation and after the Secret is deleted; the API server calls the webhook with it', async () => {
    saClient = new KubeClient({ connection: fromKubeconfig(await serviceAccountKubeconfig()), clock: systemClock, random: systemRandom, qps: 50, burst: 100 });
    // Short lives so the CA rotates within the test (a third of 15 s left: at 10 s); the webhook on loopback.
    const rotation: RotationOptions = { serviceName: 'outprobe-webhook', names: ['127.0.0.1'], caValidityMs: 15_000, servingValidityMs: 15_000, propagationMs: 500, backdateMs: 0 };
    const parsed = validatePolicy({ apiVersion: 'outprobe.io/v1alpha1', kind: 'ProbePolicy', metadata: { name: 'web', namespace: APP }, spec: { selector: { matchLabels: { app: 'web' } }, readiness: { conditionType: gate, probe: { tcpSocket: { port: 8080 } } } } }, { execEnabled: false });
    assert.ok(parsed.ok);
    const policies = new Map([[`${APP}/web`, { namespace: APP, policy: parsed.policy }]]);
    webhook = new Webhook({
      host: '127.0.0.1',
      port: 0,
      clock: systemClock,
      view: cacheView({ policies, namespaceLabels: (ns) => (ns === APP ? { 'outprobe.io/inject-readiness-gates': 'enabled' } : {}), ownNamespace: NS }),
      certs: { kind: 'secret', store: new WebhookCertStore({ client: saClient, clock: systemClock, namespace: NS, secretName: SECRET, webhookConfiguration: MWC, rotation }) },
      observe: (e) => events.push(e),
    });
    const step = async (): Promise<WebhookEvent[]> => {
      const from = events.length;
      await webhook?.step(stop.signal);
      const fresh = events.slice(from);
      assert.equal(fresh.filter((e) => e.type === 'webhook-error').length, 0, JSON.stringify(fresh));
      return fresh;
    };
    const certs = (fresh: readonly WebhookEvent[]): { action: string; caBundlePatched: number } | undefined =>
      fresh.find((e): e is Extract<WebhookEvent, { type: 'webhook-certs' }> => e.type === 'webhook-certs');
    const secretBundle = async (): Promise<string> => ((await cp.kube.get(`/api/v1/namespaces/${NS}/secrets/${SECRET}`))['data'] as Record<string, string>)['ca.crt'] ?? '';
    const gated = async (name: string): Promise<string[]> => {
      const pod = await cp.kube.create(`/api/v1/namespaces/${APP}/pods`, { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: APP, labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'example.invalid/web' }] } });
      return ((pod['spec'] as { readinessGates?: { conditionType: string }[] }).readinessGates ?? []).map((g) => g.conditionType);
    };

    const first = certs(await step());
    assert.deepEqual(first, { type: 'webhook-certs', action: 'create', lostRace: false, caBundlePatched: 1 });
    assert.equal((await hook()).clientConfig['caBundle'], await secretBundle(), 'the patched bundle is the Secret\'s CA');
    // The installer points the webhook at the loopback listener (the plane has no Service routing); the bundle stays.
    const bundle = (await hook()).clientConfig['caBundle'];
    const url = `https://127.0.0.1:${String(webhook.port)}${mutatePodsPath}`;
    const moved = kubectl(['patch', 'mutatingwebhookconfiguration', MWC, '--type', 'json', '-p', JSON.stringify([{ op: 'replace', path: '/webhooks/0/clientConfig', value: { url, caBundle: bundle } }])]);
    assert.equal(moved.ok, true, moved.out);
    assert.deepEqual(await gated('p-install'), [gate], 'the API server called the webhook over TLS with the patched bundle');

    // CA rotation: a new CA joins the bundle (patched by the ServiceAccount), then the serving certificate moves to it.
    await waitFor('CA due for rotation', async () => certs(await step())?.action === 'rotate-ca', 20_000, 500);
    assert.equal((await hook()).clientConfig['caBundle'], await secretBundle());
    assert.equal(Buffer.from(String((await hook()).clientConfig['caBundle']), 'base64').toString('utf8').match(/BEGIN CERTIFICATE/g)?.length, 2, 'old and new CA');
    await waitFor('serving certificate on the new CA', async () => certs(await step())?.action === 'renew-serving', 10_000, 200);
    assert.deepEqual(await gated('p-rotated'), [gate]);

    // Rotation by hand: delete the Secret; the next step makes a new CA and patches it in alone.
    assert.equal(kubectl(['delete', 'secret', '-n', NS, SECRET]).ok, true);
    const recreated = certs(await step());
    assert.deepEqual(recreated, { type: 'webhook-certs', action: 'create', lostRace: false, caBundlePatched: 1 });
    assert.equal((await hook()).clientConfig['caBundle'], await secretBundle());
    assert.deepEqual(await gated('p-recreated'), [gate]);
    assert.equal((await hook()).clientConfig['url'], url, 'clientConfig as the installer left it');
  });
});
