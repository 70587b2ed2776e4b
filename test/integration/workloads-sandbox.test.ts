// The simulated workloads with a sandbox provider, against a real kube-apiserver:
// pods whose status says Running with a 198.18.0.0/15 IP are served inside the
// network namespace the provider returns, through podserve; deleting a pod
// removes its listeners and detaches its sandbox. The provider here is the
// test's own (namespaces op-ps-<pid>-w<i>, veths ops<pid>w<i>, a bridge
// ops<pid>wb with 198.19.252.1/24, all removed in `after`). Needs root.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startControlPlane } from '../support/cluster/index.ts';
import type { ControlPlane } from '../support/cluster/index.ts';
import { httpStatus, tcpConnects } from '../support/workloads/clients.ts';
import { startWorkloads } from '../support/workloads/index.ts';
import type { SandboxPod, SandboxProvider, Workloads } from '../support/workloads/index.ts';
import { logsOnFailure } from '../support/replicas/index.ts';

const PID = process.pid;
const NS = 'sandboxed';
const BRIDGE = `ops${PID}wb`;

function ip(args: readonly string[], input?: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = execFile('ip', args, (err, _out, stderr) => { if (err === null) resolve(); else reject(new Error(`ip ${args.join(' ')}: ${stderr}`)); });
    // `ip` may exit before it reads its input (a plain command never reads it):
    // the write then fails with EPIPE, which the exit status already reports.
    child.stdin?.on('error', () => undefined);
    if (input !== undefined) child.stdin?.end(input); else child.stdin?.end();
  });
}

/** One namespace per pod IP (198.19.252.x), its eth0 on the test's bridge. */
class TestSandboxes implements SandboxProvider {
  readonly attached = new Map<string, SandboxPod>();
  readonly detached: string[] = [];
  readonly made = new Set<string>();

  name(podIp: string): string { return `op-ps-${PID}-w${podIp.split('.')[3] ?? ''}`; }

  async attach(pod: SandboxPod): Promise<{ netnsPath?: string }> {
    const n = this.name(pod.ip);
    const veth = `ops${PID}w${pod.ip.split('.')[3] ?? ''}`;
    this.made.add(n);
    await ip(['-batch', '-'], `netns add ${n}\nlink add ${veth} type veth peer name eth0 netns ${n}\nlink set ${veth} master ${BRIDGE}\nlink set ${veth} up\n`);
    await ip(['-n', n, '-batch', '-'], `addr add ${pod.ip}/24 dev eth0\nlink set eth0 up\nlink set lo up\n`);
    this.attached.set(pod.ip, pod);
    return { netnsPath: `/run/netns/${n}` };
  }

  async detach(podIp: string): Promise<void> {
    this.detached.push(podIp);
    this.made.delete(this.name(podIp));
    await ip(['netns', 'del', this.name(podIp)]);
  }

  async cleanup(): Promise<void> {
    const lines = [...this.made].map((n) => `netns del ${n}`);
    this.made.clear();
    await ip(['-force', '-batch', '-'], `${[...lines, `link del ${BRIDGE}`].join('\n')}\n`).catch(() => undefined);
  }
}

async function until<T>(what: string, f: () => T | undefined, timeoutMs = 10_000): Promise<T> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline;) {
    const v = f();
    if (v !== undefined) return v;
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

void describe('workloads with a sandbox provider', { skip: process.getuid?.() === 0 ? false : 'needs root for ip netns' }, () => {
  const logs = logsOnFailure('workloads-sandbox');
  let cp: ControlPlane;
  let workloads: Workloads | undefined;
  const sandboxes = new TestSandboxes();

  logs.setup(async () => {
    await ip(['-batch', '-'], `link add ${BRIDGE} type bridge\naddr add 198.19.252.1/24 dev ${BRIDGE}\nlink set ${BRIDGE} up\n`);
    cp = await startControlPlane({ log: () => undefined });
    logs.plane(cp);
    await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  });
  logs.teardown(async () => {
    await workloads?.stop();
    await cp.stop();
    await sandboxes.cleanup();
  });

  const createRunningPod = async (name: string, podIp: string): Promise<void> => {
    await cp.kube.create(`/api/v1/namespaces/${NS}/pods`, {
      apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: NS, labels: { app: 'web' } },
      spec: { nodeName: 'node-3', containers: [{ name: 'web', image: 'example/web:1', ports: [{ name: 'http', containerPort: 8080 }, { name: 'tcp', containerPort: 9000 }] }] },
    });
    const r = await cp.kube.call('PATCH', `/api/v1/namespaces/${NS}/pods/${name}/status`,
      { status: { phase: 'Running', podIP: podIp, podIPs: [{ ip: podIp }] } }, 'application/merge-patch+json');
    assert.equal(r.status, 200, JSON.stringify(r.body));
  };

  void test('serves Running pod-network pods inside the namespaces the provider returns, and detaches deleted ones', async () => {
    const w = startWorkloads({ kube: cp.kube, namespace: NS, labelSelector: 'app=web', sandbox: sandboxes });
    workloads = w;
    await createRunningPod('web-a', '198.19.252.10');
    await createRunningPod('web-b', '198.19.252.11');
    await createRunningPod('web-loop', '127.93.0.5'); // not a pod-network IP: never served with a provider
    assert.deepEqual(await w.waitServing(2, 20_000), ['web-a', 'web-b']);

    const a = w.server('web-a')!;
    assert.equal(a.netnsPath, `/run/netns/${sandboxes.name('198.19.252.10')}`);
    assert.deepEqual(sandboxes.attached.get('198.19.252.10'), { name: 'web-a', uid: sandboxes.attached.get('198.19.252.10')!.uid, ip: '198.19.252.10', nodeName: 'node-3' });
    assert.equal(await httpStatus('198.19.252.10', 8080), 200);
    assert.equal(await tcpConnects('198.19.252.11', 9000), true);

    await w.setHealthy('web-a', false);
    assert.equal(a.healthy, false);
    assert.equal(await httpStatus('198.19.252.10', 8080), 503);
    assert.equal(await tcpConnects('198.19.252.10', 9000), false);
    assert.equal(await httpStatus('198.19.252.11', 8080), 200, 'the other pod stays healthy');
    assert.equal(await a.httpRequests(), 2);

    await cp.kube.delete(`/api/v1/namespaces/${NS}/pods/web-b`, { gracePeriodSeconds: 0 });
    await until('web-b dropped', () => (w.servedPods().includes('web-b') ? undefined : true));
    await until('web-b detached', () => (sandboxes.detached.includes('198.19.252.11') ? true : undefined));
    assert.equal(await tcpConnects('198.19.252.11', 8080), false);
    assert.deepEqual(w.servedPods(), ['web-a']);
  });
});
