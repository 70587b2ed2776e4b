import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startControlPlane } from '../support/cluster/index.ts';
import type { ControlPlane } from '../support/cluster/index.ts';
import { installCrd, startController } from './support/controller.ts';
import type { RunningController } from './support/controller.ts';
import { conditionOf, createFakePod, waitFor } from './support/fake-kubelet.ts';
import type { FakePod } from './support/fake-kubelet.ts';
import { logsOnFailure } from '../support/replicas/index.ts';

/**
 * The panic threshold (issue 13 deliver 1, ADR 0015) against a real
 * kube-apiserver: ten gated pods served on 127.x loopback addresses, one
 * in-process controller, default maxUnreadyPercent (50).
 */
const gate = 'outprobe.io/web';
const policiesPath = (ns: string): string => `/apis/outprobe.io/v1alpha1/namespaces/${ns}/probepolicies`;
const fastHttp = { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 1, failureThreshold: 2, timeoutSeconds: 1 };

type Gate = { status: string; reason?: string; message?: string } | undefined;

describe('panic threshold against a real kube-apiserver', () => {
  const logs = logsOnFailure('panic');
  let cp: ControlPlane;
  const pods: FakePod[] = [];
  const running: RunningController[] = [];
  let nsCount = 0;

  logs.setup(async () => {
    cp = await startControlPlane({ log: () => undefined });
    logs.plane(cp);
    await installCrd(cp.kube);
  });
  logs.teardown(async () => {
    await Promise.all(running.map((c) => c.stop()));
    await Promise.all(pods.map((p) => p.close()));
    await cp.stop();
  });

  /** A namespace with the policy and ten gated pods, and a controller that has turned all ten True. */
  async function tenGatedPods(): Promise<{ ns: string; web: FakePod[]; c: RunningController }> {
    const ns = `panic${++nsCount}-${Date.now().toString(36)}`;
    await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await cp.kube.create(policiesPath(ns), {
      apiVersion: 'outprobe.io/v1alpha1',
      kind: 'ProbePolicy',
      metadata: { name: 'web', namespace: ns },
      spec: { selector: { matchLabels: { app: 'web' } }, readiness: { conditionType: gate, probe: fastHttp } },
    });
    const web: FakePod[] = [];
    for (let i = 0; i < 10; i++) web.push(await createFakePod(cp.kube, ns, `web-${i}`, { labels: { app: 'web' }, gate }));
    pods.push(...web);
    const c = startController(cp.kubeconfigPath, ns, { log: logs.logger(`controller-${ns}`) });
    running.push(c);
    await waitFor('all ten gates True', async () => (await gates(ns)).every((g) => g?.status === 'True'), 20_000);
    return { ns, web, c };
  }

  async function gates(ns: string): Promise<Gate[]> {
    const list = (await cp.kube.get(`/api/v1/namespaces/${ns}/pods`))['items'] as Record<string, unknown>[];
    assert.equal(list.length, 10);
    return list.map((p) => conditionOf(p, gate));
  }
  async function panicCondition(ns: string): Promise<{ status: string; reason: string; message: string } | undefined> {
    const status = ((await cp.kube.get(`${policiesPath(ns)}/web`))['status'] ?? {}) as { conditions?: { type: string; status: string; reason: string; message: string }[] };
    return status.conditions?.find((x) => x.type === 'ReadinessPanic');
  }
  async function policyEvents(ns: string): Promise<{ reason: string; message: string }[]> {
    const items = (await cp.kube.get(`/api/v1/namespaces/${ns}/events`))['items'] as { reason: string; message: string; involvedObject: { kind: string } }[];
    return items.filter((e) => e.involvedObject.kind === 'ProbePolicy');
  }

  it('all ten fail: at most 5 held False, the rest kept True with PanicFailOpen; ReadinessPanic and Events; recovery ends it', async () => {
    const { ns, web, c } = await tenGatedPods();
    for (const p of web) p.healthy = false;
    let maxFalse = 0;
    const settled = await waitFor('5 False and 5 failed open', async () => {
      const g = await gates(ns);
      const falses = g.filter((x) => x?.status === 'False').length;
      maxFalse = Math.max(maxFalse, falses);
      const open = g.filter((x) => x?.status === 'True' && x.reason === 'PanicFailOpen').length;
      return falses === 5 && open === 5 ? g : undefined;
    }, 20_000, 50);
    // Stays so for a few more periods, never above the threshold.
    const until = Date.now() + 3000;
    while (Date.now() < until) {
      const g = await gates(ns);
      maxFalse = Math.max(maxFalse, g.filter((x) => x?.status === 'False').length);
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(maxFalse, 5, 'never more than 50% of the 10 gated pods False');
    assert.ok(settled.filter((x) => x?.status === 'False').every((x) => x?.reason === 'ProbeFailed'));
    const open = settled.find((x) => x?.reason === 'PanicFailOpen');
    assert.match(open?.message ?? '', /^outprobe fails open \(ProbePolicy panic\d+-[a-z0-9]+\/web\): ([6-9]|10) of 10 gated pods fail readiness; at most 50% \(5\) may be held unready: failing open .*Readiness probe failed: HTTP probe failed with statuscode: 503$/);
    const cond = await waitFor('ReadinessPanic True', async () => {
      const x = await panicCondition(ns);
      return x?.status === 'True' ? x : undefined;
    });
    assert.equal(cond.reason, 'FailingOpen');
    assert.equal(cond.message, '10 of 10 gated pods fail readiness; at most 50% (5) may be held unready: failing open (5 held unready, 5 kept ready)');
    const message = (((await cp.kube.get(`${policiesPath(ns)}/web`))['status'] ?? {}) as { message?: string }).message;
    assert.match(message ?? '', /^Readiness panic: 10\/10 gated pods fail readiness, 5 held unready, 5 kept ready/);
    await waitFor('ReadinessPanic Event', async () => (await policyEvents(ns)).some((e) => e.reason === 'ReadinessPanic'));
    const metrics = await c.metrics.text();
    assert.match(metrics, /outprobe_readiness_panic\{namespace="panic\d+-[a-z0-9]+",policy="[^"]+\/web"\} 1/);
    assert.match(metrics, /outprobe_readiness_failing_pods\{[^}]*state="failed_open"\} 5/);

    for (const p of web) p.healthy = true;
    await waitFor('all ten True with ProbeSucceeded', async () => (await gates(ns)).every((g) => g?.status === 'True' && g.reason === 'ProbeSucceeded'), 20_000, 50);
    await waitFor('ReadinessPanic False', async () => (await panicCondition(ns))?.status === 'False');
    await waitFor('ReadinessPanicEnded Event', async () => (await policyEvents(ns)).some((e) => e.reason === 'ReadinessPanicEnded'));
    assert.match(await c.metrics.text(), /outprobe_readiness_panic\{[^}]*\} 0/);
  });

  it('two of ten fail: exactly those two False, no panic', async () => {
    const { ns, web, c } = await tenGatedPods();
    const failing = web.slice(3, 5);
    for (const p of failing) p.healthy = false;
    await waitFor('two False', async () => (await gates(ns)).filter((g) => g?.status === 'False').length === 2, 20_000, 50);
    await new Promise((r) => setTimeout(r, 2500)); // a few more periods: still exactly those two
    const list = (await cp.kube.get(`/api/v1/namespaces/${ns}/pods`))['items'] as { metadata: { name: string } }[];
    const falses = list.filter((p) => conditionOf(p as unknown as Record<string, unknown>, gate)?.status === 'False').map((p) => p.metadata.name).sort();
    assert.deepEqual(falses, failing.map((p) => p.name).sort());
    assert.ok(!(await gates(ns)).some((g) => g?.reason === 'PanicFailOpen'));
    await waitFor('ReadinessPanic False, WithinThreshold', async () => {
      const x = await panicCondition(ns);
      return x?.status === 'False' && x.reason === 'WithinThreshold' && x.message.startsWith('2 of 10 gated pods fail readiness');
    });
    assert.ok(!(await policyEvents(ns)).some((e) => e.reason === 'ReadinessPanic'));
    assert.ok(!c.events.some((e) => e.type === 'readiness-panic' && e.panic));
  });
});
