import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startControlPlane } from '../support/cluster/index.ts';
import type { ControlPlane } from '../support/cluster/index.ts';
import { installCrd, startController } from './support/controller.ts';
import type { RunningController } from './support/controller.ts';
import { conditionOf, createFakePod, getPod, waitFor } from './support/fake-kubelet.ts';
import type { FakePod, FakePodOptions } from './support/fake-kubelet.ts';
import { logsOnFailure } from '../support/replicas/index.ts';

/**
 * fromContainer (issue 15, ADR 0023) against a real kube-apiserver: the pods
 * declare their own readiness probe in their spec, the policy names it, and
 * the test reads what the pods' servers were asked for.
 */
const gate = 'outprobe.io/web';
const policiesPath = (ns: string): string => `/apis/outprobe.io/v1alpha1/namespaces/${ns}/probepolicies`;

const readinessProbe = (path: string): Record<string, unknown> => ({
  readinessProbe: { httpGet: { path, port: 'http' }, periodSeconds: 1, failureThreshold: 2, timeoutSeconds: 1 },
});

function fromContainerPolicy(ns: string, probe: Record<string, unknown> = {}, mode = 'Enforce'): Record<string, unknown> {
  return {
    apiVersion: 'outprobe.io/v1alpha1',
    kind: 'ProbePolicy',
    metadata: { name: 'web', namespace: ns },
    spec: { selector: { matchLabels: { app: 'web' } }, mode, readiness: { conditionType: gate, maxUnreadyPercent: 100, probe: { fromContainer: 'readinessProbe', ...probe } } },
  };
}

