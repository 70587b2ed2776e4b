// The partition scenario of issue 12, shared by the demo, the e2e test and the
// benchmark: a full plane on the pod network with 4 nodes; node 0 runs the
// infrastructure (an outprobe replica in a sandbox of its own, and a client of the
// Service in the node's namespace, where kube-proxy routes ClusterIPs); a Deployment
// of 3 gated pods, one on each of nodes 1-3, whose containers carry their own
// readinessProbe (run by each node's agent, from the node); a Service in front of
// them; a ProbePolicy probing every period. cut() partitions one pod from every
// other node and records when each part of the chain reacted.
import type { ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse } from 'yaml';
import { REPO_ROOT } from '../cluster/bins.ts';
import { startControlPlane } from '../cluster/index.ts';
import type { ControlPlane } from '../cluster/index.ts';
import { startServiceClient } from '../netclient/index.ts';
import type { ServiceClient } from '../netclient/index.ts';
import type { PodNet, Sandbox } from '../podnet/index.ts';
import { podNetSandbox, startWorkloads } from '../workloads/index.ts';
import type { Workloads } from '../workloads/index.ts';
import { Timeline } from './timeline.ts';
import type { Change } from './timeline.ts';

export const GATE = 'outprobe.io/web';
const INFRA = 'outprobe.io/role';

export interface WorldOptions {
  readonly namespace?: string;
  readonly periodSeconds?: number;
  readonly failureThreshold?: number;
  readonly log?: (m: string) => void;
  /** Every change the timeline sees (gate, ContainersReady, Ready, EndpointSlice, kube-proxy). */
  readonly onChange?: (c: Change, pod: string) => void;
  /** Milliseconds between two requests of the Service client. @default 50 */
  readonly clientIntervalMs?: number;
  /** The ProbePolicy to apply (its namespace must be `namespace`). @default readiness only, period/threshold as above */
  readonly policy?: Record<string, unknown>;
  /** Also hands the outprobe process to this recorder (a test's logsOnFailure().record), as replica `outprobe-0`. */
  readonly record?: (id: string, child: ChildProcess) => void;
}

export interface WebPod { readonly name: string; readonly ip: string; readonly node: string }

export interface OutprobeLine { readonly time: string; readonly msg: string; readonly [k: string]: unknown }

export interface CutResult {
  readonly victim: WebPod;
  /** Epoch ms: just before the fault was applied, and when its rules were in place. */
  readonly cutStart: number;
  readonly cutDone: number;
  /** outprobe's readiness transition to failure for the victim (its own log time). */
  readonly detected: number;
  readonly gate: number;
  readonly ready: number;
  readonly slice: number;
  readonly proxy: number;
  /** The last Service request that went to the victim and failed (start time), if any. */
  readonly lastFailedRequest: number | undefined;
  /** What the victim's own node said meanwhile. */
  readonly containersReadyDuringCut: string | undefined;
}

export interface HealResult {
  readonly victim: WebPod;
  readonly healStart: number;
  readonly gate: number;
  readonly ready: number;
  readonly slice: number;
  readonly proxy: number;
  /** The first Service request answered by the victim again. */
  readonly firstAnswer: number;
}

export interface World {
  readonly cp: ControlPlane;
  readonly net: PodNet;
  readonly namespace: string;
  readonly clusterIp: string;
  readonly pods: readonly WebPod[];
  readonly client: ServiceClient;
  readonly timeline: Timeline;
  /** The web pods' servers (flip health with setHealthy). */
  readonly workloads: Workloads;
  readonly outprobe: { readonly sandbox: Sandbox; readonly lines: OutprobeLine[]; readonly logFile: string };
  cut(victim: WebPod, timeoutMs?: number): Promise<{ result: CutResult; heal: (timeoutMs?: number) => Promise<HealResult> }>;
  /** Stops everything and removes the plane's directory, unless `keepDir` (its logs, for a failure). */
  stop(opts?: { keepDir?: boolean }): Promise<void>;
}

function deployment(ns: string): Record<string, unknown> {
  const labels = { app: 'web' };
  return {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: ns },
    spec: {
      replicas: 3, selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          terminationGracePeriodSeconds: 1,
          readinessGates: [{ conditionType: GATE }],
          affinity: {
            nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: INFRA, operator: 'DoesNotExist' }] }] } },
            podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: labels }, topologyKey: 'kubernetes.io/hostname' }] },
          },
          containers: [{
            name: 'web', image: 'example.invalid/web:1', ports: [{ name: 'http', containerPort: 8080 }],
            // Run by the pod's own node agent, from the node: the node-local view.
            readinessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 1, failureThreshold: 3 },
          }],
        },
      },
    },
  };
}

