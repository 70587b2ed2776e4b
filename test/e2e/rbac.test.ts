// RBAC checked, not assumed (issue 6): the chart is installed with helm, a real token
// of the chart's ServiceAccount is minted with the TokenRequest API, and
// `node src/main.ts` runs with only that token (cluster-wide, sharded, like the
// chart's Deployment). It must do its whole job: reflect policies and pods, patch
// pods/status gate conditions, evict and delete, write policy status, create events
// and hold its Lease, with no 403 anywhere. `kubectl auth can-i --as` then pins what
// the ServiceAccount must NOT be able to do. Upgraded with config.watchNamespace,
// the chart's RBAC becomes a Role in that namespace: can-i shows nothing is left
// cluster-wide, and the controller run with --namespace still does its job. The
// test plays the kubelet
// (test/integration/support/fake-kubelet.ts).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { createFleet } from '../support/fleet/index.ts';
import type { Fleet, FleetPod } from '../support/fleet/index.ts';
import { startControlPlane } from '../support/cluster/index.ts';
import type { ControlPlane } from '../support/cluster/index.ts';
import { conditionOf, createFakePod, getPod, waitFor } from '../integration/support/fake-kubelet.ts';
import type { FakePod } from '../integration/support/fake-kubelet.ts';
import { logsOnFailure } from '../support/replicas/index.ts';

const chart = fileURLToPath(new URL('../../charts/outprobe', import.meta.url));
const mainPath = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
const NS = 'outprobe';
const SA = `system:serviceaccount:${NS}:outprobe`;
const APP = 'rbac-app';
const gate = 'outprobe.io/web';
const fast = { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 1, failureThreshold: 2, timeoutSeconds: 1 };

/** A policy over one pod: readiness without the panic threshold (at its default 50 % a single gated pod never goes False), as these tests check that the writes are allowed. */
function policy(name: string, spec: Record<string, unknown>): Record<string, unknown> {
  const readiness = spec['readiness'] as Record<string, unknown> | undefined;
  const withPanic = readiness === undefined ? spec : { ...spec, readiness: { maxUnreadyPercent: 100, ...readiness } };
  return { apiVersion: 'outprobe.io/v1alpha1', kind: 'ProbePolicy', metadata: { name, namespace: APP }, spec: { selector: { matchLabels: { app: name } }, ...withPanic } };
}

