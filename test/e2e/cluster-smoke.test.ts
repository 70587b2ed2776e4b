// Smoke test of the local control plane (issue 3): full plane, a Deployment of 3
// simulated pods serving real endpoints (in their own network namespaces on the pod
// network when the machine supports it, ADR 0014; 127.x otherwise), health flipped
// per pod, deletion, teardown with no process, namespace, link or table left behind.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { isAlive, startControlPlane } from '../support/cluster/index.ts';
import type { KubeClient } from '../support/cluster/index.ts';
import type { PodNet } from '../support/podnet/index.ts';
import { sandboxFor, startWorkloads } from '../support/workloads/index.ts';
import { grpcHealth, httpStatus, tcpConnects } from '../support/workloads/clients.ts';
import { logsOnFailure } from '../support/replicas/index.ts';

const NS = 'smoke';

function deployment(): Record<string, unknown> {
  const labels = { app: 'web' };
  return {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: NS },
    spec: {
      replicas: 3, selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [{
            name: 'web', image: 'outprobe.invalid/web:1',
            ports: [{ name: 'http', containerPort: 8080 }, { name: 'tcp', containerPort: 9000 }, { name: 'grpc', containerPort: 9090 }],
          }],
        },
      },
    },
  };
}

interface Pod {
  metadata: { name: string };
  status?: { phase?: string; podIP?: string; containerStatuses?: { containerID?: string; started?: boolean; restartCount?: number; state?: { running?: { startedAt?: string } } }[] };
}

async function pods(kube: KubeClient): Promise<Pod[]> {
  const list = await kube.get(`/api/v1/namespaces/${NS}/pods?labelSelector=app%3Dweb`);
  return list['items'] as Pod[];
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 90_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
  }
}

/** kwok's stages must leave readiness-gate conditions to outprobe (control-plane.md §5.1). */
async function checkReadinessGateUntouched(kube: KubeClient): Promise<void> {
  const gate = 'outprobe.io/web';
  await kube.create(`/api/v1/namespaces/${NS}/pods`, {
    apiVersion: 'v1', kind: 'Pod', metadata: { name: 'gated', namespace: NS },
    spec: { readinessGates: [{ conditionType: gate }], containers: [{ name: 'c', image: 'outprobe.invalid/c:1' }] },
  });
  type Cond = { type: string; status: string; reason?: string };
  const conds = await until('gated pod Running', async () => {
    const p = await kube.get(`/api/v1/namespaces/${NS}/pods/gated`) as { status?: { phase?: string; conditions?: Cond[] } };
    return p.status?.phase === 'Running' ? p.status.conditions ?? [] : undefined;
  });
  assert.equal(conds.find((c) => c.type === gate), undefined, 'no stage writes the gate condition');
  // The node agent folds the missing gate into Ready with the kubelet's own message (kwok's is different).
  const ready = await until('Ready folded by the node agent', async () => {
    const p = await kube.get(`/api/v1/namespaces/${NS}/pods/gated`) as { status?: { conditions?: (Cond & { message?: string })[] } };
    const r = p.status?.conditions?.find((c) => c.type === 'Ready');
    return r?.message === `corresponding condition of pod readiness gate "${gate}" does not exist.` ? r : undefined;
  }, 10_000);
  assert.equal(ready.status, 'False');
  assert.equal(ready.reason, 'ReadinessGatesNotReady');
  await kube.delete(`/api/v1/namespaces/${NS}/pods/gated`, { gracePeriodSeconds: 0 });
}

/** A pod IP of the plane: in the pod network's node subnets, or a 127.x alias on the loopback plane. */
function onPodNetwork(net: PodNet | undefined, ip: string | undefined): boolean {
  if (ip === undefined) return false;
  if (net === undefined) return /^127\.\d+\.\d+\.\d+$/.test(ip) && ip !== '127.0.0.1';
  try {
    net.nodeOf(ip);
    return true;
  } catch {
    return false;
  }
}

/** Names of our run's namespaces, root links and root nftables tables still present. */
function leftovers(prefix: string): string[] {
  const out = (cmd: string, args: string[]): string => execFileSync(cmd, args, { encoding: 'utf8' });
  return [...out('ip', ['netns', 'list']).split('\n'), ...out('ip', ['-o', 'link']).split('\n'), ...out('nft', ['list', 'tables']).split('\n')]
    .filter((l) => l.includes(`${prefix}-`));
}

const logs = logsOnFailure('cluster-smoke');

void test('full control plane runs a Deployment of simulated pods with real endpoints', async (t) => {
  const cp = logs.plane(await startControlPlane({ full: true, log: (m) => { t.diagnostic(m); } }));
  t.diagnostic(`pod network: ${cp.podNetwork ?? 'none'} (${cp.net === undefined ? 'loopback' : `namespaces ${cp.net.prefix}-*`})`);
  const pids = cp.components.map((c) => c.pid);
  try {
    const { kube } = cp;
    await kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    const workloads = startWorkloads({ kube, namespace: NS, labelSelector: 'app=web', log: (m) => { t.diagnostic(m); }, ...sandboxFor(cp.net) });
    try {
      await kube.create(`/apis/apps/v1/namespaces/${NS}/deployments`, deployment());
      const running = await until(`3 Running pods with IPs of ${cp.podNetwork ?? ''}`, async () => {
        const ps = await pods(kube);
        const ok = ps.filter((p) => p.status?.phase === 'Running' && onPodNetwork(cp.net, p.status.podIP));
        return ok.length === 3 ? ok : undefined;
      });
      for (const p of running) {
        const cs = p.status?.containerStatuses?.[0];
        assert.ok(cs, 'container status present');
        assert.match(cs.containerID ?? '', /^kwok:\/\//);
        assert.equal(cs.started, true);
        assert.equal(cs.restartCount, 0);
        assert.ok(cs.state?.running?.startedAt);
      }
      await workloads.waitServing(3);
      const pod = running[0]!;
      const ip = pod.status!.podIP!;
      assert.equal(await httpStatus(ip, 8080), 200);
      assert.equal(await tcpConnects(ip, 9000), true);
      assert.equal(await grpcHealth(ip, 9090), 'SERVING');

      await workloads.setHealthy(pod.metadata.name, false);
      assert.equal(await httpStatus(ip, 8080), 503);
      assert.equal(await tcpConnects(ip, 9000), false);
      assert.equal(await grpcHealth(ip, 9090), 'NOT_SERVING');
      const other = running[1]!.status!.podIP!;
      assert.equal(await httpStatus(other, 8080), 200, 'other pods stay healthy');

      await checkReadinessGateUntouched(kube);

      await kube.delete(`/apis/apps/v1/namespaces/${NS}/deployments/web`, { propagationPolicy: 'Foreground' });
      await until('pods deleted', async () => ((await pods(kube)).length === 0 ? true : undefined));
      await until('servers stopped', () => Promise.resolve(workloads.servedPods().length === 0 ? true : undefined), 10_000);
      await assert.rejects(httpStatus(other, 8080), 'a deleted pod no longer serves');
    } finally {
      await workloads.stop();
    }
  } finally {
    await cp.stop();
  }
  assert.deepEqual(pids.filter(isAlive), [], 'no component process left behind');
  if (cp.net !== undefined) assert.deepEqual(leftovers(cp.net.prefix), [], 'no namespace, link or nftables table left behind');
  assert.equal(existsSync(cp.dir), false, 'state directory removed');
});
