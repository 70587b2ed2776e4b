// Gate writes on their own path (issue 17 item 1, ADR 0022) against a real
// kube-apiserver: 3,000 first-time gates through the adaptive, urgency-ordered
// queue, far above the old 50 writes/s; and a server that answers 429 (a tight
// --max-mutating-requests-inflight): the queue halves, waits out Retry-After,
// and every gate still lands.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { systemClock, systemRandom } from '../../src/kernel/index.ts';
import { KubeClient, connectionFor, fromKubeconfig } from '../../src/kube/index.ts';
import { GateWriter, WriteQueue, patchGateCondition } from '../../src/writeback/index.ts';
import type { GateCondition, GateWriteResult, PodRef, WriteOutcome } from '../../src/writeback/index.ts';
import { startControlPlane } from '../support/cluster/index.ts';
import type { ControlPlane } from '../support/cluster/index.ts';
import { logsOnFailure } from '../support/replicas/index.ts';

const conditionType = 'outprobe.io/web';
const trueCondition: GateCondition = { type: conditionType, status: 'True', reason: 'ProbeSucceeded', message: '', lastTransitionTime: '2026-11-25T09:00:00Z', lastProbeTime: '2026-11-25T09:00:00Z' };

/** CPU seconds (user + system) a process has used so far, from /proc (clock ticks of 10 ms). */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function apiserverPid(cp: ControlPlane): number {
  const c = cp.components.find((x) => x.name === 'kube-apiserver');
  assert.ok(c !== undefined);
  return c.pid;
}

