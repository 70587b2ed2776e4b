import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startControlPlane } from '../support/cluster/index.ts';
import type { ControlPlane } from '../support/cluster/index.ts';
import { installCrd, startController } from './support/controller.ts';
import type { RunningController } from './support/controller.ts';
import { conditionOf, createFakePod, waitFor } from './support/fake-kubelet.ts';
import type { FakePod } from './support/fake-kubelet.ts';
import { logsOnFailure } from '../support/replicas/index.ts';
import { ResultJournal, fleetReport, podReport, startDebugServer } from '../../src/explain/index.ts';
import type { DebugServer, FleetView, PodReport } from '../../src/explain/index.ts';
import { systemClock } from '../../src/kernel/index.ts';

/**
 * `kubectl outprobe explain` and `status` (issue 30 item 3, ADR 0067) against
 * a real kube-apiserver: four gated pods on loopback addresses, all failing,
 * default maxUnreadyPercent 50, so two are held False and two kept True by
 * the panic threshold. The plugin runs as a user would (a child process with
 * the kubeconfig), asking the in-process replica's debug endpoint by URL (the
 * test plane's pods cannot be port-forwarded).
 */
const gate = 'outprobe.io/web';
const policiesPath = (ns: string): string => `/apis/outprobe.io/v1alpha1/namespaces/${ns}/probepolicies`;
const plugin = fileURLToPath(new URL('../../src/cli/kubectl-outprobe.ts', import.meta.url));