describe('fromContainer against a real kube-apiserver', () => {
  const logs = logsOnFailure('from-container');
  let cp: ControlPlane;
  const pods: FakePod[] = [];
  const running: RunningController[] = [];
  let nsCount = 0;

  async function namespace(): Promise<string> {
    const ns = `fc${++nsCount}-${Date.now().toString(36)}`;
    await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    return ns;
  }
  async function pod(ns: string, name: string, o: FakePodOptions): Promise<FakePod> {
    const p = await createFakePod(cp.kube, ns, name, o);
    pods.push(p);
    return p;
  }
  function controllerFor(ns: string): RunningController {
    const c = startController(cp.kubeconfigPath, ns, { log: logs.logger(`controller-${ns}`) });
    running.push(c);
    return c;
  }
  async function policyStatus(ns: string): Promise<Record<string, unknown>> {
    return ((await cp.kube.get(`${policiesPath(ns)}/web`))['status'] ?? {}) as Record<string, unknown>;
  }
  async function events(ns: string): Promise<{ reason: string; message: string; type: string; involvedObject: { kind: string; name: string } }[]> {
    return (await cp.kube.get(`/api/v1/namespaces/${ns}/events`))['items'] as never;
  }

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

  it('the API server refuses fromContainer together with a handler', async () => {
    const ns = await namespace();
    const bad = fromContainerPolicy(ns, { httpGet: { port: 8080 } });
    const r = await cp.kube.call('POST', policiesPath(ns), bad);
    assert.equal(r.status, 422, JSON.stringify(r.body).slice(0, 400));
    assert.match(JSON.stringify(r.body), /fromContainer runs the container's own probe: it may not be set together with a handler/);
  });

  it("probes with the container's own readiness probe, and stores only the fields the policy wrote", async () => {
    const ns = await namespace();
    await cp.kube.create(policiesPath(ns), fromContainerPolicy(ns, { failureThreshold: 1 }));
    const stored = await cp.kube.get(`${policiesPath(ns)}/web`);
    assert.deepEqual((stored['spec'] as { readiness: { probe: unknown } }).readiness.probe, { fromContainer: 'readinessProbe', failureThreshold: 1 });
    const p = await pod(ns, 'web-0', { labels: { app: 'web' }, gate, container: readinessProbe('/own-ready') });
    controllerFor(ns);
    await waitFor('gate True', async () => conditionOf(await getPod(cp.kube, p), gate)?.status === 'True');
    assert.ok(p.paths.length > 0 && p.paths.every((path) => path === '/own-ready'), p.paths.join(','));
    // failureThreshold 1 (the policy's) over the container's 2: one failed probe turns the gate False.
    p.healthy = false;
    const down = await waitFor('gate False', async () => {
      const c = conditionOf(await getPod(cp.kube, p), gate);
      return c?.status === 'False' ? c : undefined;
    });
    assert.equal(down.message, 'Readiness probe failed: HTTP probe failed with statuscode: 503');
  });

  it('a container without the probe: no target, Degraded and a ContainerProbeUnavailable Event naming pod, container and probe', async () => {
    const ns = await namespace();
    await cp.kube.create(policiesPath(ns), fromContainerPolicy(ns));
    const p = await pod(ns, 'web-0', { labels: { app: 'web' }, gate, container: { livenessProbe: { tcpSocket: { port: 'http' } } } });
    const c = controllerFor(ns);
    const degraded = await waitFor('Degraded True', async () => {
      const cond = ((await policyStatus(ns))['conditions'] as { type: string; status: string; reason: string; message: string }[] | undefined)?.find((x) => x.type === 'Degraded');
      return cond?.status === 'True' ? cond : undefined;
    });
    assert.equal(degraded.reason, 'ContainerProbeUnavailable');
    assert.match(degraded.message, new RegExp(`container "web" of pod ${ns}/web-0: declares no readinessProbe`));
    const event = await waitFor('ContainerProbeUnavailable Event', async () => (await events(ns)).find((e) => e.reason === 'ContainerProbeUnavailable'));
    assert.equal(event.type, 'Warning');
    assert.deepEqual([event.involvedObject.kind, event.involvedObject.name], ['Pod', 'web-0']);
    assert.match(event.message, /ProbePolicy web: readiness probe: container "web" of pod .*: declares no readinessProbe/);
    assert.equal(c.controller.targets.size, 0, 'nothing is guessed');
    assert.equal(p.hits, 0);
    assert.equal(conditionOf(await getPod(cp.kube, p), gate), undefined, 'no gate written');
  });

  it("a pod's own probe with host set is refused, never aimed elsewhere: not probed, Degraded and the Event say why", async () => {
    const ns = await namespace();
    await cp.kube.create(policiesPath(ns), fromContainerPolicy(ns));
    // The API server accepts host on a Pod's probe (only Pod Security baseline forbids it); outprobe does not.
    const p = await pod(ns, 'web-0', { labels: { app: 'web' }, gate, container: { readinessProbe: { httpGet: { path: '/x', port: 'http', host: '169.254.169.254' }, periodSeconds: 1 } } });
    const c = controllerFor(ns);
    const degraded = await waitFor('Degraded True', async () => {
      const cond = ((await policyStatus(ns))['conditions'] as { type: string; status: string; reason: string; message: string }[] | undefined)?.find((x) => x.type === 'Degraded');
      return cond?.status === 'True' ? cond : undefined;
    });
    assert.equal(degraded.reason, 'ContainerProbeUnavailable');
    assert.match(degraded.message, /its readinessProbe cannot be run from outside: httpGet\.host: host is not allowed: outprobe always probes the pod's own IP/);
    const event = await waitFor('ContainerProbeUnavailable Event', async () => (await events(ns)).find((e) => e.reason === 'ContainerProbeUnavailable'));
    assert.match(event.message, /httpGet\.host: host is not allowed/);
    assert.equal(c.controller.targets.size, 0);
    assert.equal(p.hits, 0);
  });

  it('a roll to pods with a changed probe: the new pods are probed with the new probe', async () => {
    const ns = await namespace();
    await cp.kube.create(policiesPath(ns), fromContainerPolicy(ns));
    const v1 = [await pod(ns, 'web-v1-a', { labels: { app: 'web' }, gate, container: readinessProbe('/v1') }), await pod(ns, 'web-v1-b', { labels: { app: 'web' }, gate, container: readinessProbe('/v1') })];
    controllerFor(ns);
    for (const p of v1) await waitFor(`${p.name} True`, async () => conditionOf(await getPod(cp.kube, p), gate)?.status === 'True');
    // The Deployment rolls (what its ReplicaSets do, one pod at a time): a new pod with the changed probe, then the old one goes.
    const v2: FakePod[] = [];
    for (const [i, old] of v1.entries()) {
      const p = await pod(ns, `web-v2-${i}`, { labels: { app: 'web' }, gate, container: readinessProbe('/v2') });
      v2.push(p);
      await waitFor(`${p.name} True`, async () => conditionOf(await getPod(cp.kube, p), gate)?.status === 'True');
      await cp.kube.call('DELETE', `/api/v1/namespaces/${ns}/pods/${old.name}?gracePeriodSeconds=0`);
    }
    const before = v1.map((p) => p.hits);
    await new Promise((r) => setTimeout(r, 2500));
    for (const p of v2) assert.ok(p.paths.length > 0 && p.paths.every((x) => x === '/v2'), `${p.name}: ${p.paths.join(',')}`);
    for (const p of v1) assert.ok(p.paths.every((x) => x === '/v1'), `${p.name}: ${p.paths.join(',')}`);
    assert.deepEqual(v1.map((p) => p.hits), before, 'the old pods are no longer probed');
  });
});
