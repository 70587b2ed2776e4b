// `npm run bench:node-death [-- --max-wait S]` (root; real nodes, docs/adr/0047-real-nodes.md):
// issue 29's measurement of a node's death, against Kubernetes itself, in one run.
//
// Three real nodes (a real kubelet with containerd and runc each): outprobe's chart with its
// own image on real-node-1 and real-node-2; three Services, each with one pod on real-node-0
// (the node that dies) and one on real-node-1, and a client per Service on a kwok node
// sending through its node's kube-proxy (20 requests a second, 500 ms timeout):
//   plain     no outprobe: Kubernetes' own path (the node lifecycle controller marks the node
//             NotReady after --node-monitor-grace-period, 50 s by default, then the pods'
//             Ready False, then the EndpointSlice);
//   gate      outprobe's readiness gate (httpGet, period 1 s, failureThreshold 3);
//   liveness  the gate and an outprobe liveness probe with action Evict (same timing).
// Then real-node-0's network dies (every packet in and out of its uplink dropped: its kubelet
// can no longer reach the API server, its pods no one). Per Service: when the client's last
// request went to the dead pod (the time the dead endpoint stopped receiving traffic), and
// when the API said so: gate False, pod Ready False, endpoint not ready or terminating,
// node NotReady. The last stdout line is one JSON object.
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { startServiceClient } from '../../test/support/netclient/index.ts';
import type { ServiceClient } from '../../test/support/netclient/index.ts';
import { REAL_NODE_TAINT } from '../../test/support/realnode/index.ts';
import { CHART, chartArgs, condition, listPods, NS, ok, startRealPlane, until } from '../../test/e2e-nodes/support.ts';
import type { PodJson, RealPlane } from '../../test/e2e-nodes/support.ts';

const { values } = parseArgs({ options: { 'max-wait': { type: 'string', default: '150' } } });
const maxWaitMs = Number(values['max-wait']) * 1000;
const say = (m: string): void => { process.stderr.write(`${new Date().toISOString()} ${m}\n`); };

const DEAD = 'real-node-0';
const LIVE = 'real-node-1';
const REPLICA_NODES = ['real-node-1', 'real-node-2'];
type Variant = 'plain' | 'gate' | 'liveness';
const VARIANTS: readonly Variant[] = ['plain', 'gate', 'liveness'];
const probe = { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 1, failureThreshold: 3, timeoutSeconds: 1 };

function workload(ns: string, image: string): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: ns },
    spec: {
      replicas: 2, selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          affinity: {
            nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [DEAD, LIVE] }] }] } },
            podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'web' } } }] },
          },
          tolerations: [{ key: REAL_NODE_TAINT.key, operator: 'Exists', effect: REAL_NODE_TAINT.effect }],
          terminationGracePeriodSeconds: 2,
          containers: [{
            name: 'web', image, imagePullPolicy: 'Never', args: ['serve', 'http:8080:http'],
            env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
            ports: [{ name: 'http', containerPort: 8080 }], readinessProbe: probe,
            resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { memory: '64Mi' } },
          }],
        },
      },
    },
  };
}

function policy(ns: string, v: Variant): Record<string, unknown> {
  return {
    apiVersion: 'outprobe.io/v1alpha1', kind: 'ProbePolicy', metadata: { name: 'web', namespace: ns },
    spec: {
      selector: { matchLabels: { app: 'web' } }, mode: 'Enforce',
      readiness: { probe, maxUnreadyPercent: 100 }, // per-replica panic cap (ADR 0015): 50 % of 1 owned pod would be 0
      ...(v === 'liveness' ? { liveness: { action: 'Evict', probe }, remediation: { maxUnavailable: 1, haltAbovePercentFailing: 50 } } : {}),
    },
  };
}

interface Timeline { lastToDead?: number; gateFalse?: number; readyFalse?: number; endpointGone?: number; evicted?: number; nodeNotReady?: number }

async function setUp(p: RealPlane): Promise<Map<Variant, { clusterIp: string; dead: PodJson }>> {
  const images = p.cp.images;
  if (images === undefined) throw new Error('no images');
  ok(p.helm('install', 'outprobe', CHART, '--namespace', NS, '--create-namespace', ...chartArgs(images.outprobe.name, REPLICA_NODES), '--wait', '--timeout', '5m'), 'helm install');
  say('outprobe installed on real-node-1 and real-node-2');
  const out = new Map<Variant, { clusterIp: string; dead: PodJson }>();
  for (const v of VARIANTS) {
    const ns = `bench-${v}`;
    await p.cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: v === 'plain' ? {} : { 'outprobe.io/inject-readiness-gates': 'enabled' } } });
    await until(`default ServiceAccount in ${ns}`, async () => ((await p.cp.kube.call('GET', `/api/v1/namespaces/${ns}/serviceaccounts/default`)).status === 200 ? true : undefined));
    if (v !== 'plain') await p.cp.kube.create(`/apis/outprobe.io/v1alpha1/namespaces/${ns}/probepolicies`, policy(ns, v));
    await p.cp.kube.create(`/apis/apps/v1/namespaces/${ns}/deployments`, workload(ns, images.podserve.name));
    const svc = await p.cp.kube.create(`/api/v1/namespaces/${ns}/services`, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: ns }, spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 'http' }] } });
    const pods = await until(`2 Ready pods in ${ns}`, async () => {
      const ps = await listPods(p.cp, ns, 'app=web');
      return ps.length === 2 && ps.every((x) => condition(x, 'Ready') === 'True') ? ps : undefined;
    }, 180_000);
    const dead = pods.find((x) => x.spec.nodeName === DEAD);
    if (dead === undefined) throw new Error(`${ns}: no pod on ${DEAD}`);
    out.set(v, { clusterIp: (svc['spec'] as { clusterIP: string }).clusterIP, dead });
  }
  return out;
}

