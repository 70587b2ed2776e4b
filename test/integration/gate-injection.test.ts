// Readiness-gate injection (issue 15, ADR 0021) against a real kube-apiserver:
// the API server calls the webhook over TLS with the caBundle the controller
// made and patched in, and the pods it stores carry the gates.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { request as httpsRequest } from 'node:https';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { Controller } from '../../src/controller/index.ts';
import { NamespaceLabels, Webhook, WebhookCertStore, cacheView, mutatePodsPath } from '../../src/injection/index.ts';
import type { WebhookEvent } from '../../src/injection/index.ts';
import { systemClock, systemRandom } from '../../src/kernel/index.ts';
import { KubeClient, fromKubeconfig } from '../../src/kube/index.ts';
import { createGrpcProber, createHttpProber, tcpProbe } from '../../src/probing/index.ts';
import { startControlPlane } from '../support/cluster/index.ts';
import type { ControlPlane } from '../support/cluster/index.ts';
import { installCrd } from './support/controller.ts';
import { waitFor } from './support/fake-kubelet.ts';
import { logsOnFailure } from '../support/replicas/index.ts';

const run = Date.now().toString(36);
const labelled = `inj-on-${run}`;
const plain = `inj-off-${run}`;
const own = `outprobe-${run}`;
const configName = `outprobe-inject-${run}`;
const gate = 'outprobe.io/web';

function policy(ns: string, name: string, spec: Record<string, unknown>): Record<string, unknown> {
  return { apiVersion: 'outprobe.io/v1alpha1', kind: 'ProbePolicy', metadata: { name, namespace: ns }, spec };
}
const tcp = { tcpSocket: { port: 8080 } };