describe('kubectl outprobe against a real kube-apiserver', () => {
  const logs = logsOnFailure('explain');
  let cp: ControlPlane;
  const pods: FakePod[] = [];
  let c: RunningController | undefined;
  let debug: DebugServer | undefined;

  logs.setup(async () => {
    cp = await startControlPlane({ log: () => undefined });
    logs.plane(cp);
    await installCrd(cp.kube);
  });
  logs.teardown(async () => {
    await debug?.close();
    await c?.stop();
    await Promise.all(pods.map((p) => p.close()));
    await cp.stop();
  });

  /** The plugin as a child process; asynchronous, since the replica it asks runs in this process. */
  function run(args: string[]): Promise<{ stdout: string; stderr: string; status: number | null }> {
    return new Promise((resolve) => {
      execFile(process.execPath, ['--no-warnings', plugin, ...args, '--kubeconfig', cp.kubeconfigPath], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) => {
        const status = err === null ? 0 : typeof err.code === 'number' ? err.code : null;
        logs.logger('plugin').info('kubectl-outprobe', { args, status, stdout, stderr });
        resolve({ stdout, stderr, status });
      });
    });
  }

  it('explains a pod kept True by the panic threshold and one held False, field by field; status lists the replica and the policy', async () => {
    const ns = `explain-${Date.now().toString(36)}`;
    await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await cp.kube.create(policiesPath(ns), {
      apiVersion: 'outprobe.io/v1alpha1',
      kind: 'ProbePolicy',
      metadata: { name: 'web', namespace: ns },
      spec: { selector: { matchLabels: { app: 'web' } }, readiness: { conditionType: gate, probe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 1, failureThreshold: 2, timeoutSeconds: 1 } } },
    });
    const web: FakePod[] = [];
    for (let i = 0; i < 4; i++) web.push(await createFakePod(cp.kube, ns, `web-${i}`, { labels: { app: 'web' }, gate }));
    pods.push(...web);
    const journal = new ResultJournal({ clock: systemClock });
    c = startController(cp.kubeconfigPath, ns, { log: logs.logger('controller'), tap: journal.observe, options: { identity: 'replica-a' } });
    const controller = c.controller;
    const view: FleetView = { identity: 'replica-a', vantage: () => 'node n1 (zone a)', members: () => ['replica-a'], owner: () => 'replica-a', owns: () => true };
    debug = await startDebugServer({ host: '127.0.0.1', port: 0, source: { pod: (namespace, name) => podReport({ controller, journal, fleet: view, namespace, name, now: Date.now() }), fleet: () => fleetReport(controller, view, Date.now()) } });
    const url = `replica-a=http://127.0.0.1:${debug.port}`;
    await waitFor('four gates True', async () => (await gateOf(ns)).every((g) => g?.status === 'True'), 20_000);

    for (const p of web) p.healthy = false;
    const split = await waitFor('two False, two kept True (PanicFailOpen)', async () => {
      const g = await gateOf(ns);
      return g.filter((x) => x?.status === 'False').length === 2 && g.filter((x) => x?.reason === 'PanicFailOpen').length === 2 ? g : undefined;
    }, 20_000, 50);
    const names = (await podNames(ns));
    const open = names[split.findIndex((x) => x?.reason === 'PanicFailOpen')] ?? '';
    const held = names[split.findIndex((x) => x?.status === 'False')] ?? '';

    // The debug endpoint's document, as the plugin reads it.
    const doc = (await (await fetch(`http://127.0.0.1:${debug.port}/debug/pods/${ns}/${open}`)).json()) as PodReport;
    assert.equal(doc.version, 1);
    assert.equal(doc.owner, 'replica-a');
    assert.equal(doc.ownedHere, true);
    assert.equal(doc.pod?.name, open);
    assert.equal(doc.targets.length, 1);
    const t = doc.targets[0];
    assert.equal(t?.policy, `${ns}/web`);
    assert.equal(t.kind, 'readiness');
    assert.equal(t.probe, 'httpGet http :http/healthz');
    assert.equal(t.state.lastResult, 'failure');
    assert.equal(t.state.confirmed, 'failure');
    assert.ok(t.state.consecutive >= 2, `consecutive failures ${String(t.state.consecutive)}`);
    assert.ok(t.failingSince !== null);
    assert.ok(t.recent.length >= 2 && t.recent.length <= 10);
    assert.equal(t.recent.at(-1)?.result, 'failure');
    assert.match(t.recent.at(-1)?.output ?? '', /HTTP probe failed with statuscode: 503/);
    const g = doc.gates.find((x) => x.type === gate);
    assert.ok(g !== undefined);
    assert.deepEqual([g.onPod?.status, g.onPod?.reason, g.desired?.reason, g.held], ['True', 'PanicFailOpen', 'PanicFailOpen', null]);
    assert.equal(doc.remediation, null);
    assert.equal((await fetch(`http://127.0.0.1:${debug.port}/debug/pods/${ns}/no-such-pod`).then((r) => r.json()) as PodReport).pod, null);
    assert.equal((await fetch(`http://127.0.0.1:${debug.port}/debug/pods/${ns}/x`, { method: 'POST' })).status, 405);

    // The plugin's text for the pod kept True.
    const ex = await run(['explain', `pod/${open}`, '-n', ns, '--replica-url', url]);
    assert.equal(ex.status, 0, ex.stderr);
    const lines = ex.stdout.split('\n');
    const line = (prefix: string): string => lines.find((l) => l.startsWith(prefix)) ?? `(no line ${prefix})`;
    assert.equal(line('Pod:'), `Pod:          ${ns}/${open} (uid ${web.find((p) => p.name === open)?.uid ?? ''})`);
    assert.match(line('Node:'), /^Node: +\S+ +IP: 127\.\d+\.\d+\.\d+ +Phase: Running$/);
    assert.equal(lines[lines.indexOf('Policies:     ') + 1], `  ${ns}/web: Enforce, readiness gate ${gate}`);
    assert.equal(line('Owner:'), 'Owner:        replica-a');
    assert.equal(line('Vantage:'), 'Vantage:      node n1 (zone a)');
    const gateLine = lines.findIndex((l) => l.startsWith(`  ${gate}: `));
    assert.match(lines[gateLine] ?? '', new RegExp(`^  ${gate}: True PanicFailOpen since \\S+$`));
    assert.match(lines[gateLine + 1] ?? '', /^ {4}message: outprobe fails open \(ProbePolicy .*\/web\): [34] of 4 gated pods fail readiness/);
    assert.match(ex.stdout, /\n {2}\S+\/web readiness container web: httpGet http :http\/healthz, every 1s, success 1 \/ failure 2\n/);
    assert.match(ex.stdout, /\n {4}state: committed failure; last result failure ×\d+ in a row \(confirmed failure\); on-hold no; failing since \S+\n/);
    assert.match(ex.stdout, /\n {4}\S+ {2}failure +\d+ ms {2}.*HTTP probe failed with statuscode: 503/);
    assert.equal(line('Remediation:'), 'Remediation:  none pending');

    // The one held False: the gate and what outprobe wants agree.
    const ex2 = await run(['explain', held, '-n', ns, '--replica-url', url, '-o', 'json']);
    assert.equal(ex2.status, 0, ex2.stderr);
    const json = JSON.parse(ex2.stdout) as { api: { pod: { name: string } }; replicas: { identity: string; report: PodReport }[] };
    assert.equal(json.api.pod.name, held);
    const heldGate = json.replicas[0]?.report.gates[0];
    assert.deepEqual([heldGate?.onPod?.status, heldGate?.onPod?.reason], ['False', 'ProbeFailed']);

    // Status: the replica's numbers and the policy's state.
    const st = await run(['status', '--replica-url', url]);
    assert.equal(st.status, 0, st.stderr);
    assert.match(st.stdout, /^Replicas \(0 live members\):$/m);
    assert.match(st.stdout, /^ {2}replica-a {2}\(answered, but holds no live shard Lease\) {2}pods 4$/m);
    assert.match(st.stdout, new RegExp(`^  ${ns}/web  Probing  ready 2/4  failing \\d+$`, 'm'));
    assert.match(st.stdout, /^ {4}ReadinessPanic: 4 of 4 gated pods fail readiness; at most 50% \(2\) may be held unready: failing open \(2 held unready, 2 kept ready\)$/m);

    // Without the replica: the API part alone, and it says why the rest is missing.
    const bare = await run(['explain', `pod/${open}`, '-n', ns, '--no-port-forward']);
    assert.equal(bare.status, 0, bare.stderr);
    assert.match(bare.stdout, /^Owner: +\(no live replica owns it\)$/m);
    assert.match(bare.stdout, /^ {2}\(no replica that owns the pod answered: its probe state is unknown here\)$/m);
  });

  async function podNames(ns: string): Promise<string[]> {
    const list = (await cp.kube.get(`/api/v1/namespaces/${ns}/pods`))['items'] as { metadata: { name: string } }[];
    return list.map((p) => p.metadata.name);
  }
  async function gateOf(ns: string): Promise<ReturnType<typeof conditionOf>[]> {
    const list = (await cp.kube.get(`/api/v1/namespaces/${ns}/pods`))['items'] as Record<string, unknown>[];
    return list.map((p) => conditionOf(p, gate));
  }
});
