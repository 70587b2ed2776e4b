// The Helm chart (issue 6) with helm and kubectl built from Go modules: lint, schema,
// `helm template` (default and ci/*.yaml values) checked by the real API server with
// server-side dry-run, then install, upgrade and uninstall on the full local control
// plane (kwok runs the controller pods as simulated pods: they do not run Node).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse, parseAllDocuments } from 'yaml';
import { loadConfig } from '../../src/config/index.ts';
import { startControlPlane } from '../support/cluster/index.ts';
import type { ControlPlane } from '../support/cluster/index.ts';
import { sandboxFor, startWorkloads } from '../support/workloads/index.ts';
import type { Workloads } from '../support/workloads/index.ts';
import { logsOnFailure } from '../support/replicas/index.ts';

const chart = fileURLToPath(new URL('../../charts/outprobe', import.meta.url));
const repoCrd = fileURLToPath(new URL('../../crds/outprobe.io_probepolicies.yaml', import.meta.url));
const example = fileURLToPath(new URL('../../examples/http-readiness-gate.yaml', import.meta.url));
const ciValues = readdirSync(path.join(chart, 'ci')).filter((f) => f.endsWith('.yaml')).sort();
const NS = 'outprobe';
const RELEASE = 'outprobe';

type Obj = {
  apiVersion: string; kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: Record<string, unknown>; rules?: { apiGroups?: string[]; resources?: string[]; nonResourceURLs?: string[]; verbs: string[] }[];
};
interface Run { readonly status: number | null; readonly stdout: string; readonly stderr: string }

// helm keeps its cache/config/data in a temp dir, not in $HOME.
const helmHome = mkdtempSync(path.join(tmpdir(), 'outprobe-helm-'));
const helmEnv = { ...process.env, HELM_CACHE_HOME: `${helmHome}/cache`, HELM_CONFIG_HOME: `${helmHome}/config`, HELM_DATA_HOME: `${helmHome}/data` };

function run(bin: string, args: readonly string[], input?: string): Run {
  const r = spawnSync(bin, args, { encoding: 'utf8', env: helmEnv, timeout: 120_000, ...(input === undefined ? {} : { input }) });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}