/** POST over HTTPS to 127.0.0.1, verifying the server's certificate for `servername` against `ca`. */
function postTls(port: number, servername: string, ca: string, body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: '127.0.0.1', port, servername, ca, method: 'POST', path: mutatePodsPath, agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

describe('readiness-gate injection webhook against a real kube-apiserver', () => {
  const logs = logsOnFailure('gate-injection');
  let cp: ControlPlane;
  let client: KubeClient;
  let controller: Controller;
  let namespaces: NamespaceLabels;
  let webhook: Webhook;
  const stop = new AbortController();
  const stopWebhook = new AbortController();
  let webhookLoop: Promise<void> | undefined;
  const events: WebhookEvent[] = [];
  let loops: Promise<unknown>;
  let n = 0;

  async function createPod(ns: string, labels: Record<string, string>, gates: readonly string[] = []): Promise<string[]> {
    const spec: Record<string, unknown> = { containers: [{ name: 'web', image: 'example.invalid/web' }] };
    if (gates.length > 0) spec['readinessGates'] = gates.map((conditionType) => ({ conditionType }));
    const pod = await cp.kube.create(`/api/v1/namespaces/${ns}/pods`, { apiVersion: 'v1', kind: 'Pod', metadata: { name: `p${++n}`, namespace: ns, labels }, spec });
    return ((pod['spec'] as { readinessGates?: { conditionType: string }[] }).readinessGates ?? []).map((g) => g.conditionType);
  }

  async function policyCached(ns: string, name: string): Promise<void> {
    await waitFor(`policy ${ns}/${name} in the cache`, () => Promise.resolve(controller.policies.get(`${ns}/${name}`)?.policy !== undefined));
  }

  // Short lives, so the suite sees the serving certificate renewed and the CA rotated (every 10 s and at ~27 s).
  const rotation = { serviceName: 'outprobe-webhook', names: [`outprobe-webhook.${own}.svc`, '127.0.0.1'], caValidityMs: 40_000, servingValidityMs: 15_000, propagationMs: 3_000, backdateMs: 0 };

  logs.setup(async () => {
    cp = await startControlPlane({ log: () => undefined });
    logs.plane(cp);
    await installCrd(cp.kube);
    for (const [name, labels] of [[labelled, { 'outprobe.io/inject-readiness-gates': 'enabled' }], [plain, {}], [own, { 'outprobe.io/inject-readiness-gates': 'enabled' }]] as const) {
      await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });
    }
    client = new KubeClient({ connection: fromKubeconfig(cp.kubeconfigPath), clock: systemClock, random: systemRandom, qps: 200, burst: 400 });
    controller = new Controller({
      client,
      clock: systemClock,
      random: systemRandom,
      observe: () => undefined,
      probers: { httpGet: createHttpProber({ userAgent: 'kube-probe/1.37' }), tcpSocket: tcpProbe, grpc: createGrpcProber({ userAgent: 'kube-probe/1.37' }) },
      allowedCidrs: ['127.0.0.0/8'],
      statusIntervalMs: 1000,
    });
    namespaces = new NamespaceLabels({ client, clock: systemClock, random: systemRandom, namespaces: [] });
    // The configuration as the chart installs it, but calling a loopback URL; caBundle is left for the controller to patch in.
    await cp.kube.create('/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: configName },
      webhooks: [{
        name: 'readiness-gates.outprobe.io',
        admissionReviewVersions: ['v1'],
        sideEffects: 'None',
        failurePolicy: 'Ignore',
        timeoutSeconds: 2,
        clientConfig: { url: 'https://127.0.0.1:1/placeholder' },
        rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'], scope: 'Namespaced' }],
        namespaceSelector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system', own] }] },
      }],
    });
    webhook = new Webhook({
      host: '127.0.0.1',
      port: 0,
      clock: systemClock,
      view: cacheView({ policies: controller.policies, namespaceLabels: (ns) => namespaces.labels(ns), ownNamespace: own }),
      certs: { kind: 'secret', store: new WebhookCertStore({ client, clock: systemClock, namespace: own, secretName: 'outprobe-webhook-tls', webhookConfiguration: configName, rotation }) },
      observe: (e) => events.push(e),
      refreshMs: 1000,
    });
    loops = Promise.all([controller.run(stop.signal), namespaces.run(stop.signal)]);
    await webhook.step(stop.signal);
    assert.ok(webhook.port !== undefined, JSON.stringify(events));
    await cp.kube.patch(`/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${configName}`, { webhooks: [{ name: 'readiness-gates.outprobe.io', clientConfig: { url: `https://127.0.0.1:${webhook.port}${mutatePodsPath}` } }] }, 'strategic');
    webhookLoop = webhook.run(stopWebhook.signal);
    await waitFor('caches synced', () => Promise.resolve(controller.ready && namespaces.synced));
    await cp.kube.create(`/apis/outprobe.io/v1alpha1/namespaces/${labelled}/probepolicies`, policy(labelled, 'web', { selector: { matchLabels: { app: 'web' } }, readiness: { probe: tcp } }));
    await cp.kube.create(`/apis/outprobe.io/v1alpha1/namespaces/${labelled}/probepolicies`, policy(labelled, 'watch', { mode: 'Observe', selector: { matchLabels: { app: 'watch' } }, readiness: { probe: tcp } }));
    await cp.kube.create(`/apis/outprobe.io/v1alpha1/namespaces/${plain}/probepolicies`, policy(plain, 'web', { selector: { matchLabels: { app: 'web' } }, readiness: { probe: tcp } }));
    await cp.kube.create(`/apis/outprobe.io/v1alpha1/namespaces/${plain}/probepolicies`, policy(plain, 'opt', { selector: { matchLabels: { app: 'opt' } }, readiness: { injectGate: true, probe: tcp } }));
    await cp.kube.create(`/apis/outprobe.io/v1alpha1/namespaces/${own}/probepolicies`, policy(own, 'web', { selector: {}, readiness: { injectGate: true, probe: tcp } }));
    for (const [ns, name] of [[labelled, 'web'], [labelled, 'watch'], [plain, 'web'], [plain, 'opt'], [own, 'web']]) await policyCached(ns ?? '', name ?? '');
  });

  logs.teardown(async () => {
    stop.abort();
    stopWebhook.abort();
    await webhookLoop;
    await loops;
    await client.close();
    await cp.stop();
  });

  it('made the Secret and patched its CA into the configuration', async () => {
    const secret = await cp.kube.get(`/api/v1/namespaces/${own}/secrets/outprobe-webhook-tls`);
    assert.equal(secret['type'], 'kubernetes.io/tls');
    const data = secret['data'] as Record<string, string>;
    const config = await cp.kube.get(`/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${configName}`);
    const hooks = config['webhooks'] as { clientConfig: { caBundle?: string } }[];
    assert.equal(hooks[0]?.clientConfig.caBundle, data['ca.crt']);
    assert.ok(events.some((e) => e.type === 'webhook-certs' && e.action === 'create' && e.caBundlePatched === 1), JSON.stringify(events));
  });

  it('two replicas creating the Secret at once end up serving the same certificate', async () => {
    const store = (): WebhookCertStore => new WebhookCertStore({ client, clock: systemClock, namespace: own, secretName: 'race-webhook-tls', webhookConfiguration: undefined, rotation });
    const [a, b] = await Promise.all([store().step(stop.signal), store().step(stop.signal)]);
    assert.equal(a.certs.serving.cert, b.certs.serving.cert);
    assert.equal(a.certs.caBundle, b.certs.caBundle);
    assert.deepEqual([a.lostRace, b.lostRace].sort(), [false, true], 'one created it, the other loaded the winner\'s');
    const c = await store().step(stop.signal);
    assert.equal(c.action, 'keep');
    assert.equal(c.certs.serving.cert, a.certs.serving.cert);
  });

  it('gates a selected pod in a labelled namespace, and no other', async () => {
    assert.deepEqual(await createPod(labelled, { app: 'web' }), [gate]);
    assert.deepEqual(await createPod(labelled, { app: 'db' }), []);
  });

  it('leaves pods of an Observe-mode policy alone', async () => {
    assert.deepEqual(await createPod(labelled, { app: 'watch' }), []);
  });

  it('never duplicates a gate the pod already lists, and appends to an existing list', async () => {
    assert.deepEqual(await createPod(labelled, { app: 'web' }, [gate]), [gate]);
    assert.deepEqual(await createPod(labelled, { app: 'web' }, ['example.com/other']), ['example.com/other', gate]);
  });

  it('in a namespace without the label injects only for policies with readiness.injectGate', async () => {
    assert.deepEqual(await createPod(plain, { app: 'web' }), []);
    assert.deepEqual(await createPod(plain, { app: 'opt' }), ['outprobe.io/opt']);
  });

  it('never injects in outprobe\'s own namespace', async () => {
    assert.deepEqual(await createPod(own, { app: 'web' }), []);
  });

  it('adds little to a pod creation (p50/p99 against the same creations without the webhook)', async () => {
    const timed = async (ns: string, labels: Record<string, string>, count: number): Promise<number[]> => {
      const out: number[] = [];
      for (let i = 0; i < count; i++) {
        const t0 = performance.now();
        await createPod(ns, labels);
        out.push(performance.now() - t0);
      }
      return out.sort((a, b) => a - b);
    };
    const count = 100;
    const withHook = await timed(labelled, { app: 'web' }, count);
    const reviews = events.filter((e) => e.type === 'webhook-review').map((e) => e.durationMs).sort((a, b) => a - b);
    // Own namespace: excluded by the namespaceSelector, so the API server never calls the webhook.
    const without = await timed(own, { app: 'none' }, count);
    const fmt = (xs: readonly number[]): string => `p50 ${percentile(xs, 50).toFixed(2)} ms, p99 ${percentile(xs, 99).toFixed(2)} ms`;
    console.log(`# pod create with the webhook: ${fmt(withHook)}; without: ${fmt(without)}; in the webhook: ${fmt(reviews)}`);
    assert.equal(reviews.length >= count, true);
  });

  it('rotates the serving certificate and the CA without a failed admission', async () => {
    const start = Date.now();
    let created = 0;
    // Pods created back to back for 35 s: the serving certificate is renewed, a new CA joins the bundle,
    // and the serving certificate moves to it; every pod must still get its gate.
    while (Date.now() - start < 35_000) {
      assert.deepEqual(await createPod(labelled, { app: 'web' }), [gate], `pod ${created} at ${Date.now() - start} ms: ${JSON.stringify(events.filter((e) => e.type !== 'webhook-review'))}`);
      created++;
      await new Promise((r) => setTimeout(r, 50));
    }
    const actions = events.flatMap((e) => (e.type === 'webhook-certs' ? [e.action] : []));
    assert.ok(actions.includes('rotate-ca') && actions.includes('renew-serving'), actions.join());
    assert.equal(events.filter((e) => e.type === 'webhook-error').length, 0);
    console.log(`# ${created} pods created through ${actions.join(', ')}: all gated`);
  });

  it('with the webhook stopped, pod creation still succeeds (failurePolicy Ignore), ungated', async () => {
    stopWebhook.abort();
    await webhookLoop;
    const t0 = performance.now();
    assert.deepEqual(await createPod(labelled, { app: 'web' }), []);
    const ms = performance.now() - t0;
    console.log(`# pod create with the webhook down: ${ms.toFixed(1)} ms`);
    assert.ok(ms < 2500, `within the 2 s webhook timeout (took ${ms} ms)`);
  });

  it('the controller binary serves it: its own Secret and caBundle, TLS for the Service name, the gate, the metric', async () => {
    // Only the binary's webhook answers from here on (the in-process one may still run when this test runs alone).
    stopWebhook.abort();
    await webhookLoop;
    const mainPath = new URL('../../src/main.ts', import.meta.url).pathname;
    const binConfig = `${configName}-bin`;
    await cp.kube.create('/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', {
      apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name: binConfig },
      webhooks: [{ name: 'readiness-gates.outprobe.io', admissionReviewVersions: ['v1'], sideEffects: 'None', failurePolicy: 'Ignore', timeoutSeconds: 2,
        clientConfig: { url: 'https://127.0.0.1:1/placeholder' }, rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'], scope: 'Namespaced' }] }],
    });
    let webhookPort = 0;
    let metricsPort = 0;
    const lines: string[] = [];
    const child: ChildProcess = spawn(process.execPath, [mainPath, '--kubeconfig', cp.kubeconfigPath, '--metrics-addr', '127.0.0.1:0', '--metrics-auth', 'none', '--sharding', 'false',
      '--self-partition-detection', 'false', '--second-opinion', 'false', '--webhook-addr', '127.0.0.1:0', '--webhook-secret', 'bin-webhook-tls', '--webhook-configuration', binConfig,
      '--namespace', `${labelled},${own}`], { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env['PATH'] ?? '', POD_NAME: 'outprobe-bin-0', POD_NAMESPACE: own } });
    logs.record('outprobe', child);
    try {
      for (const stream of [child.stdout, child.stderr]) {
        if (stream === null) continue;
        createInterface({ input: stream }).on('line', (l) => {
          lines.push(l);
          const w = /"msg":"readiness-gate injection webhook serving".*"port":(\d+)/.exec(l);
          if (w !== null) webhookPort = Number(w[1]);
          const m = /"msg":"outprobe started".*"metricsPort":(\d+)/.exec(l);
          if (m !== null) metricsPort = Number(m[1]);
        });
      }
      await waitFor('webhook serving', () => Promise.resolve(webhookPort !== 0 && metricsPort !== 0), 30_000).catch((err: unknown) => {
        throw new Error(`${String(err)}\n${lines.join('\n')}`);
      });
      // Its certificate names the Service (outprobe-webhook.<namespace>.svc), not 127.0.0.1, so here the
      // test is the API server: an AdmissionReview over TLS, verified against the Secret's CA for that name.
      const binSecret = await cp.kube.get(`/api/v1/namespaces/${own}/secrets/bin-webhook-tls`);
      const caPem = Buffer.from((binSecret['data'] as Record<string, string>)['ca.crt'] ?? '', 'base64').toString('utf8');
      const review = (uid: string): string => JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid, kind: { group: '', version: 'v1', kind: 'Pod' }, operation: 'CREATE', namespace: labelled, object: { metadata: { labels: { app: 'web' } }, spec: { containers: [] } } } });
      // Its caches (policies, namespace labels by metadata.name) sync shortly after it listens.
      const patch = await waitFor('a gate from the binary', async () => {
        const body = await postTls(webhookPort, `outprobe-webhook.${own}.svc`, caPem, review('bin-1'));
        const response = (JSON.parse(body) as { response: { uid: string; allowed: boolean; patch?: string } }).response;
        assert.equal(response.uid, 'bin-1');
        assert.equal(response.allowed, true);
        return response.patch === undefined ? undefined : JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8')) as unknown;
      }, 20_000, 500).catch((err: unknown) => {
        throw new Error(`${String(err)}\n${lines.join('\n')}`);
      });
      assert.deepEqual(patch, [{ op: 'add', path: '/spec/readinessGates', value: [{ conditionType: gate }] }]);
      const config = await cp.kube.get(`/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${binConfig}`);
      assert.equal((config['webhooks'] as { clientConfig: { caBundle?: string } }[])[0]?.clientConfig.caBundle, (binSecret['data'] as Record<string, string>)['ca.crt']);
      const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      assert.match(metrics, /outprobe_webhook_reviews_total\{result="injected"\} [1-9]/);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  });
});