async function createPods(client: KubeClient, ns: string, n: number): Promise<PodRef[]> {
  const pods: PodRef[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < n) {
      const i = next++;
      const created = await client.request<{ metadata: { uid: string; name: string } }>({
        method: 'POST',
        path: `/api/v1/namespaces/${ns}/pods`,
        body: {
          apiVersion: 'v1', kind: 'Pod',
          metadata: { name: `web-${i}` },
          spec: { containers: [{ name: 'web', image: 'registry.invalid/web:1' }], readinessGates: [{ conditionType }] },
        },
        retry: true,
      });
      pods.push({ namespace: ns, name: created.metadata.name, uid: created.metadata.uid });
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
  return pods;
}

async function gatesTrue(client: KubeClient, ns: string): Promise<number> {
  const list = await client.request<{ items: { status?: { conditions?: { type: string; status: string }[] } }[] }>({ method: 'GET', path: `/api/v1/namespaces/${ns}/pods` });
  return list.items.filter((p) => p.status?.conditions?.some((c) => c.type === conditionType && c.status === 'True') === true).length;
}

interface Run {
  readonly ms: number;
  readonly results: Map<GateWriteResult, number>;
  readonly outcomes: WriteOutcome[];
  readonly sends: number[];
  readonly pauses: { from: number; until: number }[];
  readonly limits: number[];
  readonly apiserverCpuS: number;
}

/** Desires a first-time True on every pod and waits until all are confirmed. */
async function writeAll(cp: ControlPlane, gateClient: KubeClient, pods: readonly PodRef[], maxInflight: number): Promise<Run> {
  const results = new Map<GateWriteResult, number>();
  const outcomes: WriteOutcome[] = [];
  const sends: number[] = [];
  const pauses: { from: number; until: number }[] = [];
  const limits: number[] = [];
  const queue: WriteQueue = new WriteQueue({
    clock: systemClock,
    maxInflight,
    onOutcome: (o) => {
      outcomes.push(o);
      limits.push(queue.limit);
      if (o.kind === 'throttled') pauses.push({ from: Date.now(), until: queue.pausedUntil });
    },
  });
  const writer = new GateWriter({
    clock: systemClock,
    queue,
    patch: (pod, condition) => {
      sends.push(Date.now());
      return patchGateCondition(gateClient, pod, condition, 'throw');
    },
    onWrite: (_pod, _c, result) => results.set(result, (results.get(result) ?? 0) + 1),
  });
  const pid = apiserverPid(cp);
  const cpu0 = cpuSeconds(pid);
  const started = Date.now();
  for (const pod of pods) writer.desire(pod, trueCondition, undefined);
  while (writer.pending > 0) {
    writer.sweep(); // failed writes (none expected) would be retried here, as the controller's step does
    await new Promise((r) => setTimeout(r, 20));
    assert.ok(Date.now() - started < 120_000, `still ${writer.pending} pending after 120 s`);
  }
  await writer.settled();
  return { ms: Date.now() - started, results, outcomes, sends, pauses, limits, apiserverCpuS: cpuSeconds(pid) - cpu0 };
}

describe('gate writes on their own path against a real kube-apiserver', () => {
  const logs = logsOnFailure('gate-write-throughput');
  let cp: ControlPlane;
  let client: KubeClient;
  const ns = `gates-${Date.now().toString(36)}`;
  const n = 3000;

  logs.setup(async () => {
    cp = await startControlPlane({ log: () => undefined });
    logs.plane(cp);
    client = new KubeClient({ connection: fromKubeconfig(cp.kubeconfigPath), clock: systemClock, random: systemRandom, qps: 2000, burst: 2000 });
    await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  });
  logs.teardown(async () => {
    await client.close();
    await cp.stop();
  });

  it('3,000 first-time gates land far faster than the old 50 writes/s', async () => {
    const pods = await createPods(client, ns, n);
    const gateClient = client.withRateLimit({ qps: 1000, burst: 1000, userAgent: 'outprobe-test/gates' });
    const run = await writeAll(cp, gateClient, pods, 64).finally(() => gateClient.close());
    const rate = (n / run.ms) * 1000;
    console.log(
      `${n} gates in ${run.ms} ms = ${rate.toFixed(0)} writes/s (old path: 50/s, ${n / 50} s); limit reached ${Math.max(...run.limits)}; ` +
        `kube-apiserver CPU ${run.apiserverCpuS.toFixed(2)} s = ${((run.apiserverCpuS / run.ms) * 1000 * 100).toFixed(0)} % of a core during the burst`,
    );
    assert.equal(run.results.get('written'), n);
    assert.equal(run.results.get('failed') ?? 0, 0);
    assert.equal(await gatesTrue(client, ns), n);
    assert.ok(rate > 150, `${rate.toFixed(0)} writes/s is not far above 50/s`);
    assert.equal(Math.max(...run.limits), 64, 'the limit grew to the ceiling');
  });
});

describe('gate writes against a kube-apiserver that answers 429 (--max-mutating-requests-inflight=2)', () => {
  const logs = logsOnFailure('gate-write-throughput-429');
  let cp: ControlPlane;
  let client: KubeClient;
  const ns = `gates429-${Date.now().toString(36)}`;
  // Few: a server that takes 2 writes at a time and asks for 1 s after each refusal writes about 5 gates/s.
  const n = 200;

  let token = '';

  logs.setup(async () => {
    cp = await startControlPlane({ log: () => undefined, apiserverArgs: ['--max-mutating-requests-inflight=2'] });
    logs.plane(cp);
    client = new KubeClient({ connection: fromKubeconfig(cp.kubeconfigPath), clock: systemClock, random: systemRandom, qps: 2000, burst: 2000 });
    await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await cp.kube.create(`/api/v1/namespaces/${ns}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'gates' } });
    await cp.kube.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`, {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'gates' },
      rules: [{ apiGroups: [''], resources: ['pods/status'], verbs: ['patch'] }],
    });
    await cp.kube.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'gates' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'gates' },
      subjects: [{ kind: 'ServiceAccount', name: 'gates', namespace: ns }],
    });
    const tr = await client.request<{ status: { token: string } }>({ method: 'POST', path: `/api/v1/namespaces/${ns}/serviceaccounts/gates/token`, body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } } });
    token = tr.status.token;
  });
  logs.teardown(async () => {
    await client.close();
    await cp.stop();
  });

  it('the queue halves on 429, sends nothing until Retry-After has passed, and every gate lands', async () => {
    const pods = await createPods(client, ns, n);
    // The max-in-flight filter never limits system:masters (the plane's admin): write as a ServiceAccount, as outprobe does.
    const gateClient = new KubeClient({ connection: connectionFor({ server: cp.server, caPem: readFileSync(join(cp.dir, 'pki', 'serving-ca.crt'), 'utf8'), token }), clock: systemClock, random: systemRandom, qps: 1000, burst: 1000, userAgent: 'outprobe-test/gates' });
    const run = await writeAll(cp, gateClient, pods, 64).finally(() => gateClient.close());
    const throttled = run.outcomes.filter((o) => o.kind === 'throttled');
    console.log(
      `${n} gates in ${run.ms} ms = ${((n / run.ms) * 1000).toFixed(0)} writes/s with ${throttled.length} 429s (Retry-After ${String(throttled[0]?.retryAfterMs)} ms), ` +
        `${run.pauses.length} pauses, limit between ${Math.min(...run.limits)} and ${Math.max(...run.limits)}; kube-apiserver CPU ${run.apiserverCpuS.toFixed(2)} s`,
    );
    assert.ok(throttled.length > 0, 'the server answered 429');
    assert.ok(throttled.every((o) => o.retryAfterMs === 1000), 'the max-inflight filter sends Retry-After: 1');
    assert.ok(Math.min(...run.limits) < 64 / 2, `the limit came down: ${Math.min(...run.limits)}`);
    assert.equal(run.results.get('written'), n);
    assert.equal(run.results.get('failed') ?? 0, 0, 'a 429 is never a failed write');
    assert.equal(await gatesTrue(client, ns), n);
    // Retry-After honoured: no write left while the queue was paused (a 5 ms margin for timer granularity).
    const early = run.sends.filter((t) => run.pauses.some((p) => t > p.from + 5 && t < p.until - 5));
    assert.deepEqual(early, [], 'writes sent during a Retry-After pause');
    // Never a tight loop: the sends are at most the writes plus the throttled resends.
    assert.equal(run.sends.length, n + throttled.length);
  });
});