function ok(r: Run, what: string): string {
  assert.equal(r.status, 0, `${what} failed: ${r.stderr}${r.stdout}`);
  return r.stdout;
}
function docs(yamlText: string): Obj[] {
  return parseAllDocuments(yamlText).map((d) => d.toJS() as Obj | null).filter((o): o is Obj => o !== null);
}
function find(objs: readonly Obj[], kind: string): Obj {
  const o = objs.find((x) => x.kind === kind);
  assert.ok(o !== undefined, `rendered ${kind}`);
  return o;
}
type Container = {
  args: string[]; securityContext: Record<string, unknown>; livenessProbe: { httpGet: { path: string } }; readinessProbe: { httpGet: { path: string } }; env: { name: string }[];
  ports: { name: string; containerPort: number }[]; volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
};
/** The downward API as the chart sets it: sharding proves membership against the replica's pod (ADR 0036). */
const downward = { POD_NAME: 'outprobe-0', POD_NAMESPACE: NS, POD_UID: 'uid-0', NODE_NAME: 'node-0', POD_IP: '10.244.0.5' };
function named(objs: readonly Obj[], kind: string, name: string): Obj {
  const o = objs.find((x) => x.kind === kind && x.metadata.name === name);
  assert.ok(o !== undefined, `rendered ${kind} ${name}`);
  return o;
}
function podSpecOf(dep: Obj): { serviceAccountName: string; securityContext: Record<string, unknown>; containers: Container[]; topologySpreadConstraints?: unknown[]; affinity?: unknown; volumes?: { name: string; projected?: unknown }[] } {
  return (dep.spec?.['template'] as { spec: ReturnType<typeof podSpecOf> }).spec;
}
/** Polls `fn` until it returns a value; errors (a 429 while a CRD's storage initialises) are retried too. */
async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (err: unknown) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last instanceof Error ? `: ${last.message}` : ''}`);
    await sleep(250);
  }
}

// Minimal Prometheus Operator CRDs, so the ServiceMonitor, PodMonitor and PrometheusRule templates can be checked server-side.
const monitoringCrds = (['ServiceMonitor', 'PodMonitor', 'PrometheusRule'] as const).map((kind) => ({
  apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: `${kind.toLowerCase()}s.monitoring.coreos.com` },
  spec: {
    group: 'monitoring.coreos.com', scope: 'Namespaced', names: { kind, plural: `${kind.toLowerCase()}s`, singular: kind.toLowerCase(), listKind: `${kind}List` },
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
  },
}));

void describe('charts/outprobe', () => {
  const logs = logsOnFailure('chart');
  let cp: ControlPlane;
  let helm: string;
  let kubectl: (...args: string[]) => Run;
  let workloads: Workloads;
  logs.setup(async () => {
    cp = await startControlPlane({ full: true });
    logs.plane(cp);
    // The controller's pods answer their liveness and readiness probes (run by the node agents,
    // as the kubelet would) on their metrics port, as a running outprobe does.
    workloads = startWorkloads({ kube: cp.kube, namespace: NS, labelSelector: `app.kubernetes.io/instance=${RELEASE}`, ...sandboxFor(cp.net) });
    helm = cp.binaries.helm;
    kubectl = (...args: string[]): Run => run(cp.binaries.kubectl, ['--kubeconfig', cp.kubeconfigPath, ...args]);
    for (const crd of monitoringCrds) await cp.kube.create('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
    await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'dry-run' } });
    // The namespaces ci/exec-3replicas-values.yaml and ci/namespaces-values.yaml watch: their Roles are created there.
    for (const name of ['shop', 'web']) await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  });
  logs.teardown(async () => {
    await workloads.stop();
    await cp.stop();
    rmSync(helmHome, { recursive: true, force: true });
  });
  const template = (...args: string[]): Obj[] => docs(ok(run(helm, ['template', RELEASE, chart, '--namespace', NS, ...args]), 'helm template'));

  it('helm lint --strict passes with the default and every ci/ values file', () => {
    ok(run(helm, ['lint', '--strict', chart]), 'helm lint');
    for (const f of ciValues) ok(run(helm, ['lint', '--strict', chart, '-f', path.join(chart, 'ci', f)]), `helm lint ${f}`);
  });

  it('helm package ships files/crds, so the packaged chart renders the CRD too', () => {
    const out = path.join(helmHome, 'pkg');
    ok(run(helm, ['package', chart, '-d', out]), 'helm package');
    const tgz = path.join(out, readdirSync(out).find((f) => f.endsWith('.tgz')) ?? '');
    const crd = docs(ok(run(helm, ['template', RELEASE, tgz, '--namespace', NS]), 'helm template <tgz>')).find((o) => o.kind === 'CustomResourceDefinition');
    assert.deepEqual(crd?.spec, (parse(readFileSync(repoCrd, 'utf8')) as Obj).spec);
  });

  it('values.schema.json rejects wrong types and unknown keys', () => {
    const bad: [string[], RegExp][] = [
      [['--set-string', 'replicaCount=two'], /replicaCount.*got string, want integer/s],
      [['--set-string', 'execProbes.enabled=yes'], /execProbes\/enabled.*got string, want boolean/s],
      [['--set', 'config.logLevel=verbose'], /logLevel/],
      [['--set', 'podAntiAffinity=always'], /podAntiAffinity/],
      [['--set', 'replicaCont=2'], /replicaCont/],
    ];
    for (const [args, message] of bad) {
      const r = run(helm, ['template', RELEASE, chart, ...args]);
      assert.notEqual(r.status, 0, `helm template ${args.join(' ')} must fail`);
      assert.match(r.stderr, message);
    }
  });

  it('default render: hardened, spread Deployment whose args the controller accepts; least-privilege RBAC; the CRD from crds/', () => {
    const objs = template();
    assert.deepEqual([...new Set(objs.map((o) => o.kind))].sort(), ['ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition', 'Deployment', 'Job', 'MutatingWebhookConfiguration', 'NetworkPolicy', 'Pod', 'PodDisruptionBudget', 'Role', 'RoleBinding', 'Service', 'ServiceAccount',
      'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']);
    for (const o of objs) assert.equal(o.metadata.labels?.['app.kubernetes.io/managed-by'], 'Helm', `${o.kind} has the standard labels`);
    const dep = find(objs, 'Deployment');
    assert.equal(dep.spec?.['replicas'], 2);
    const pod = podSpecOf(dep);
    assert.equal(pod.serviceAccountName, RELEASE);
    // Spread over nodes and (soft) zones; the built-in critical priority class (an evicted controller freezes every gate).
    assert.deepEqual((pod.topologySpreadConstraints as { topologyKey: string; whenUnsatisfiable: string }[] | undefined)?.map((t) => [t.topologyKey, t.whenUnsatisfiable]),
      [['kubernetes.io/hostname', 'ScheduleAnyway'], ['topology.kubernetes.io/zone', 'ScheduleAnyway']]);
    assert.ok(pod.affinity !== undefined);
    assert.equal((pod as { priorityClassName?: string }).priorityClassName, 'system-cluster-critical');
    // Free-form constraints replace the generated ones.
    const custom = [{ maxSkew: 2, topologyKey: 'example.com/rack', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { a: 'b' } } }];
    assert.deepEqual(podSpecOf(find(template('--set-json', `topologySpreadConstraints=${JSON.stringify(custom)}`), 'Deployment')).topologySpreadConstraints, custom);
    const c = pod.containers[0];
    assert.ok(c !== undefined);
    assert.deepEqual(c.securityContext, { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' } });
    assert.equal(c.livenessProbe.httpGet.path, '/healthz');
    assert.equal(c.readinessProbe.httpGet.path, '/readyz');
    // The downward API: what the replica declares on its shard Lease, which its peers check against its Pod (ADR 0036).
    assert.deepEqual(c.env.map((e) => e.name), ['POD_NAME', 'POD_NAMESPACE', 'POD_IP', 'POD_UID', 'NODE_NAME']);
    const loaded = loadConfig(c.args, downward);
    assert.ok(loaded.ok, loaded.ok ? '' : loaded.message);
    // The peer channel (ADR 0037): a port of its own, a projected token of the peer audience bound to the pod, read from a file.
    assert.equal(loaded.config.membershipProof, 'pod');
    assert.deepEqual([loaded.config.peerHost, loaded.config.peerPort], ['0.0.0.0', 9444]);
    assert.equal(loaded.config.peerTokenFile, '/var/run/secrets/outprobe.io/peer/token');
    assert.equal(loaded.config.peerPodSelector, `app.kubernetes.io/name=outprobe,app.kubernetes.io/instance=${RELEASE}`);
    assert.ok(c.ports.some((p) => p.name === 'peer' && p.containerPort === 9444));
    const vol = (pod.volumes ?? []).find((v) => v.name === 'peer-token');
    assert.deepEqual(vol?.projected, { sources: [{ serviceAccountToken: { audience: 'outprobe.io/peer', expirationSeconds: 600, path: 'token' } }] });
    assert.deepEqual(c.volumeMounts?.find((m) => m.name === 'peer-token'), { name: 'peer-token', mountPath: '/var/run/secrets/outprobe.io/peer', readOnly: true });
    assert.equal(loaded.config.execEnabled, false);
    assert.equal(loaded.config.publishExecOutput, false);
    assert.equal(loaded.config.maxRemediationsPerMinute, 10);
    assert.equal(loaded.config.maxHaltAbovePercentFailing, 50);
    assert.equal(loaded.config.allowDeleteAction, false);
    assert.equal(loaded.config.leaseNamespace, NS);
    assert.equal(loaded.config.metricsPort, 8080);
    assert.equal(loaded.config.metricsHost, '0.0.0.0');
    assert.equal(loaded.config.metricsAuth, 'kubernetes');
    assert.deepEqual(loaded.config.namespaces, []);
    // The injection webhook (ADR 0021): its own certificate in a Secret, caBundle patched into the chart's configuration.
    assert.deepEqual(loaded.config.webhook, { host: '0.0.0.0', port: 9443 });
    assert.equal(loaded.config.webhookSecret, `${RELEASE}-webhook-tls`);
    assert.equal(loaded.config.webhookService, `${RELEASE}-webhook`);
    assert.equal(loaded.config.webhookConfiguration, RELEASE);
    const mwc = find(objs, 'MutatingWebhookConfiguration') as Obj & { webhooks?: Record<string, unknown>[] };
    const hook = mwc.webhooks?.[0] ?? {};
    assert.equal(hook['failurePolicy'], 'Ignore');
    assert.equal(hook['timeoutSeconds'], 2);
    assert.equal(hook['sideEffects'], 'None');
    assert.deepEqual(hook['admissionReviewVersions'], ['v1']);
    // Only labelled namespaces by default; webhook.namespaces=all for every namespace (readiness.injectGate without the label).
    const notIn = { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system', NS] }] };
    assert.deepEqual(hook['namespaceSelector'], { matchLabels: { 'outprobe.io/inject-readiness-gates': 'enabled' }, ...notIn });
    const all = find(template('--set', 'webhook.namespaces=all'), 'MutatingWebhookConfiguration') as Obj & { webhooks?: Record<string, unknown>[] };
    assert.deepEqual(all.webhooks?.[0]?.['namespaceSelector'], notIn);
    assert.deepEqual((hook['clientConfig'] as { service?: unknown }).service, { name: `${RELEASE}-webhook`, namespace: NS, path: '/mutate-pods', port: 443 });
    const webhookRole = objs.find((o) => o.kind === 'Role' && o.metadata.name === `${RELEASE}-webhook`);
    assert.equal(webhookRole?.metadata.namespace, NS);
    assert.deepEqual(webhookRole.rules, [
      { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
      { apiGroups: [''], resources: ['secrets'], resourceNames: [`${RELEASE}-webhook-tls`], verbs: ['get', 'update'] },
    ]);
    assert.deepEqual(named(objs, 'ClusterRole', `${RELEASE}-webhook`).rules, [
      { apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['admissionregistration.k8s.io'], resources: ['mutatingwebhookconfigurations'], resourceNames: [RELEASE], verbs: ['get', 'patch'] },
    ]);
    // That patch right is held to caBundle by an admission policy on the controller's ServiceAccount
    // (issue 27 finding 5, ADR 0053; test/e2e/webhook-guard.test.ts checks it on a real API server).
    const guard = named(objs, 'ValidatingAdmissionPolicy', `${RELEASE}-webhook-cabundle-only`).spec as { failurePolicy?: string; matchConditions?: unknown[]; validations?: { expression: string }[] } | undefined;
    assert.equal(guard?.failurePolicy, 'Fail');
    assert.deepEqual(guard.matchConditions, [{ name: 'controller-service-account', expression: `request.userInfo.username == 'system:serviceaccount:${NS}:${RELEASE}'` }]);
    // Every field of a v1 MutatingWebhook (Kubernetes 1.37) but clientConfig.caBundle is compared; a field a later release adds must join the list.
    const compared = guard.validations?.[0]?.expression ?? '';
    for (const field of ['clientConfig.url', 'clientConfig.service', 'rules', 'failurePolicy', 'matchPolicy', 'namespaceSelector', 'objectSelector', 'sideEffects', 'timeoutSeconds', 'admissionReviewVersions', 'reinvocationPolicy', 'matchConditions']) {
      assert.ok(compared.includes(`w.${field} == o.${field}`), field);
    }
    assert.equal(compared.includes('caBundle'), false);
    assert.deepEqual((named(objs, 'ValidatingAdmissionPolicyBinding', `${RELEASE}-webhook-cabundle-only`).spec as { validationActions?: string[] }).validationActions, ['Deny']);
    // Its `create secrets` (RBAC cannot name the object) is held to its certificate Secret, of type kubernetes.io/tls.
    const secretGuard = named(objs, 'ValidatingAdmissionPolicy', `${RELEASE}-webhook-secret-only`).spec as { validations?: { expression: string }[] } | undefined;
    assert.equal(secretGuard?.validations?.[0]?.expression, `object.metadata.name == '${RELEASE}-webhook-tls' && has(object.type) && object.type == 'kubernetes.io/tls'`);
    named(objs, 'ValidatingAdmissionPolicyBinding', `${RELEASE}-webhook-secret-only`);
    // cert-manager injects caBundle and writes the Secret (the controller has no right on either); without admission policies there is no guard.
    for (const values of ['webhook.certManager.enabled=true', 'admissionPolicy.enabled=false', 'webhook.enabled=false']) {
      assert.equal(template('--set', values).some((o) => o.metadata.name.startsWith(`${RELEASE}-webhook-`) && o.kind.startsWith('ValidatingAdmissionPolicy')), false, values);
    }
    // A certificate brought by the user (issue 30 item 6): read from its Secret, caBundle set by Helm; no right on Secrets or the webhook configuration, no guard needed.
    const byo = template('--set', 'webhook.certificate.existingSecret=my-webhook-cert', '--set', 'webhook.certificate.caBundle=Q0EgUEVN');
    const byoPod = podSpecOf(find(byo, 'Deployment'));
    assert.ok(byoPod.containers[0]?.args.includes('--webhook-cert-dir=/etc/outprobe/webhook-tls'));
    assert.equal(byoPod.containers[0]?.args.some((a) => a.startsWith('--webhook-secret') || a.startsWith('--webhook-configuration')), false);
    assert.deepEqual((byoPod.volumes as { name: string; secret?: { secretName: string } }[] | undefined)?.find((v) => v.name === 'webhook-tls')?.secret?.secretName, 'my-webhook-cert');
    const byoMwc = find(byo, 'MutatingWebhookConfiguration') as Obj & { webhooks?: { clientConfig: { caBundle?: string } }[] };
    assert.equal(byoMwc.webhooks?.[0]?.clientConfig.caBundle, 'Q0EgUEVN');
    assert.equal(byoMwc.metadata.annotations?.['cert-manager.io/inject-ca-from'], undefined);
    const byoGrants = byo.filter((o) => o.kind === 'Role' || o.kind === 'ClusterRole').flatMap((o) => o.rules ?? []).flatMap((r) => r.resources ?? []);
    assert.equal(byoGrants.includes('secrets') || byoGrants.includes('mutatingwebhookconfigurations'), false, 'no right on Secrets or the webhook configuration');
    assert.equal(byo.some((o) => o.kind.startsWith('ValidatingAdmissionPolicy') && o.metadata.name.startsWith(`${RELEASE}-webhook-`)), false);
    for (const [args, message] of [
      [['--set', 'webhook.certificate.existingSecret=x'], /existingSecret needs webhook\.certificate\.caBundle/],
      [['--set', 'webhook.certificate.existingSecret=x', '--set', 'webhook.certificate.caBundle=y', '--set', 'webhook.certManager.enabled=true'], /exclude each other/],
    ] as const) {
      const r = run(helm, ['template', RELEASE, chart, ...args]);
      assert.notEqual(r.status, 0);
      assert.match(r.stderr, message);
    }
    // `helm test` (issue 30 item 6): a read-only Pod of the chart's image, hooks deleted once it passes.
    const testPod = objs.find((o) => o.kind === 'Pod' && o.metadata.name === `${RELEASE}-test`);
    assert.equal(testPod?.metadata.annotations?.['helm.sh/hook'], 'test');
    const testRole = named(objs, 'Role', `${RELEASE}-test`);
    assert.deepEqual(testRole.rules, [{ apiGroups: [''], resources: ['pods'], verbs: ['list'] }, { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['list'] }]);
    assert.equal(template('--set', 'tests.enabled=false').some((o) => o.metadata.annotations?.['helm.sh/hook'] === 'test'), false);

    const off = template('--set', 'webhook.enabled=false');
    assert.equal(off.some((o) => o.kind === 'MutatingWebhookConfiguration' || o.metadata.name.endsWith('-webhook')), false);
    assert.ok(podSpecOf(find(off, 'Deployment')).containers[0]?.args.includes('--webhook-addr=off'));

    const rules = named(objs, 'ClusterRole', RELEASE).rules ?? [];
    const granted = rules.flatMap((r) => (r.resources ?? []).flatMap((res) => r.verbs.map((v) => `${(r.apiGroups ?? []).join(',')}/${res}:${v}`))).sort();
    // No pods delete unless remediation.allowDelete (issue #10 finding 4).
    assert.deepEqual(granted, ['/events:create', '/events:patch', '/pods/eviction:create', '/pods/status:patch', '/pods:get', '/pods:list', '/pods:watch',
      'outprobe.io/probepolicies/status:get', 'outprobe.io/probepolicies/status:patch', 'outprobe.io/probepolicies/status:update',
      'outprobe.io/probepolicies:get', 'outprobe.io/probepolicies:list', 'outprobe.io/probepolicies:watch']);
    const leaseRole = named(objs, 'Role', `${RELEASE}-leases`);
    assert.equal(leaseRole.metadata.namespace, NS);
    // Membership proven against the replicas' pods (ADR 0036): read pods and get ReplicaSets in the release namespace only.
    assert.deepEqual(leaseRole.rules, [
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['apps'], resources: ['replicasets'], verbs: ['get'] },
      { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
    ]);

    const crd = find(objs, 'CustomResourceDefinition');
    assert.deepEqual(crd.spec, (parse(readFileSync(repoCrd, 'utf8')) as Obj).spec, 'the rendered CRD spec is crds/ verbatim');
    assert.equal(crd.metadata.annotations?.['helm.sh/resource-policy'], 'keep');
    assert.equal(template('--set', 'crds.keep=false').find((o) => o.kind === 'CustomResourceDefinition')?.metadata.annotations?.['helm.sh/resource-policy'], undefined);
  });

  it('ci/ values: exec probes grant pods/exec, 3 replicas, custom resources, ServiceMonitor, PrometheusRule and dashboard, no CRD', () => {
    const exec = template('-f', path.join(chart, 'ci', 'exec-3replicas-values.yaml'));
    const dep = find(exec, 'Deployment');
    assert.equal(dep.spec?.['replicas'], 3);
    const c = podSpecOf(dep).containers[0];
    assert.ok(c !== undefined);
    const loaded = loadConfig(c.args, downward);
    assert.ok(loaded.ok && loaded.config.execEnabled && loaded.config.namespaces.join() === 'shop', loaded.ok ? '' : loaded.message);
    assert.deepEqual(loaded.config.execNamespaces, ['shop']);
    assert.ok(loaded.config.publishExecOutput && loaded.config.allowDeleteAction);
    assert.equal(loaded.config.maxRemediationsPerMinute, 30);
    assert.equal(loaded.config.maxHaltAbovePercentFailing, 100);
    assert.deepEqual(loaded.config.allowedCidrs, ['10.0.0.0/8', '127.0.0.0/8']);
    // watchNamespace: the controller's rules are a Role (and RoleBinding) in that namespace; cluster-wide only
    // the /metrics reviews (create tokenreviews and subjectaccessreviews), the metrics-reader role, and get on
    // nodes for their zones (vantage, ADR 0040).
    assert.deepEqual(exec.filter((o) => o.kind === 'ClusterRole' || o.kind === 'ClusterRoleBinding').map((o) => `${o.kind}/${o.metadata.name}`).sort(),
      [`ClusterRole/${RELEASE}-metrics-auth`, `ClusterRole/${RELEASE}-metrics-reader`, `ClusterRole/${RELEASE}-nodes`, `ClusterRole/${RELEASE}-test-${NS}`, `ClusterRole/${RELEASE}-webhook`, `ClusterRoleBinding/${RELEASE}-metrics-auth`, `ClusterRoleBinding/${RELEASE}-nodes`, `ClusterRoleBinding/${RELEASE}-test-${NS}`, `ClusterRoleBinding/${RELEASE}-webhook`]);
    assert.deepEqual(named(exec, 'ClusterRole', `${RELEASE}-nodes`).rules, [{ apiGroups: [''], resources: ['nodes'], verbs: ['get'] }]);
    const watchRole = exec.find((o) => o.kind === 'Role' && o.metadata.name === RELEASE);
    assert.ok(watchRole !== undefined);
    assert.equal(watchRole.metadata.namespace, 'shop');
    assert.ok(watchRole.rules?.some((r) => (r.resources ?? []).includes('pods') && r.verbs.includes('delete')), 'pods delete with remediation.allowDelete');
    // pods/exec only through a Role in each execProbes.namespaces entry.
    assert.equal(watchRole.rules?.some((r) => (r.resources ?? []).includes('pods/exec')), false);
    const execRole = exec.find((o) => o.kind === 'Role' && o.metadata.name === `${RELEASE}-exec`);
    assert.equal(execRole?.metadata.namespace, 'shop');
    assert.deepEqual(execRole.rules, [{ apiGroups: [''], resources: ['pods/exec'], verbs: ['create'] }]);
    const vap = named(exec, 'ValidatingAdmissionPolicy', `${RELEASE}-probepolicy-author`) as Obj & { spec?: { validations?: { expression: string }[] } };
    assert.ok(vap.spec?.validations?.some((v) => v.expression.includes("request.namespace in ['shop']")), 'the admission policy mirrors execProbes.namespaces');
    const noNs = run(helm, ['template', RELEASE, chart, '--set', 'execProbes.enabled=true']);
    assert.notEqual(noNs.status, 0);
    assert.match(noNs.stderr, /execProbes.enabled needs execProbes.namespaces/);
    const binding = exec.find((o) => o.kind === 'RoleBinding' && o.metadata.name === RELEASE) as (Obj & { roleRef?: { kind: string; name: string }; subjects?: { name: string; namespace: string }[] }) | undefined;
    assert.ok(binding !== undefined);
    assert.equal(binding.metadata.namespace, 'shop');
    assert.deepEqual(binding.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: RELEASE });
    assert.deepEqual(binding.subjects, [{ kind: 'ServiceAccount', name: RELEASE, namespace: NS }]);
    assert.equal(exec.some((o) => o.kind === 'ServiceMonitor'), false);
    const mon = template('-f', path.join(chart, 'ci', 'monitoring-values.yaml'));
    assert.equal(find(mon, 'ServiceMonitor').apiVersion, 'monitoring.coreos.com/v1');
    // The alerts and the dashboard (ADR 0061): opt-in, labelled for the operator's and the sidecar's selectors.
    assert.equal(template().some((o) => o.kind === 'PrometheusRule' || o.metadata.name === `${RELEASE}-dashboard`), false, 'off by default');
    const prometheusRule = find(mon, 'PrometheusRule') as Obj & { spec?: { groups: { rules: { alert: string }[] }[] } };
    assert.equal(prometheusRule.metadata.labels?.['release'], 'prometheus');
    assert.equal(prometheusRule.spec?.groups[0]?.rules.length, 9);
    const dashboard = named(mon, 'ConfigMap', `${RELEASE}-dashboard`) as Obj & { data?: Record<string, string> };
    assert.equal(dashboard.metadata.labels?.['grafana_dashboard'], '1');
    assert.equal((JSON.parse(dashboard.data?.['outprobe.json'] ?? '{}') as { uid?: string }).uid, 'outprobe');
    assert.equal(mon.some((o) => o.kind === 'CustomResourceDefinition' || o.kind === 'PodDisruptionBudget'), false);
    assert.equal(named(mon, 'ClusterRole', RELEASE).rules?.some((r) => (r.resources ?? []).includes('pods/exec')), false);
    for (const objs of [template(), exec, mon]) {
      // Secrets only in the webhook's Role, in the release namespace (its certificate, ADR 0021).
      assert.equal(objs.some((o) => (o.kind === 'ClusterRole' || o.kind === 'Role') && o.metadata.name !== `${RELEASE}-webhook` && o.rules?.some((r) => (r.resources ?? []).some((res) => res.startsWith('secrets')))), false, 'nothing else on secrets');
      assert.equal(objs.some((o) => (o.kind === 'ClusterRole' || o.kind === 'Role') && o.rules?.some((r) => (r.resources ?? []).includes('*') || r.verbs.includes('*'))), false, 'no wildcards');
    }
  });

  it('/metrics: authenticated by default, RBAC for the reviews, a metrics-reader ClusterRole, a ServiceMonitor or PodMonitor with a scraper token through authorization', () => {
    const objs = template('--set', 'metrics.serviceMonitor.enabled=true');
    const rulesOf = (o: Obj): string[] => (o.rules ?? [])
      .flatMap((r) => [...(r.resources ?? []).map((res) => `${(r.apiGroups ?? []).join(',')}/${res}`), ...(r.nonResourceURLs ?? [])].flatMap((what) => r.verbs.map((v) => `${what}:${v}`))).sort();
    assert.deepEqual(rulesOf(named(objs, 'ClusterRole', `${RELEASE}-metrics-auth`)), ['authentication.k8s.io/tokenreviews:create', 'authorization.k8s.io/subjectaccessreviews:create']);
    const authBinding = named(objs, 'ClusterRoleBinding', `${RELEASE}-metrics-auth`) as Obj & { subjects?: unknown[] };
    assert.deepEqual(authBinding.subjects, [{ kind: 'ServiceAccount', name: RELEASE, namespace: NS }]);
    assert.deepEqual(rulesOf(named(objs, 'ClusterRole', `${RELEASE}-metrics-reader`)), ['/metrics:get']);
    assert.equal(objs.some((o) => o.metadata.name === `${RELEASE}-metrics-reader` && o.kind === 'ClusterRoleBinding'), false, 'no reader binding unless subjects are listed');
    // The ServiceMonitor sends a token from a Secret through `authorization` (bearerTokenFile is deprecated), keeps the
    // series' own labels (a per-policy series' namespace), and by default the token is the chart's scraper's (ADR 0062).
    const endpoint = (find(objs, 'ServiceMonitor').spec?.['endpoints'] as Record<string, unknown>[])[0];
    assert.deepEqual(endpoint, {
      port: 'metrics', path: '/metrics', interval: '30s', scrapeTimeout: '10s', honorLabels: true,
      authorization: { type: 'Bearer', credentials: { name: `${RELEASE}-scraper-token`, key: 'token' } },
    });
    const tokenSecret = named(objs, 'Secret', `${RELEASE}-scraper-token`) as Obj & { type?: string };
    assert.equal(tokenSecret.type, 'kubernetes.io/service-account-token');
    assert.equal(tokenSecret.metadata.annotations?.['kubernetes.io/service-account.name'], `${RELEASE}-scraper`);
    assert.ok(named(objs, 'ServiceAccount', `${RELEASE}-scraper`));
    const scraperBinding = named(objs, 'ClusterRoleBinding', `${RELEASE}-scraper`) as Obj & { roleRef?: { name: string }; subjects?: unknown[] };
    assert.equal(scraperBinding.roleRef?.name, `${RELEASE}-metrics-reader`);
    assert.deepEqual(scraperBinding.subjects, [{ kind: 'ServiceAccount', name: `${RELEASE}-scraper`, namespace: NS }]);
    // One's own Secret instead: no scraper made; relabelings passed through; a PodMonitor with the same endpoint.
    const own = template('--set', 'metrics.serviceMonitor.enabled=true', '--set', 'metrics.serviceMonitor.bearerTokenSecret.name=prom-token',
      '--set', 'metrics.serviceMonitor.bearerTokenSecret.key=t', '--set', 'metrics.serviceMonitor.honorLabels=false',
      '--set', 'metrics.serviceMonitor.relabelings[0].action=labeldrop', '--set', 'metrics.serviceMonitor.relabelings[0].regex=pod');
    const ownEndpoint = (find(own, 'ServiceMonitor').spec?.['endpoints'] as Record<string, unknown>[])[0];
    assert.deepEqual(ownEndpoint?.['authorization'], { type: 'Bearer', credentials: { name: 'prom-token', key: 't' } });
    assert.equal(ownEndpoint['honorLabels'], false);
    assert.deepEqual(ownEndpoint['relabelings'], [{ action: 'labeldrop', regex: 'pod' }]);
    assert.equal(own.some((o) => o.metadata.name === `${RELEASE}-scraper` || o.metadata.name === `${RELEASE}-scraper-token`), false);
    const pm = template('--set', 'metrics.podMonitor.enabled=true');
    assert.equal(pm.some((o) => o.kind === 'ServiceMonitor'), false);
    const podMonitor = find(pm, 'PodMonitor');
    assert.deepEqual(podMonitor.spec?.['selector'], { matchLabels: { 'app.kubernetes.io/name': 'outprobe', 'app.kubernetes.io/instance': RELEASE } });
    assert.deepEqual((podMonitor.spec['podMetricsEndpoints'] as unknown[])[0], endpoint);
    const both = run(helm, ['template', RELEASE, chart, '--set', 'metrics.podMonitor.enabled=true', '--set', 'metrics.serviceMonitor.enabled=true']);
    assert.notEqual(both.status, 0);
    assert.match(both.stderr, /choose one/);
    // metrics.auth=none: no review RBAC, --metrics-auth=none, the ServiceMonitor sends no token.
    const open = template('--set', 'metrics.auth=none', '--set', 'metrics.serviceMonitor.enabled=true');
    assert.equal(open.some((o) => o.metadata.name === `${RELEASE}-metrics-auth`), false);
    const openArgs = podSpecOf(find(open, 'Deployment')).containers[0]?.args ?? [];
    assert.ok(openArgs.includes('--metrics-auth=none') && openArgs.includes('--metrics-addr=0.0.0.0:8080'), openArgs.join(' '));
    assert.equal((find(open, 'ServiceMonitor').spec?.['endpoints'] as Record<string, unknown>[])[0]?.['authorization'], undefined);
    assert.equal(open.some((o) => o.metadata.name === `${RELEASE}-scraper-token`), false);
    // The NetworkPolicy: the metrics port from anywhere; the peer port (ADR 0037) only from the replicas
    // (kept whatever metricsFrom says), no other rule naming it; egress not restricted.
    const selector = { matchLabels: { 'app.kubernetes.io/name': 'outprobe', 'app.kubernetes.io/instance': RELEASE } };
    const np = find(objs, 'NetworkPolicy');
    assert.deepEqual(np.spec, {
      podSelector: selector,
      policyTypes: ['Ingress'],
      ingress: [{ ports: [{ port: 8080, protocol: 'TCP' }] }, { ports: [{ port: 9444, protocol: 'TCP' }], from: [{ podSelector: selector }] }, { ports: [{ port: 9443, protocol: 'TCP' }] }],
    });
    const peerRules = (np.spec['ingress'] as { ports: { port: number }[]; from?: unknown[] }[]).filter((r) => r.ports.some((p) => p.port === 9444));
    assert.deepEqual(peerRules, [{ ports: [{ port: 9444, protocol: 'TCP' }], from: [{ podSelector: selector }] }], 'the peer port is admitted from the replicas only');
    // networkPolicy.webhookFrom restricts the webhook port to the API server's addresses (issue 27).
    const apiOnly = find(template('--set-json', 'networkPolicy.webhookFrom=[{"ipBlock":{"cidr":"198.18.0.10/32"}}]'), 'NetworkPolicy').spec?.['ingress'] as { ports: { port: number }[]; from?: unknown[] }[];
    assert.deepEqual(apiOnly[2], { ports: [{ port: 9443, protocol: 'TCP' }], from: [{ ipBlock: { cidr: '198.18.0.10/32' } }] });
    const moved = find(template('--set', 'peer.port=7000'), 'NetworkPolicy').spec?.['ingress'] as { ports: { port: number }[]; from?: unknown[] }[];
    assert.deepEqual(moved[1], { ports: [{ port: 7000, protocol: 'TCP' }], from: [{ podSelector: selector }] });
    assert.equal(template('--set', 'networkPolicy.enabled=false').some((o) => o.kind === 'NetworkPolicy'), false);
    const r = run(helm, ['template', RELEASE, chart, '--set', 'networkPolicy.egress.enabled=true']);
    assert.notEqual(r.status, 0, 'egress restriction without rules is refused');
    assert.match(r.stderr, /networkPolicy\.egress\.rules/);
  });

  it('ci/namespaces-values.yaml: a Role per listed namespace, nothing of the controller\'s rules cluster-wide, restricted NetworkPolicy', () => {
    const objs = template('-f', path.join(chart, 'ci', 'namespaces-values.yaml'));
    const c = podSpecOf(find(objs, 'Deployment')).containers[0];
    assert.ok(c !== undefined);
    const loaded = loadConfig(c.args, downward);
    assert.ok(loaded.ok, loaded.ok ? '' : loaded.message);
    assert.deepEqual(loaded.config.namespaces, ['shop', 'web']);
    assert.equal(objs.some((o) => (o.kind === 'ClusterRole' || o.kind === 'ClusterRoleBinding') && o.metadata.name === RELEASE), false);
    for (const ns of ['shop', 'web']) {
      const role = objs.find((o) => o.kind === 'Role' && o.metadata.name === RELEASE && o.metadata.namespace === ns);
      assert.ok(role?.rules?.some((r) => (r.resources ?? []).includes('pods/status') && r.verbs.join() === 'patch'), `Role in ${ns}`);
      const binding = objs.find((o) => o.kind === 'RoleBinding' && o.metadata.name === RELEASE && o.metadata.namespace === ns) as (Obj & { roleRef?: unknown }) | undefined;
      assert.deepEqual(binding?.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: RELEASE });
    }
    const reader = named(objs, 'ClusterRoleBinding', `${RELEASE}-metrics-reader`) as Obj & { subjects?: unknown[] };
    assert.deepEqual(reader.subjects, [{ kind: 'ServiceAccount', name: 'prometheus', namespace: 'monitoring' }]);
    const np = find(objs, 'NetworkPolicy').spec ?? {};
    assert.deepEqual(np['policyTypes'], ['Ingress', 'Egress']);
    assert.deepEqual(np['ingress'], [
      { ports: [{ port: 8080, protocol: 'TCP' }], from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }] },
      { ports: [{ port: 9444, protocol: 'TCP' }], from: [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'outprobe', 'app.kubernetes.io/instance': RELEASE } } }] },
      { ports: [{ port: 9443, protocol: 'TCP' }] },
    ]);
    assert.equal((np['egress'] as unknown[]).length, 2);
    const endpoint = (find(objs, 'ServiceMonitor').spec?.['endpoints'] as Record<string, unknown>[])[0];
    assert.deepEqual(endpoint?.['authorization'], { type: 'Bearer', credentials: { name: 'prometheus-token', key: 'token' } });
  });

  it('uninstall hook (ADR 0035): a pre-delete Job running release-gates with its own ServiceAccount and minimal RBAC', () => {
    const objs = template();
    const hooked = objs.filter((o) => o.metadata.annotations?.['helm.sh/hook'] === 'pre-delete');
    const name = `${RELEASE}-release-gates`;
    assert.deepEqual(hooked.map((o) => `${o.kind}/${o.metadata.name}`).sort(),
      [`ClusterRole/${name}-pods`, `ClusterRoleBinding/${name}-pods`, `Job/${name}`, `Role/${name}`, `RoleBinding/${name}`, `ServiceAccount/${name}`]);
    const job = named(objs, 'Job', name) as Obj & { spec?: { template: { metadata: { labels: Record<string, string> }; spec: { serviceAccountName: string; containers: { command: string[]; args: string[]; image: string }[] } } } };
    const pod = job.spec?.template;
    assert.equal(pod?.spec.serviceAccountName, name);
    const c = pod.spec.containers[0];
    assert.deepEqual(c?.command, ['/nodejs/bin/node', 'src/release-gates.ts']);
    assert.deepEqual(c.args, [`--controller=${NS}/${RELEASE}`, '--wait-seconds=60']);
    assert.equal(c.image, (podSpecOf(find(objs, 'Deployment')).containers[0] as unknown as { image: string }).image, 'the controller\'s image');
    // Its pod is not one of the controller's (the hook waits for those to go).
    const selector = (find(objs, 'Deployment').spec?.['selector'] as { matchLabels: Record<string, string> }).matchLabels;
    assert.ok(Object.entries(selector).some(([k, v]) => pod.metadata.labels[k] !== v));
    const rules = (o: Obj): string[] => (o.rules ?? []).flatMap((r) => (r.resources ?? []).flatMap((res) => r.verbs.map((v) => `${res}:${v}`))).sort();
    assert.deepEqual(rules(named(objs, 'ClusterRole', `${name}-pods`)), ['pods/status:patch', 'pods:get', 'pods:list']);
    const role = named(objs, 'Role', name) as Obj & { rules?: { resourceNames?: string[] }[] };
    assert.deepEqual(rules(role), ['deployments/scale:get', 'deployments/scale:patch', 'deployments:get', 'deployments:patch', 'pods:list']);
    assert.deepEqual(role.rules?.[0]?.resourceNames, [RELEASE]);
    // With config.namespaces: a Role per namespace, nothing cluster-wide; the CLI is told the namespaces.
    const scoped = template('-f', path.join(chart, 'ci', 'namespaces-values.yaml'));
    assert.equal(scoped.some((o) => o.metadata.name === `${name}-pods` && o.kind.startsWith('Cluster')), false);
    assert.deepEqual(scoped.filter((o) => o.kind === 'Role' && o.metadata.name === `${name}-pods`).map((o) => o.metadata.namespace).sort(), ['shop', 'web']);
    const scopedJob = named(scoped, 'Job', name) as typeof job;
    assert.ok(scopedJob.spec?.template.spec.containers[0]?.args.includes('--namespaces=shop,web'));
    // Off: nothing rendered; waitSeconds checked by the schema.
    assert.equal(template('--set', 'uninstall.releaseGates=false').some((o) => o.metadata.name.startsWith(name)), false);
    assert.match(run(helm, ['template', RELEASE, chart, '--set', 'uninstall.waitSeconds=-1']).stderr, /waitSeconds/);
  });

  it('every render passes the API server\'s server-side dry-run', () => {
    for (const values of [[], ...ciValues.map((f) => ['-f', path.join(chart, 'ci', f)])]) {
      const manifest = ok(run(helm, ['template', RELEASE, chart, '--namespace', 'dry-run', ...values]), 'helm template');
      // kubectl applies one namespace at a time: the watched namespace's Role goes on its own.
      const byNamespace = new Map<string, string[]>();
      for (const doc of parseAllDocuments(manifest)) {
        const o = doc.toJS() as Obj | null;
        if (o === null) continue;
        const ns = o.metadata.namespace ?? 'dry-run';
        byNamespace.set(ns, [...(byNamespace.get(ns) ?? []), doc.toString()]);
      }
      let applied = '';
      for (const [ns, objs] of byNamespace) {
        const r = run(cp.binaries.kubectl, ['--kubeconfig', cp.kubeconfigPath, 'apply', '--dry-run=server', '-n', ns, '-f', '-'], objs.join('---\n'));
        applied += ok(r, `server-side dry-run of ${values.join(' ') || 'defaults'} (namespace ${ns})`);
      }
      assert.match(applied, /deployment\.apps\/outprobe (created|configured) \(server dry run\)/);
      if (values.some((v) => v.endsWith('exec-3replicas-values.yaml'))) assert.match(applied, /role\.rbac\.authorization\.k8s\.io\/outprobe (created|configured) \(server dry run\)/);
      assert.match(applied, /networkpolicy\.networking\.k8s\.io\/outprobe (created|configured) \(server dry run\)/);
    }
  });

  it('helm install: controller pods with the chart\'s ServiceAccount on different nodes, CRD served, printer columns', async () => {
    // A short grace period only so the simulated pods of upgrade and uninstall go away quickly.
    const out = ok(run(helm, ['--kubeconfig', cp.kubeconfigPath, 'install', RELEASE, chart, '-n', NS, '--create-namespace', '--set', 'terminationGracePeriodSeconds=2']), 'helm install');
    assert.match(out, /readinessGates:/, 'NOTES.txt explains the readiness gate');
    type Pod = { metadata: { name: string }; spec: { serviceAccountName: string; nodeName?: string }; status?: { phase?: string } };
    const pods = await until('2 controller pods Running', async () => {
      const list = (await cp.kube.get(`/api/v1/namespaces/${NS}/pods?labelSelector=app.kubernetes.io%2Finstance%3D${RELEASE}`))['items'] as Pod[];
      return list.length === 2 && list.every((p) => p.status?.phase === 'Running') ? list : undefined;
    });
    for (const p of pods) assert.equal(p.spec.serviceAccountName, RELEASE);
    assert.equal(new Set(pods.map((p) => p.spec.nodeName)).size, 2, 'replicas spread across the 2 nodes');
    await until('ProbePolicies served', async () => ((await cp.kube.call('GET', '/apis/outprobe.io/v1alpha1/probepolicies')).status === 200 ? true : undefined));
    ok(kubectl('apply', '--server-side', '-f', example), 'apply example');
    const table = ok(kubectl('get', 'probepolicies', '-n', 'shop'), 'kubectl get probepolicies');
    assert.match(table, /^NAME\s+STATUS\s+MODE\s+PODS\s+PODS-READY\s+PODS-FAILING\s+DIVERGED\s+NOVANTAGE\s+REMEDIATED\s+AGE\s+MESSAGE\n/);
    assert.match(table, /\nweb\s+(\S+\s+)?Enforce\s/);
    assert.match(ok(kubectl('get', 'probepolicies', '-n', 'shop', '-o', 'wide'), 'get -o wide'), /MESSAGE/);
  });

  it('helm upgrade changes values in place (3 replicas, exec probes on)', async () => {
    ok(run(helm, ['--kubeconfig', cp.kubeconfigPath, 'upgrade', RELEASE, chart, '-n', NS, '--reuse-values', '--set', 'replicaCount=3', '--set', 'execProbes.enabled=true', '--set', 'execProbes.namespaces={*}']), 'helm upgrade');
    const dep = await cp.kube.get(`/apis/apps/v1/namespaces/${NS}/deployments/${RELEASE}`) as Obj;
    assert.equal(dep.spec?.['replicas'], 3);
    assert.ok(podSpecOf(dep).containers[0]?.args.includes('--enable-exec-probes'));
    const role = await cp.kube.get(`/apis/rbac.authorization.k8s.io/v1/clusterroles/${RELEASE}`) as Obj;
    assert.ok(role.rules?.some((r) => (r.resources ?? []).includes('pods/exec')));
    await until('3 controller pods', async () => {
      const list = (await cp.kube.get(`/api/v1/namespaces/${NS}/pods?labelSelector=app.kubernetes.io%2Finstance%3D${RELEASE}`))['items'] as unknown[];
      return list.length === 3 ? true : undefined;
    });
    const crd = await cp.kube.get('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/probepolicies.outprobe.io') as Obj;
    assert.equal(crd.metadata.labels?.['app.kubernetes.io/managed-by'], 'Helm', 'the CRD is owned by the release (upgraded with it)');
  });

  it('helm uninstall leaves only the CRD (resource-policy keep), its ProbePolicies and the namespace', async () => {
    // --no-hooks: kwok runs the release-gates hook Job's pod as a simulated pod that never completes
    // (the hook's behaviour is tested against a real API server in test/integration/release.test.ts).
    ok(run(helm, ['--kubeconfig', cp.kubeconfigPath, 'uninstall', RELEASE, '-n', NS, '--wait', '--timeout', '60s', '--no-hooks']), 'helm uninstall');
    const selector = `labelSelector=app.kubernetes.io%2Finstance%3D${RELEASE}`;
    const kinds = ['/apis/apps/v1/deployments', '/apis/apps/v1/replicasets', '/api/v1/pods', '/api/v1/services', '/api/v1/serviceaccounts',
      '/apis/policy/v1/poddisruptionbudgets', '/apis/rbac.authorization.k8s.io/v1/roles', '/apis/rbac.authorization.k8s.io/v1/rolebindings',
      '/apis/rbac.authorization.k8s.io/v1/clusterroles', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', '/apis/monitoring.coreos.com/v1/servicemonitors',
      '/apis/networking.k8s.io/v1/networkpolicies',
      '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies', '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings'];
    await until('no object of the release left', async () => {
      for (const k of kinds) if (((await cp.kube.get(`${k}?${selector}`))['items'] as unknown[]).length > 0) return undefined;
      return true;
    });
    const helmSecrets = (await cp.kube.get(`/api/v1/namespaces/${NS}/secrets?labelSelector=owner%3Dhelm`))['items'] as unknown[];
    assert.equal(helmSecrets.length, 0, 'no release history left');
    const crd = await cp.kube.get('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/probepolicies.outprobe.io') as Obj;
    assert.equal(crd.metadata.annotations?.['helm.sh/resource-policy'], 'keep');
    assert.equal((await cp.kube.call('GET', '/apis/outprobe.io/v1alpha1/namespaces/shop/probepolicies/web')).status, 200, 'policies survive with their CRD');
    // Reinstalling adopts the kept CRD (it still carries the release's ownership annotations).
    ok(run(helm, ['--kubeconfig', cp.kubeconfigPath, 'install', RELEASE, chart, '-n', NS, '--set', 'replicaCount=0']), 'helm install over the kept CRD');
    ok(run(helm, ['--kubeconfig', cp.kubeconfigPath, 'uninstall', RELEASE, '-n', NS, '--no-hooks']), 'helm uninstall again');
  });
});
