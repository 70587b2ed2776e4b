import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
import { isAlive } from '../support/cluster/index.ts';
import { describe, it } from 'node:test';
import { startControlPlane } from '../support/cluster/index.ts';
import type { ControlPlane } from '../support/cluster/index.ts';
import { invalidPolicies, unhonourablePolicies } from '../fixtures/policies/invalid.ts';
import { startController, installCrd } from './support/controller.ts';
import type { RunningController } from './support/controller.ts';
import { conditionOf, createFakePod, getPod, mergePatch, restartContainer, strategicPatch, waitFor } from './support/fake-kubelet.ts';
import type { FakePod } from './support/fake-kubelet.ts';
import { logsOnFailure } from '../support/replicas/index.ts';

const gate = 'outprobe.io/web';
const policiesPath = (ns: string): string => `/apis/outprobe.io/v1alpha1/namespaces/${ns}/probepolicies`;

/**
 * These tests gate one or two pods: the panic threshold (ADR 0015) is off
 * (maxUnreadyPercent 100) unless a test sets it, so a failing pod is written
 * False; test/integration/panic.test.ts covers the threshold.
 */
function policy(ns: string, name: string, spec: Record<string, unknown>): Record<string, unknown> {
  const readiness = spec['readiness'] as Record<string, unknown> | undefined;
  const withPanic = readiness === undefined ? spec : { ...spec, readiness: { maxUnreadyPercent: 100, ...readiness } };
  return { apiVersion: 'outprobe.io/v1alpha1', kind: 'ProbePolicy', metadata: { name, namespace: ns }, spec: { selector: { matchLabels: { app: name } }, ...withPanic } };
}

const fastHttp = { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 1, failureThreshold: 2, timeoutSeconds: 1 };