async function watchApi(p: RealPlane, v: Variant, dead: PodJson, t0: number, tl: Timeline): Promise<void> {
  const ns = `bench-${v}`;
  const pod = (await p.cp.kube.call('GET', `/api/v1/namespaces/${ns}/pods/${dead.metadata.name}`)).body as PodJson | undefined;
  const now = Date.now() - t0;
  if (pod?.metadata !== undefined) {
    const gate = pod.status.conditions?.find((c) => c.type.startsWith('outprobe.io/'));
    if (tl.gateFalse === undefined && gate?.status === 'False') tl.gateFalse = now;
    if (tl.readyFalse === undefined && condition(pod, 'Ready') === 'False') tl.readyFalse = now;
    if (tl.evicted === undefined && pod.metadata.deletionTimestamp !== undefined) tl.evicted = now;
  } else if (tl.evicted === undefined) tl.evicted = now;
  if (tl.endpointGone === undefined) {
    const slices = (await p.cp.kube.get(`/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices?labelSelector=kubernetes.io/service-name=web`))['items'] as { endpoints?: { addresses: string[]; conditions?: { ready?: boolean } }[] }[];
    const ep = slices.flatMap((s) => s.endpoints ?? []).find((e) => e.addresses.includes(dead.status.podIP ?? ''));
    if (ep === undefined || ep.conditions?.ready === false) tl.endpointGone = now;
  }
}

async function oneRun(p: RealPlane, setup: Map<Variant, { clusterIp: string; dead: PodJson }>): Promise<Record<Variant, Timeline> & { nodeNotReady: number | undefined }> {
  const net = p.cp.net;
  if (net === undefined) throw new Error('no pod network');
  const clientNode = net.nodes.find((n) => n.kind === 'kwok');
  if (clientNode === undefined) throw new Error('no kwok node for the clients');
  const clients = new Map<Variant, ServiceClient>();
  for (const [v, s] of setup) clients.set(v, startServiceClient({ spawnIn: (ns, cmd, args, opts) => net.spawnIn(ns, cmd, args, opts), netns: clientNode.netns, ip: s.clusterIp, port: 80, intervalMs: 50, timeoutMs: 500 }));
  const tls = new Map<Variant, Timeline>(VARIANTS.map((v) => [v, {}]));
  let nodeNotReady: number | undefined;
  try {
    await until('every client reaching both pods', () => ([...setup].every(([v, s]) => clients.get(v)?.hits.some((h) => h.pod === s.dead.metadata.name) === true) ? true : undefined), 30_000);
    await sleep(2000);
    const fault = await net.faults.blackholeNode(DEAD);
    const t0 = Date.now();
    say(`${DEAD}'s network is dead (blackholed) at ${new Date(t0).toISOString()}`);
    try {
      for (;;) {
        for (const [v, s] of setup) await watchApi(p, v, s.dead, t0, tls.get(v) ?? {});
        const node = await p.cp.kube.get(`/api/v1/nodes/${DEAD}`);
        const ready = ((node['status'] as { conditions?: { type: string; status: string }[] }).conditions ?? []).find((c) => c.type === 'Ready');
        if (nodeNotReady === undefined && ready?.status !== 'True') nodeNotReady = Date.now() - t0;
        const done = [...setup.keys()].every((v) => tls.get(v)?.endpointGone !== undefined);
        if (done && Date.now() - t0 > (Math.max(...[...tls.values()].map((t) => t.endpointGone ?? 0)) + 5000)) break;
        if (Date.now() - t0 > maxWaitMs) { say(`gave up after ${maxWaitMs / 1000} s`); break; }
        await sleep(200);
      }
      // The dead endpoint stopped receiving traffic at the start of the last request that failed (no pod answered it).
      for (const [v, c] of clients) {
        const failed = c.since(t0).filter((h) => h.err !== undefined);
        const last = failed.at(-1);
        const tl = tls.get(v);
        if (tl !== undefined && last !== undefined) tl.lastToDead = last.t - t0;
      }
    } finally {
      await fault.heal();
    }
  } finally {
    for (const c of clients.values()) await c.stop();
  }
  return { plain: tls.get('plain') ?? {}, gate: tls.get('gate') ?? {}, liveness: tls.get('liveness') ?? {}, nodeNotReady };
}

// One run per plane: the dead node stays dead (run the command again for another).
const plane = await startRealPlane(3);
const results: unknown[] = [];
try {
  await plane.cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  await until(`default ServiceAccount in ${NS}`, async () => ((await plane.cp.kube.call('GET', `/api/v1/namespaces/${NS}/serviceaccounts/default`)).status === 200 ? true : undefined));
  const r = await oneRun(plane, await setUp(plane));
  results.push(r);
  const row = (v: Variant): string => {
    const t = r[v];
    return `${v.padEnd(9)} traffic to the dead pod until ${t.lastToDead ?? '-'} ms; gate False ${t.gateFalse ?? '-'}, evicted ${t.evicted ?? '-'}, Ready False ${t.readyFalse ?? '-'}, endpoint not ready ${t.endpointGone ?? '-'} ms`;
  };
  say(`node NotReady at ${r.nodeNotReady ?? '-'} ms after the network died`);
  for (const v of VARIANTS) say(`  ${row(v)}`);
} finally {
  await plane.stop();
}
process.stdout.write(`${JSON.stringify({ runs: results, nodeMonitorGracePeriodS: 50, probe: { periodSeconds: 1, failureThreshold: 3, timeoutSeconds: 1 } })}\n`);