function policy(ns: string, periodSeconds: number, failureThreshold: number): Record<string, unknown> {
  return {
    apiVersion: 'outprobe.io/v1alpha1', kind: 'ProbePolicy', metadata: { name: 'web', namespace: ns },
    spec: {
      selector: { matchLabels: { app: 'web' } }, mode: 'Enforce',
      readiness: { conditionType: GATE, probe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds, failureThreshold, timeoutSeconds: 1 } },
    },
  };
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(200);
  }
}

interface PodItem { metadata: { name: string; deletionTimestamp?: string }; spec?: { nodeName?: string }; status?: { podIP?: string; conditions?: { type: string; status: string }[] } }

export async function startPartitionWorld(o: WorldOptions = {}): Promise<World> {
  const ns = o.namespace ?? 'shop';
  const log = o.log ?? ((): void => undefined);
  const cp = await startControlPlane({ full: true, nodes: 4, network: 'netns', log });
  const net = cp.net;
  if (net === undefined) throw new Error('no pod network');
  let keepDir = false;
  const stops: (() => Promise<void>)[] = [async () => { await cp.stop({ keepDir }); }];
  const stop = async (opts: { keepDir?: boolean } = {}): Promise<void> => {
    keepDir = opts.keepDir === true;
    for (const s of stops.reverse()) await s().catch(() => undefined);
  };
  try {
    const { kube } = cp;
    const [infra] = net.nodes;
    if (infra === undefined) throw new Error('no node');
    await kube.patch(`/api/v1/nodes/${infra.name}`, { metadata: { labels: { [INFRA]: 'infra' } } });
    const crd = parse(readFileSync(path.join(REPO_ROOT, 'crds/outprobe.io_probepolicies.yaml'), 'utf8')) as unknown;
    await kube.must('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd, [409]);
    await kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await until('the ProbePolicy API', async () => ((await kube.call('GET', `/apis/outprobe.io/v1alpha1/namespaces/${ns}/probepolicies`)).status === 200 ? true : undefined), 20_000);
    const workloads: Workloads = startWorkloads({ kube, namespace: ns, labelSelector: 'app=web', sandbox: podNetSandbox(net), log });
    stops.push(() => workloads.stop());
    await kube.create(`/apis/apps/v1/namespaces/${ns}/deployments`, deployment(ns));
    const svc = await kube.create(`/api/v1/namespaces/${ns}/services`, {
      apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: ns },
      spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
    });
    const clusterIp = (svc['spec'] as { clusterIP: string }).clusterIP;
    await kube.create(`/apis/outprobe.io/v1alpha1/namespaces/${ns}/probepolicies`, o.policy ?? policy(ns, o.periodSeconds ?? 1, o.failureThreshold ?? 3));

    // outprobe: one replica, on the infra node, in a sandbox of its own (as its pod would be).
    const sandbox = await net.sandbox(infra.name, 'outprobe');
    const logFile = path.join(cp.dir, 'logs', 'outprobe.log');
    const out = createWriteStream(logFile);
    const lines: OutprobeLine[] = [];
    const controller: ChildProcess = net.spawnIn(sandbox.netns, process.execPath, [
      path.join(REPO_ROOT, 'src/main.ts'), '--kubeconfig', cp.kubeconfigPath, '--namespace', ns, '--identity', 'outprobe-0',
      '--allowed-probe-cidrs', net.clusterCidr, '--metrics-addr', `${sandbox.ip}:0`, '--metrics-auth', 'none', '--sharding', 'false',
      '--status-interval', '1', '--log-level', 'debug',
    ], { stdio: ['ignore', 'pipe', 'pipe'] });
    o.record?.('outprobe-0', controller);
    const exited = new Promise<void>((resolve) => { controller.once('exit', () => { resolve(); }); });
    stops.push(async () => {
      controller.kill('SIGTERM');
      const timer = setTimeout(() => { controller.kill('SIGKILL'); }, 5000);
      await exited;
      clearTimeout(timer);
      out.end();
    });
    controller.stderr?.pipe(out);
    if (controller.stdout !== null) {
      createInterface({ input: controller.stdout }).on('line', (line) => {
        out.write(`${line}\n`);
        try {
          lines.push(JSON.parse(line) as OutprobeLine);
        } catch { /* not JSON */ }
      });
    }

    const pods = await until('3 web pods served, gated True and Ready, one per node', async () => {
      const items = ((await kube.get(`/api/v1/namespaces/${ns}/pods?labelSelector=app%3Dweb`))['items'] as PodItem[]).filter((p) => p.metadata.deletionTimestamp === undefined);
      const ok = items.filter((p) => ['Ready', GATE].every((t) => p.status?.conditions?.some((c) => c.type === t && c.status === 'True') === true));
      if (ok.length !== 3 || workloads.servedPods().length < 3) return undefined;
      return ok.map((p) => ({ name: p.metadata.name, ip: p.status?.podIP ?? '', node: p.spec?.nodeName ?? '' })).sort((a, b) => a.node.localeCompare(b.node));
    }, 120_000);
    log(`web pods: ${pods.map((p) => `${p.name} ${p.ip} on ${p.node}`).join(', ')}; Service web ClusterIP ${clusterIp}`);

    const byIp = new Map(pods.map((p) => [p.ip, p.name]));
    const timeline = new Timeline({ kube, namespace: ns, service: 'web', gate: GATE, clientNetns: infra.netns, onChange: (c) => o.onChange?.(c, byIp.get(c.ip) ?? c.ip) });
    stops.push(() => timeline.stop());
    const client = startServiceClient({ spawnIn: (n, cmd, args, opts) => net.spawnIn(n, cmd, args, opts), netns: infra.netns, ip: clusterIp, port: 80, intervalMs: o.clientIntervalMs ?? 50, timeoutMs: 500 });
    stops.push(() => client.stop());
    await until('the client reaches all 3 pods through the ClusterIP', () => {
      const who = new Set(client.hits.map((h) => h.pod));
      return Promise.resolve(pods.every((p) => who.has(`${ns}/${p.name}`)) ? true : undefined);
    }, 30_000);
    await until('kube-proxy routes to all 3 pods', () => Promise.resolve(pods.every((p) => timeline.value(p.ip, 'proxy') === 'True') ? true : undefined), 30_000);

    const key = (p: WebPod): string => `${ns}/${p.name}`;
    const cut = async (victim: WebPod, timeoutMs = 30_000): Promise<{ result: CutResult; heal: (t?: number) => Promise<HealResult> }> => {
      const cutStart = Date.now();
      const fault = await net.faults.isolatePod(victim.ip);
      const cutDone = Date.now();
      const gate = await timeline.waitFor(victim.ip, 'gate', 'False', cutStart, timeoutMs);
      const ready = await timeline.waitFor(victim.ip, 'ready', 'False', cutStart, timeoutMs);
      const slice = await timeline.waitFor(victim.ip, 'slice', 'False', cutStart, timeoutMs);
      const proxy = await timeline.waitFor(victim.ip, 'proxy', 'False', cutStart, timeoutMs);
      const transition = lines.find((l) => l.msg === 'transition' && l['pod'] === key(victim) && l['kind'] === 'readiness' && l['to'] === 'failure' && Date.parse(l.time) >= cutStart);
      // A request to the victim fails (times out) while it is partitioned; the last one that did
      // started before kube-proxy dropped it. Wait out the client's timeout first.
      await sleep(600);
      const failed = client.since(cutStart).filter((h) => h.err !== undefined);
      const result: CutResult = {
        victim, cutStart, cutDone, detected: transition === undefined ? Number.NaN : Date.parse(transition.time),
        gate: gate.t, ready: ready.t, slice: slice.t, proxy: proxy.t,
        lastFailedRequest: failed.at(-1)?.t, containersReadyDuringCut: timeline.value(victim.ip, 'containersReady'),
      };
      const heal = async (healTimeoutMs = 30_000): Promise<HealResult> => {
        const healStart = Date.now();
        await fault.heal();
        const g = await timeline.waitFor(victim.ip, 'gate', 'True', healStart, healTimeoutMs);
        const r = await timeline.waitFor(victim.ip, 'ready', 'True', healStart, healTimeoutMs);
        const s = await timeline.waitFor(victim.ip, 'slice', 'True', healStart, healTimeoutMs);
        const p = await timeline.waitFor(victim.ip, 'proxy', 'True', healStart, healTimeoutMs);
        const answer = await until(`${victim.name} answers through the ClusterIP again`, () => Promise.resolve(client.since(healStart).find((h) => h.pod === key(victim))), healTimeoutMs);
        return { victim, healStart, gate: g.t, ready: r.t, slice: s.t, proxy: p.t, firstAnswer: answer.t };
      };
      return { result, heal };
    };

    return { cp, net, namespace: ns, clusterIp, pods, client, timeline, workloads, outprobe: { sandbox, lines, logFile }, cut, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The latency breakdown of one cut, in ms (issue 12's terms). */
export function breakdown(r: CutResult): { total: number; detection: number; gateWrite: number; readyFold: number; endpointSlice: number; kubeProxy: number } {
  return {
    total: r.proxy - r.cutStart,
    detection: r.detected - r.cutStart,
    gateWrite: r.gate - r.detected,
    readyFold: r.ready - r.gate,
    endpointSlice: r.slice - r.ready,
    kubeProxy: r.proxy - r.slice,
  };
}