describe('controller against a real kube-apiserver', () => {
  const logs = logsOnFailure('controller');
  let cp: ControlPlane;
  const pods: FakePod[] = [];
  const running: RunningController[] = [];
  let nsCount = 0;

  async function namespace(): Promise<string> {
    const ns = `t${++nsCount}-${Date.now().toString(36)}`;
    await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    return ns;
  }
  async function pod(ns: string, name: string, o: Parameters<typeof createFakePod>[3] = {}): Promise<FakePod> {
    const p = await createFakePod(cp.kube, ns, name, o);
    pods.push(p);
    return p;
  }
  function controllerFor(ns: string, o: { readonly execEnabled?: boolean } = {}): RunningController {
    const c = startController(cp.kubeconfigPath, ns, { ...o, log: logs.logger(`controller-${ns}`) });
    running.push(c);
    return c;
  }
  async function policyStatus(ns: string, name: string): Promise<Record<string, unknown>> {
    return ((await cp.kube.get(`${policiesPath(ns)}/${name}`))['status'] ?? {}) as Record<string, unknown>;
  }
  function statusCondition(status: Record<string, unknown>, type: string): { status: string; message: string } | undefined {
    return (status['conditions'] as { type: string; status: string; message: string }[] | undefined)?.find((c) => c.type === type);
  }

  logs.setup(async () => {
    cp = await startControlPlane({ log: () => undefined });
    logs.plane(cp);
    await installCrd(cp.kube);
  });
  const extraPids: number[] = [];
  logs.teardown(async () => {
    await Promise.all(running.map((c) => c.stop()));
    for (const pid of extraPids) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
    await Promise.all(pods.map((p) => p.close()));
    await cp.stop();
  });

  it(`the API server rejects each of the ${invalidPolicies.length} invalid policies with a clear message`, async () => {
    const ns = await namespace();
    for (const bad of invalidPolicies) {
      const r = await cp.kube.call('POST', policiesPath(ns), { ...bad.manifest, metadata: { ...bad.manifest.metadata, namespace: ns } });
      assert.equal(r.status, 422, `${bad.name}: expected 422, got ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
      assert.ok(JSON.stringify(r.body).includes(bad.expectMessage.replace(/"/g, '\\"')), `${bad.name}: ${JSON.stringify(r.body).slice(0, 600)} lacks ${bad.expectMessage}`);
    }
  });

  it('marks a policy it cannot honour Invalid (status and event) and keeps serving the others', async () => {
    const ns = await namespace();
    const bad = unhonourablePolicies.find((p) => p.expectCode === 'exec_disabled');
    assert.ok(bad !== undefined);
    await cp.kube.create(policiesPath(ns), { ...bad.manifest, metadata: { ...bad.manifest.metadata, name: 'needs-exec', namespace: ns } });
    await cp.kube.create(policiesPath(ns), policy(ns, 'web', { readiness: { conditionType: gate, probe: fastHttp } }));
    const p = await pod(ns, 'web-0', { labels: { app: 'web' }, gate });
    const c = controllerFor(ns);
    const invalid = await waitFor('Invalid condition', async () => {
      const cond = statusCondition(await policyStatus(ns, 'needs-exec'), 'Invalid');
      return cond?.status === 'True' ? cond : undefined;
    });
    assert.match(invalid.message, /exec/);
    assert.ok(c.events.some((e) => e.type === 'policy-invalid' && e.policy.name === 'needs-exec'));
    await waitFor('gate True on the valid policy', async () => conditionOf(await getPod(cp.kube, p), gate)?.status === 'True');
  });

  it('readiness: False within period x failureThreshold + 1 s, True again; writes equal transitions', async () => {
    const ns = await namespace();
    await cp.kube.create(policiesPath(ns), policy(ns, 'web', { readiness: { conditionType: gate, probe: { ...fastHttp, successThreshold: 2 } } }));
    const p = await pod(ns, 'web-0', { labels: { app: 'web' }, gate });
    const c = controllerFor(ns);
    await waitFor('gate True', async () => conditionOf(await getPod(cp.kube, p), gate)?.status === 'True');
    p.healthy = false;
    const t0 = Date.now();
    const down = await waitFor('gate False', async () => {
      const cond = conditionOf(await getPod(cp.kube, p), gate);
      return cond?.status === 'False' ? cond : undefined;
    }, 10_000, 50);
    const took = Date.now() - t0;
    assert.ok(took <= 1000 * 2 + 1000 + 500, `False after ${took} ms`);
    assert.equal(down.reason, 'ProbeFailed');
    assert.equal(down.message, 'Readiness probe failed: HTTP probe failed with statuscode: 503');
    p.healthy = true;
    await waitFor('gate True again', async () => conditionOf(await getPod(cp.kube, p), gate)?.status === 'True', 10_000, 50);
    await new Promise((r) => setTimeout(r, 1500)); // steady state: nothing more is written
    const transitions = c.events.flatMap((e) => (e.type === 'transition' && e.target.kind === 'readiness' ? [e.transition] : []));
    const writes = c.events.filter((e) => e.type === 'gate-write' && e.result === 'written');
    assert.deepEqual(transitions.map((t) => `${t.cause}:${t.to}`), ['initial:failure', 'probe:success', 'probe:failure', 'probe:success']);
    // One write per probe transition; the initial Failure of a pod without the condition is not written.
    assert.equal(writes.length, transitions.filter((t) => t.cause === 'probe').length);
    const podObj = await getPod(cp.kube, p);
    assert.equal(conditionOf(podObj, 'Ready')?.status, 'True', 'outprobe never writes Ready');
    // Kubernetes Events, worded as the kubelet's, aggregated by count.
    const list = (await cp.kube.get(`/api/v1/namespaces/${ns}/events`))['items'] as { reason: string; message: string; count: number; source?: { component?: string } }[];
    const unhealthy = list.find((e) => e.reason === 'Unhealthy') ?? { message: '', count: 0, source: { component: '' } };
    assert.equal(unhealthy.message, 'Readiness probe failed: HTTP probe failed with statuscode: 503');
    assert.ok(unhealthy.count >= 2, `count ${unhealthy.count}`);
    assert.equal(unhealthy.source?.component, 'outprobe');
    assert.ok(list.some((e) => e.reason === 'ReadinessGateChanged'));
    assert.match(await c.metrics.text(), /outprobe_probes_total\{namespace="[^"]+",policy="[^"]+\/web",kind="readiness",result="failure"\} [1-9]/);
  });

  it('a gate that another writer turned False is put back by the next confirming probe', async () => {
    const ns = await namespace();
    await cp.kube.create(policiesPath(ns), policy(ns, 'web', { readiness: { conditionType: gate, probe: fastHttp } }));
    const p = await pod(ns, 'web-0', { labels: { app: 'web' }, gate });
    const c = controllerFor(ns);
    await waitFor('gate True', async () => conditionOf(await getPod(cp.kube, p), gate)?.status === 'True');
    await new Promise((r) => setTimeout(r, 1500)); // the informer has shown outprobe's own write
    const writesBefore = c.events.filter((e) => e.type === 'gate-write' && e.result === 'written').length;
    // What a previous owner's late write during a handover looks like to this replica.
    await strategicPatch(cp.kube, `/api/v1/namespaces/${ns}/pods/${p.name}/status`, {
      metadata: { uid: p.uid },
      status: { conditions: [{ type: gate, status: 'False', reason: 'ProbeFailed', message: 'Readiness probe failed: late write' }] },
    });
    // Within a few periods: the informer showed outprobe's own write, so the change is believed at once
    // (waiting out the 10 s echo fallback instead would fail this).
    const back = await waitFor('gate True again', async () => {
      const cond = conditionOf(await getPod(cp.kube, p), gate);
      return cond?.status === 'True' ? cond : undefined;
    }, 6_000, 50);
    assert.equal(back.reason, 'ProbeSucceeded');
    await new Promise((r) => setTimeout(r, 1500)); // and then steady state again
    const writes = c.events.filter((e) => e.type === 'gate-write' && e.result === 'written').length;
    assert.equal(writes - writesBefore, 1, 'one repair, no more');
    assert.ok(p.healthy && p.hits > 0);
  });

  it('liveness failure evicts the pod with uid and resourceVersion preconditions', async () => {
    const ns = await namespace();
    await cp.kube.create(policiesPath(ns), policy(ns, 'live', { liveness: { action: 'Evict', probe: fastHttp }, remediation: { maxUnavailable: 1, haltAbovePercentFailing: 100 } }));
    const p = await pod(ns, 'live-0', { labels: { app: 'live' } });
    const other = await pod(ns, 'live-1', { labels: { app: 'live' } });
    const c = controllerFor(ns);
    await waitFor('probed', () => Promise.resolve(p.hits > 0));
    p.healthy = false;
    await waitFor('evicted (deletionTimestamp set)', async () => (await getPod(cp.kube, p))?.['metadata'] !== undefined && ((await getPod(cp.kube, p))?.['metadata'] as { deletionTimestamp?: string }).deletionTimestamp !== undefined);
    const ev = c.events.find((e) => e.type === 'remediation' && e.result === 'evicted');
    assert.ok(ev !== undefined && ev.type === 'remediation' && ev.pod.uid === p.uid);
    assert.equal(((await getPod(cp.kube, other))?.['metadata'] as { deletionTimestamp?: string }).deletionTimestamp, undefined);
  });

  it('a PodDisruptionBudget that forbids the eviction is honoured (429, retried, pod kept)', async () => {
    const ns = await namespace();
    const pdb = await cp.kube.create(`/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets`, {
      apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'strict', namespace: ns }, spec: { maxUnavailable: 0, selector: { matchLabels: { app: 'pdb' } } },
    });
    // Play the disruption controller: the budget allows no disruption now.
    await mergePatch(cp.kube, `/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets/strict/status`, {
      status: { observedGeneration: (pdb['metadata'] as { generation: number }).generation, disruptionsAllowed: 0, currentHealthy: 2, desiredHealthy: 2, expectedPods: 2 },
    });
    await cp.kube.create(policiesPath(ns), policy(ns, 'pdb', { liveness: { probe: fastHttp }, remediation: { haltAbovePercentFailing: 100 } }));
    const p = await pod(ns, 'pdb-0', { labels: { app: 'pdb' } });
    await pod(ns, 'pdb-1', { labels: { app: 'pdb' } });
    const c = controllerFor(ns);
    p.healthy = false;
    await waitFor('PDB refusal', () => Promise.resolve(c.events.some((e) => e.type === 'remediation' && e.result === 'pdb_blocked')));
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(((await getPod(cp.kube, p))?.['metadata'] as { deletionTimestamp?: string }).deletionTimestamp, undefined);
  });

  it('the halt rule holds back remediation when 60% of the pods fail at once', async () => {
    const ns = await namespace();
    await cp.kube.create(policiesPath(ns), policy(ns, 'halt', { liveness: { action: 'Delete', probe: fastHttp }, remediation: { maxUnavailable: 5, haltAbovePercentFailing: 50 } }));
    const all = await Promise.all([0, 1, 2, 3, 4].map((i) => pod(ns, `halt-${i}`, { labels: { app: 'halt' } })));
    const c = controllerFor(ns);
    await waitFor('probed', () => Promise.resolve(all.every((p) => p.hits > 0)));
    for (const p of all.slice(0, 3)) p.healthy = false;
    const halted = await waitFor('RemediationHalted', async () => {
      const cond = statusCondition(await policyStatus(ns, 'halt'), 'RemediationHalted');
      return cond?.status === 'True' ? cond : undefined;
    });
    assert.match(halted.message, /3 of 5/);
    await new Promise((r) => setTimeout(r, 1500));
    for (const p of all) assert.equal(((await getPod(cp.kube, p))?.['metadata'] as { deletionTimestamp?: string }).deletionTimestamp, undefined);
    assert.ok(!c.events.some((e) => e.type === 'remediation' && (e.result === 'deleted' || e.result === 'evicted')));
  });

  it('maxUnavailable defers a second remediation while another pod is unavailable', async () => {
    const ns = await namespace();
    await cp.kube.create(policiesPath(ns), policy(ns, 'budget', { liveness: { action: 'Delete', probe: fastHttp }, remediation: { maxUnavailable: 1, haltAbovePercentFailing: 100 } }));
    const all = await Promise.all([0, 1, 2, 3].map((i) => pod(ns, `budget-${i}`, { labels: { app: 'budget' } })));
    const c = controllerFor(ns);
    await waitFor('probed', () => Promise.resolve(all.every((p) => p.hits > 0)));
    all[0]!.healthy = false;
    all[1]!.healthy = false;
    await waitFor('one deleted', () => Promise.resolve(c.events.filter((e) => e.type === 'remediation' && e.result === 'deleted').length === 1));
    await waitFor('one deferred', () => Promise.resolve(c.events.some((e) => e.type === 'remediation' && e.result === 'skipped_budget')));
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(c.events.filter((e) => e.type === 'remediation' && e.result === 'deleted').length, 1);
  });

  it('a recreated pod of the same name is never touched by a stale action', async () => {
    const ns = await namespace();
    await cp.kube.create(policiesPath(ns), policy(ns, 'same', { liveness: { action: 'Delete', probe: fastHttp }, remediation: { maxUnavailable: 0, haltAbovePercentFailing: 100 } }));
    const first = await pod(ns, 'same-0', { labels: { app: 'same' } });
    const c = controllerFor(ns);
    first.healthy = false;
    await waitFor('deferred by maxUnavailable 0', () => Promise.resolve(c.events.some((e) => e.type === 'remediation' && e.result === 'skipped_budget')));
    await cp.kube.must('DELETE', `/api/v1/namespaces/${ns}/pods/same-0`, { gracePeriodSeconds: 0 });
    await first.close();
    const second = await pod(ns, 'same-0', { labels: { app: 'same' } });
    await mergePatch(cp.kube, `${policiesPath(ns)}/same`, { spec: { remediation: { maxUnavailable: 1 } } });
    await new Promise((r) => setTimeout(r, 2500));
    const now = await getPod(cp.kube, second);
    assert.equal((now?.['metadata'] as { uid: string }).uid, second.uid);
    assert.equal((now?.['metadata'] as { deletionTimestamp?: string }).deletionTimestamp, undefined);
  });

  it('Observe mode changes nothing on pods and reports what it would do', async () => {
    const ns = await namespace();
    await cp.kube.create(policiesPath(ns), policy(ns, 'obs', { mode: 'Observe', readiness: { conditionType: gate, probe: fastHttp }, liveness: { probe: fastHttp }, remediation: { haltAbovePercentFailing: 100 } }));
    const p = await pod(ns, 'obs-0', { labels: { app: 'obs' }, gate });
    await pod(ns, 'obs-1', { labels: { app: 'obs' }, gate });
    const before = await getPod(cp.kube, p);
    const c = controllerFor(ns);
    await waitFor('probed', () => Promise.resolve(p.hits > 0));
    p.healthy = false;
    await waitFor('would-remediate report', () => Promise.resolve(c.events.some((e) => e.type === 'remediation' && e.result === 'observe')));
    const afterObj = await getPod(cp.kube, p);
    assert.equal((afterObj?.['metadata'] as { resourceVersion: string }).resourceVersion, (before?.['metadata'] as { resourceVersion: string }).resourceVersion);
    assert.equal(conditionOf(afterObj, gate), undefined);
    assert.ok(c.events.some((e) => e.type === 'gate-skipped' && e.why === 'observe'));
    assert.ok(!c.events.some((e) => e.type === 'gate-write'));
  });

  it('a restarted controller keeps existing conditions and writes nothing in steady state', async () => {
    const ns = await namespace();
    await cp.kube.create(policiesPath(ns), policy(ns, 'rs', { readiness: { conditionType: gate, probe: { ...fastHttp, successThreshold: 3 } } }));
    const p = await pod(ns, 'rs-0', { labels: { app: 'rs' }, gate });
    const first = controllerFor(ns);
    await waitFor('gate True', async () => conditionOf(await getPod(cp.kube, p), gate)?.status === 'True');
    await first.stop();
    const rv = ((await getPod(cp.kube, p))?.['metadata'] as { resourceVersion: string }).resourceVersion;
    const second = controllerFor(ns);
    await waitFor('probed by the new controller', async () => {
      const before = p.hits;
      await new Promise((r) => setTimeout(r, 1200));
      return p.hits > before;
    });
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(((await getPod(cp.kube, p))?.['metadata'] as { resourceVersion: string }).resourceVersion, rv, 'no write after restart');
    assert.ok(!second.events.some((e) => e.type === 'gate-write'));
    // A container restart resets the instance: readiness goes False then True after 3 successes.
    await restartContainer(cp.kube, p, 1);
    await waitFor('gate False for the new instance', async () => conditionOf(await getPod(cp.kube, p), gate)?.status === 'False', 5000, 50);
    await waitFor('gate True after 3 successes', async () => conditionOf(await getPod(cp.kube, p), gate)?.status === 'True', 8000, 50);
  });

  // Last: it restarts the API server under every other test's feet.
  it('a kube-apiserver restart loses no transition and flips no condition wrongly', async () => {
    const ns = await namespace();
    await cp.kube.create(policiesPath(ns), policy(ns, 'api', { readiness: { conditionType: gate, probe: fastHttp } }));
    const steady = await pod(ns, 'api-0', { labels: { app: 'api' }, gate });
    const flipped = await pod(ns, 'api-1', { labels: { app: 'api' }, gate });
    const c = controllerFor(ns);
    await waitFor('both gated True', async () => conditionOf(await getPod(cp.kube, steady), gate)?.status === 'True' && conditionOf(await getPod(cp.kube, flipped), gate)?.status === 'True');
    const api = cp.components.find((x) => x.name === 'kube-apiserver');
    assert.ok(api !== undefined);
    const argv = readFileSync(`/proc/${api.pid}/cmdline`, 'utf8').split('\0').filter((a) => a !== '');
    process.kill(api.pid, 'SIGKILL'); // a crash: no graceful drain of watches
    await waitFor('kube-apiserver stopped', () => Promise.resolve(!isAlive(api.pid)), 30_000);
    // While the API server is down the pod turns unhealthy: the transition must survive.
    flipped.healthy = false;
    await waitFor('the controller saw the failure', () => Promise.resolve(c.events.some((e) => e.type === 'transition' && e.pod.name === 'api-1' && e.transition.to === 'failure')), 10_000);
    await new Promise((r) => setTimeout(r, 2000));
    const log = openSync(`${cp.dir}/logs/kube-apiserver-restarted.log`, 'a');
    const restarted = spawn(argv[0] ?? '', argv.slice(1), { stdio: ['ignore', log, log] });
    extraPids.push(restarted.pid ?? 0);
    await waitFor('kube-apiserver back', async () => (await cp.kube.call('GET', '/readyz')).status === 200, 60_000, 250);
    await waitFor('the failure written after the restart', async () => conditionOf(await getPod(cp.kube, flipped), gate)?.status === 'False', 30_000);
    assert.equal(conditionOf(await getPod(cp.kube, steady), gate)?.status, 'True', 'the healthy pod never flipped');
    flipped.healthy = true;
    await waitFor('back to True', async () => conditionOf(await getPod(cp.kube, flipped), gate)?.status === 'True', 15_000);
    const steadyTransitions = c.events.flatMap((e) => (e.type === 'transition' && e.pod.name === 'api-0' ? [`${e.transition.cause}:${String(e.transition.from)}->${e.transition.to}`] : []));
    assert.deepEqual(steadyTransitions, ['initial:null->failure', 'probe:failure->success'], 'no flip for the steady pod');
  });
});
