// docs/adoption.md "Adopt in three steps", run as written against a real kube-apiserver
// with the controller in-process: step 1's chart install is exercised by
// test/e2e/chart.test.ts (here the CRD is installed from crds/, as the chart
// does); steps 2 and 3 are that page's kubectl commands, verbatim.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { startControlPlane } from '../support/cluster/index.ts';
import type { ControlPlane } from '../support/cluster/index.ts';
import { installCrd, startController } from './support/controller.ts';
import type { RunningController } from './support/controller.ts';
import { createFakePod, waitFor } from './support/fake-kubelet.ts';
import type { FakePod } from './support/fake-kubelet.ts';
import { logsOnFailure } from '../support/replicas/index.ts';

const repo = fileURLToPath(new URL('../../', import.meta.url));

describe('docs/adoption.md: adopt in three steps', () => {
  const logs = logsOnFailure('adopt');
  let cp: ControlPlane;
  let c: RunningController | undefined;
  const pods: FakePod[] = [];
  const kubectl = (...args: string[]): string => {
    const r = spawnSync(cp.binaries.kubectl, ['--kubeconfig', cp.kubeconfigPath, ...args], { encoding: 'utf8', cwd: repo, timeout: 30_000 });
    assert.equal(r.status, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  /** The row of policy `name` in `kubectl get probepolicies -n shop`, by column. */
  const row = (name: string): Record<string, string> => {
    const [header = '', ...rows] = kubectl('get', 'probepolicies', '-n', 'shop').trim().split('\n');
    const names = header.split(/\s+/);
    const values = rows.map((r) => r.split(/\s+/)).find((v) => v[0] === name) ?? [];
    return Object.fromEntries(names.map((n, i) => [n, values[i] ?? '']));
  };

  logs.setup(async () => {
    cp = await startControlPlane({ log: () => undefined });
    logs.plane(cp);
    // Step 1 (helm install) puts the CRD in place: the same file.
    await installCrd(cp.kube);
  });
  logs.teardown(async () => {
    await c?.stop();
    await Promise.all(pods.map((p) => p.close()));
    await cp.stop();
  });

  it('step 2: label the namespace and apply the Observe-mode fromContainer policy', async () => {
    kubectl('create', 'namespace', 'shop');
    kubectl('label', 'namespace', 'shop', 'outprobe.io/inject-readiness-gates=enabled');
    assert.match(kubectl('apply', '-f', 'examples/adopt-observe-from-container.yaml'), /probepolicy.outprobe.io\/web-observe created/);
    // Two pods with their own readinessProbe, both ready according to their node (ContainersReady True);
    // web-1 does not answer outprobe (what a pod cut off from other nodes looks like from outside).
    const readinessProbe = { httpGet: { path: '/ready', port: 'http' }, periodSeconds: 1, failureThreshold: 2 };
    for (const name of ['web-0', 'web-1']) pods.push(await createFakePod(cp.kube, 'shop', name, { labels: { app: 'web' }, container: { readinessProbe } }));
    const [, unreachable] = pods;
    assert.ok(unreachable !== undefined);
    unreachable.healthy = false;
    c = startController(cp.kubeconfigPath, 'shop', { log: logs.logger('controller') });
  });

  it('step 3: kubectl get probepolicies shows the divergent pod, and its Event says why', async () => {
    const r = await waitFor('DIVERGED 1', () => {
      const got = row('web-observe');
      return Promise.resolve(got['DIVERGED'] === '1' ? got : undefined);
    });
    assert.deepEqual([r['STATUS'], r['MODE'], r['PODS'], r['PODS-READY']], ['Probing', 'Observe', '2', '0']);
    const events = kubectl('get', 'events', '-n', 'shop', '--field-selector', 'reason=ReachabilityDiverged');
    assert.match(events, /pod\/web-1\s+ProbePolicy web-observe, container web: node says ready \(ContainersReady=True\), outprobe's readiness probe fails from replica outprobe: HTTP probe failed with statuscode: 503/);
    assert.doesNotMatch(events, /pod\/web-0/);
  });
});