void describe('the controller with the chart\'s ServiceAccount', () => {
  const logs = logsOnFailure('rbac');
  let cp: ControlPlane;
  let tmp: string;
  let child: ChildProcess | undefined;
  let fleet: Fleet | undefined;
  let replicaPod: FleetPod | undefined;
  /** Every controller started, so a test that fails before stopping its own cannot keep this file's process alive. */
  const started = new Set<ChildProcess>();
  const lines: string[] = [];
  const pods: FakePod[] = [];
  const helmEnv = (): NodeJS.ProcessEnv => ({ ...process.env, HELM_CACHE_HOME: `${tmp}/cache`, HELM_CONFIG_HOME: `${tmp}/config`, HELM_DATA_HOME: `${tmp}/data` });
  const helm = (...args: string[]): void => {
    const r = spawnSync(cp.binaries.helm, ['--kubeconfig', cp.kubeconfigPath, ...args], { encoding: 'utf8', env: helmEnv(), timeout: 60_000 });
    assert.equal(r.status, 0, `helm ${args.join(' ')}: ${r.stderr}`);
  };
  /** `kubectl auth can-i` as the ServiceAccount: true for "yes", false for "no". */
  const can = (...args: string[]): boolean => {
    const r = spawnSync(cp.binaries.kubectl, ['--kubeconfig', cp.kubeconfigPath, 'auth', 'can-i', '--as', SA, ...args], { encoding: 'utf8', timeout: 30_000 });
    assert.match(r.stdout.trim(), /^(yes|no)$/, r.stderr);
    return r.stdout.trim() === 'yes';
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
  /**
   * `node src/main.ts` as the chart runs it (sharded, Lease in the release namespace, membership proven
   * against its Pod of the chart's Deployment: ADR 0036), plus `extra` flags.
   */
  const runController = async (kubeconfig: string, extra: readonly string[]): Promise<{ readonly exited: Promise<number | null> }> => {
    lines.length = 0;
    fleet ??= await createFleet(cp.kube, { namespace: NS, name: 'outprobe', existingDeployment: true });
    // Not the workload's node (fake-node): a replica never probes a pod of its own node (vantage, ADR 0040).
    replicaPod ??= await fleet.addReplica('outprobe-rbac-0', { ip: '127.0.0.1', node: 'outprobe-node' });
    // One pod per remediating policy (100% failing) and a Delete policy: the installer lifts the halt ceiling and allows Delete.
    const c = spawn(process.execPath, [mainPath, '--kubeconfig', kubeconfig, '--allowed-probe-cidrs', '127.0.0.0/8', '--metrics-addr', '127.0.0.1:0', '--status-interval', '1',
      '--peer-addr', '127.0.0.1:0', ...fleet.args(replicaPod), '--max-halt-above-percent-failing', '100', '--allow-delete-action', ...extra],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env['PATH'] ?? '', ...fleet.env(replicaPod) } });
    child = c;
    logs.record('outprobe', c);
    started.add(c);
    c.once('exit', () => started.delete(c));
    for (const s of [c.stdout, c.stderr]) createInterface({ input: s }).on('line', (l) => lines.push(l));
    return { exited: new Promise<number | null>((resolve) => c.once('exit', (code) => resolve(code))) };
  };

  logs.setup(async () => {
    tmp = mkdtempSync(path.join(tmpdir(), 'outprobe-rbac-'));
    cp = await startControlPlane();
    logs.plane(cp);
    // The chart's own RBAC, ServiceAccount and CRD; no controller pods (nothing would run them here).
    // remediation.allowDelete: the Delete policy below needs `delete pods` (not granted by default).
    helm('install', 'outprobe', chart, '-n', NS, '--create-namespace', '--set', 'replicaCount=0', '--set', 'remediation.allowDelete=true');
    await waitFor('CRD served', async () => (await cp.kube.call('GET', '/apis/outprobe.io/v1alpha1/probepolicies')).status === 200, 30_000);
    await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: APP } });
  });
  logs.teardown(async () => {
    for (const c of started) c.kill('SIGKILL');
    for (const p of pods) await p.close();
    await cp.stop();
    rmSync(tmp, { recursive: true, force: true });
    fleet?.cleanup();
  });

  it('does its whole job with a token of the chart\'s ServiceAccount, never forbidden', async () => {
    const kubeconfig = await serviceAccountKubeconfig();

    await cp.kube.create(`/apis/outprobe.io/v1alpha1/namespaces/${APP}/probepolicies`, policy('web', { readiness: { conditionType: gate, probe: fast } }));
    await cp.kube.create(`/apis/outprobe.io/v1alpha1/namespaces/${APP}/probepolicies`, policy('evicted', { liveness: { action: 'Evict', probe: fast }, remediation: { maxUnavailable: 1, haltAbovePercentFailing: 100 } }));
    await cp.kube.create(`/apis/outprobe.io/v1alpha1/namespaces/${APP}/probepolicies`, policy('deleted', { liveness: { action: 'Delete', probe: fast }, remediation: { maxUnavailable: 1, haltAbovePercentFailing: 100 } }));
    const web = await createFakePod(cp.kube, APP, 'web-0', { labels: { app: 'web' }, gate });
    const ev = await createFakePod(cp.kube, APP, 'evicted-0', { labels: { app: 'evicted' } });
    const del = await createFakePod(cp.kube, APP, 'deleted-0', { labels: { app: 'deleted' }, terminationGracePeriodSeconds: 5 });
    pods.push(web, ev, del);

    // As the chart runs it: all namespaces, sharding on with its Lease in the release namespace (POD_NAMESPACE).
    const { exited } = await runController(kubeconfig, []);

    await waitFor('gate condition True (pods/status patch)', async () => conditionOf(await getPod(cp.kube, web), gate)?.status === 'True', 30_000);
    web.healthy = false;
    await waitFor('gate condition False', async () => conditionOf(await getPod(cp.kube, web), gate)?.status === 'False', 15_000);
    ev.healthy = false;
    await waitFor('evicted (pods/eviction create)', async () => ((await getPod(cp.kube, ev))?.['metadata'] as { deletionTimestamp?: string } | undefined)?.deletionTimestamp !== undefined, 20_000);
    del.healthy = false;
    await waitFor('deleted (pods delete)', async () => ((await getPod(cp.kube, del))?.['metadata'] as { deletionTimestamp?: string } | undefined)?.deletionTimestamp !== undefined, 20_000);
    await waitFor('policy status written (probepolicies/status)', async () => {
      const s = (await cp.kube.get(`/apis/outprobe.io/v1alpha1/namespaces/${APP}/probepolicies/evicted`))['status'] as { remediations?: number; pods?: number } | undefined;
      return (s?.remediations ?? 0) >= 1;
    }, 15_000);
    const webStatus = (await cp.kube.get(`/apis/outprobe.io/v1alpha1/namespaces/${APP}/probepolicies/web`))['status'] as { pods?: number };
    assert.equal(webStatus.pods, 1);
    await waitFor('events created', async () => {
      const list = (await cp.kube.get(`/api/v1/namespaces/${APP}/events`))['items'] as { reportingComponent?: string }[];
      return list.filter((e) => e.reportingComponent === 'outprobe.io/controller').length >= 2;
    }, 15_000);
    const leases = (await cp.kube.get(`/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`))['items'] as { spec?: { holderIdentity?: string } }[];
    assert.ok(leases.some((l) => l.spec?.holderIdentity === 'outprobe-rbac-0'), `shard Lease held: ${JSON.stringify(leases)}`);

    child?.kill('SIGTERM');
    assert.equal(await exited, 0, lines.join('\n'));
    child = undefined;
    const denied = lines.filter((l) => /forbidden|\b403\b/i.test(l));
    assert.deepEqual(denied, [], 'no request was forbidden');
    // Its shard Lease; the policies' remediation ledgers (ADR 0033) are the fleet's, kept for their window.
    const leasesAfter = ((await cp.kube.get(`/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`))['items'] as { metadata: { name: string; labels?: Record<string, string> } }[])
      .filter((l) => l.metadata.labels?.['outprobe.io/remediation-ledger'] === undefined);
    assert.deepEqual(leasesAfter.map((l) => l.metadata.name), [], 'its Lease deleted on shutdown (leases delete)');
  });

  it('kubectl auth can-i: only the listed verbs, nothing on secrets, no pods/exec unless enabled', () => {
    for (const args of [['get', 'pods', '-A'], ['list', 'pods', '-A'], ['watch', 'pods', '-A'], ['delete', 'pods', '-n', APP], ['patch', 'pods', '--subresource=status', '-n', APP],
      ['create', 'pods', '--subresource=eviction', '-n', APP], ['create', 'events', '-n', APP], ['patch', 'events', '-n', APP], ['list', 'probepolicies.outprobe.io', '-A'],
      ['patch', 'probepolicies.outprobe.io', '--subresource=status', '-n', APP], ['update', 'probepolicies.outprobe.io', '--subresource=status', '-n', APP],
      ['create', 'leases.coordination.k8s.io', '-n', NS], ['delete', 'leases.coordination.k8s.io', '-n', NS],
      // Membership proof (ADR 0036): the release namespace's pods and the ReplicaSets that own them.
      ['list', 'pods', '-n', NS], ['watch', 'pods', '-n', NS], ['get', 'replicasets.apps', '-n', NS]]) {
      assert.equal(can(...args), true, `can ${args.join(' ')}`);
    }
    for (const args of [['get', 'secrets', '-n', NS], ['list', 'secrets', '-A'], ['watch', 'secrets', '-A'], ['get', 'secrets', '-n', APP], ['update', 'pods', '-n', APP], ['patch', 'pods', '-n', APP],
      ['create', 'pods', '-n', APP], ['create', 'pods', '--subresource=exec', '-n', APP], ['update', 'pods', '--subresource=status', '-n', APP],
      ['create', 'probepolicies.outprobe.io', '-n', APP], ['update', 'probepolicies.outprobe.io', '-n', APP], ['patch', 'probepolicies.outprobe.io', '-n', APP], ['delete', 'probepolicies.outprobe.io', '-n', APP],
      ['create', 'leases.coordination.k8s.io', '-n', APP], ['list', 'configmaps', '-A'], ['list', 'nodes'], ['create', 'serviceaccounts/token', '-n', NS], ['impersonate', 'users'],
      ['list', 'replicasets.apps', '-n', NS], ['get', 'replicasets.apps', '-n', APP], ['get', 'deployments.apps', '-n', NS], ['update', 'replicasets.apps', '-n', NS]]) {
      assert.equal(can(...args), false, `cannot ${args.join(' ')}`);
    }
    helm('upgrade', 'outprobe', chart, '-n', NS, '--reuse-values', '--set', 'execProbes.enabled=true', '--set', `execProbes.namespaces={${APP}}`);
    assert.equal(can('create', 'pods', '--subresource=exec', '-n', APP), true, 'pods/exec with execProbes.enabled, in execProbes.namespaces');
    assert.equal(can('create', 'pods', '--subresource=exec', '-n', 'default'), false, 'no pods/exec outside execProbes.namespaces');
    assert.equal(can('get', 'pods', '--subresource=exec', '-n', APP), false, 'only create on pods/exec');
    assert.equal(can('get', 'secrets', '-n', NS), false);
  });
  it('with config.watchNamespace: a Role in that namespace only, and the controller does its job there', async () => {
    helm('upgrade', 'outprobe', chart, '-n', NS, '--reuse-values', '--set', 'execProbes.enabled=false', '--set', `config.watchNamespace=${APP}`);
    assert.equal((await cp.kube.call('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/outprobe')).status, 404, 'no ClusterRole left');
    assert.equal((await cp.kube.call('GET', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/outprobe')).status, 404, 'no ClusterRoleBinding left');
    for (const args of [['list', 'pods', '-n', APP], ['watch', 'pods', '-n', APP], ['delete', 'pods', '-n', APP], ['patch', 'pods', '--subresource=status', '-n', APP],
      ['create', 'pods', '--subresource=eviction', '-n', APP], ['create', 'events', '-n', APP], ['watch', 'probepolicies.outprobe.io', '-n', APP],
      ['patch', 'probepolicies.outprobe.io', '--subresource=status', '-n', APP], ['create', 'leases.coordination.k8s.io', '-n', NS]]) {
      assert.equal(can(...args), true, `can ${args.join(' ')}`);
    }
    for (const args of [['list', 'pods', '-A'], ['get', 'pods', '-n', 'default'], ['patch', 'pods', '--subresource=status', '-n', 'default'], ['delete', 'pods', '-n', 'default'],
      ['create', 'events', '-n', 'default'], ['list', 'probepolicies.outprobe.io', '-A'], ['get', 'secrets', '-n', APP], ['create', 'pods', '--subresource=exec', '-n', APP]]) {
      assert.equal(can(...args), false, `cannot ${args.join(' ')}`);
    }
    const web = await createFakePod(cp.kube, APP, 'web-ns', { labels: { app: 'web' }, gate });
    pods.push(web);
    const { exited } = await runController(await serviceAccountKubeconfig(), ['--namespace', APP]);
    await waitFor('gate condition True with the namespaced Role', async () => conditionOf(await getPod(cp.kube, web), gate)?.status === 'True', 30_000);
    await waitFor('policy status written', async () => {
      const st = (await cp.kube.get(`/apis/outprobe.io/v1alpha1/namespaces/${APP}/probepolicies/web`))['status'] as { pods?: number } | undefined;
      return st?.pods === 2;
    }, 15_000);
    child?.kill('SIGTERM');
    assert.equal(await exited, 0, lines.join('\n'));
    child = undefined;
    assert.deepEqual(lines.filter((l) => /forbidden|\b403\b/i.test(l)), [], 'no request was forbidden');
  });
  it('with config.namespaces: a Role in each listed namespace, nothing to patch or delete elsewhere, and the controller acts only there', async () => {
    const APP2 = 'rbac-app2';
    const OUTSIDE = 'rbac-outside';
    for (const name of [APP2, OUTSIDE]) await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    helm('upgrade', 'outprobe', chart, '-n', NS, '--reuse-values', '--set', 'config.watchNamespace=', '--set', `config.namespaces={${APP},${APP2}}`);
    assert.equal((await cp.kube.call('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/outprobe')).status, 404, 'no cluster-wide controller ClusterRole');
    for (const ns of [APP, APP2]) {
      for (const args of [['list', 'pods'], ['watch', 'pods'], ['delete', 'pods'], ['patch', 'pods', '--subresource=status'], ['create', 'pods', '--subresource=eviction'],
        ['create', 'events'], ['watch', 'probepolicies.outprobe.io'], ['patch', 'probepolicies.outprobe.io', '--subresource=status']]) {
        assert.equal(can(...args, '-n', ns), true, `can ${args.join(' ')} -n ${ns}`);
      }
    }
    for (const ns of [OUTSIDE, 'default', NS]) {
      // In the release namespace the replicas read their own pods and report on their Leases (membership proof, ADR 0036): nothing more.
      const denied = ns === NS ? [['patch', 'pods', '--subresource=status'], ['delete', 'pods'], ['create', 'pods', '--subresource=eviction']]
        : [['patch', 'pods', '--subresource=status'], ['delete', 'pods'], ['create', 'pods', '--subresource=eviction'], ['list', 'pods'], ['create', 'events']];
      for (const args of denied) assert.equal(can(...args, '-n', ns), false, `cannot ${args.join(' ')} -n ${ns}`);
    }
    assert.equal(can('list', 'pods', '-n', NS), true, 'the replicas\' own pods (ADR 0036)');
    assert.equal(can('list', 'pods', '-A'), false);
    assert.equal(can('patch', 'pods', '--subresource=status', '-A'), false);
    // Only the /metrics reviews are cluster-wide.
    assert.equal(can('create', 'tokenreviews.authentication.k8s.io'), true);
    assert.equal(can('create', 'subjectaccessreviews.authorization.k8s.io'), true);

    await cp.kube.create(`/apis/outprobe.io/v1alpha1/namespaces/${APP2}/probepolicies`, { ...policy('web', { readiness: { conditionType: gate, probe: fast } }), metadata: { name: 'web', namespace: APP2 } });
    await cp.kube.create(`/apis/outprobe.io/v1alpha1/namespaces/${OUTSIDE}/probepolicies`, { ...policy('web', { readiness: { conditionType: gate, probe: fast } }), metadata: { name: 'web', namespace: OUTSIDE } });
    const inside = await createFakePod(cp.kube, APP2, 'web-listed', { labels: { app: 'web' }, gate });
    const outside = await createFakePod(cp.kube, OUTSIDE, 'web-outside', { labels: { app: 'web' }, gate });
    pods.push(inside, outside);
    const { exited } = await runController(await serviceAccountKubeconfig(), ['--namespace', `${APP},${APP2}`]);
    await waitFor('gate condition True in the second listed namespace', async () => conditionOf(await getPod(cp.kube, inside), gate)?.status === 'True', 30_000);
    const first = pods.find((p) => p.name === 'web-ns');
    assert.ok(first !== undefined);
    // Its condition is already True from the previous test: set it False so this run must write it.
    const reset = await cp.kube.call('PATCH', `/api/v1/namespaces/${APP}/pods/web-ns/status`, { status: { conditions: [{ type: gate, status: 'False' }] } }, 'application/strategic-merge-patch+json');
    assert.equal(reset.status, 200);
    await waitFor('gate condition True in the first listed namespace', async () => conditionOf(await getPod(cp.kube, first), gate)?.status === 'True', 15_000);
    child?.kill('SIGTERM');
    assert.equal(await exited, 0, lines.join('\n'));
    child = undefined;
    assert.equal(conditionOf(await getPod(cp.kube, outside), gate), undefined, 'nothing written outside the list');
    assert.equal(outside.hits, 0, 'never probed outside the list');
    assert.deepEqual(lines.filter((l) => /forbidden|\b403\b/i.test(l)), [], 'no request was forbidden');
  });
});

