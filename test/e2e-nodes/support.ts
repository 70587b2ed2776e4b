// Shared by the real-node tier (docs/adr/0047-real-nodes.md): the plane with real
// nodes, helm and kubectl, the chart's values for outprobe's own image on those nodes,
// and small polling helpers. A host that cannot run real nodes makes the tier FAIL
// with the reason (never a silent skip): scripts/test.sh checks the same first.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { startControlPlane } from '../support/cluster/index.ts';
import type { ControlPlane } from '../support/cluster/index.ts';
import { REAL_NODE_TAINT, realNodeSupport } from '../support/realnode/index.ts';

export const CHART = fileURLToPath(new URL('../../charts/outprobe', import.meta.url));
export const RELEASE = 'outprobe';
export const NS = 'outprobe-system';

export interface Run { readonly status: number | null; readonly stdout: string; readonly stderr: string }

export interface RealPlane {
  readonly cp: ControlPlane;
  helm(...args: string[]): Run;
  kubectl(...args: string[]): Run;
  /** Marks the run failed: stop() then keeps the plane's directory (every component's log) and says where. */
  failed(): void;
  stop(): Promise<void>;
}

/** The plane with `realNodes` real nodes; throws (fails the tier) with the reason when the host cannot run them. */
export async function startRealPlane(realNodes: number): Promise<RealPlane> {
  const support = realNodeSupport();
  assert.ok(support.ok, `real nodes cannot run on this machine: ${support.ok ? '' : support.why}`);
  const log = (m: string): void => { process.stderr.write(`# ${m}\n`); };
  const cp = await startControlPlane({ full: true, nodes: 1, realNodes, log });
  const helmHome = mkdtempSync(path.join(tmpdir(), 'outprobe-helm-'));
  const env = { ...process.env, HELM_CACHE_HOME: `${helmHome}/cache`, HELM_CONFIG_HOME: `${helmHome}/config`, HELM_DATA_HOME: `${helmHome}/data` };
  const run = (bin: string, args: readonly string[]): Run => {
    const r = spawnSync(bin, args, { encoding: 'utf8', env, timeout: 300_000 });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  let keep = process.env['OUTPROBE_KEEP'] === '1';
  return {
    cp,
    helm: (...args) => run(cp.binaries.helm, ['--kubeconfig', cp.kubeconfigPath, ...args]),
    kubectl: (...args) => run(cp.binaries.kubectl, ['--kubeconfig', cp.kubeconfigPath, ...args]),
    failed: () => { keep = true; },
    stop: async () => {
      rmSync(helmHome, { recursive: true, force: true });
      await cp.stop({ keepDir: keep });
      if (keep) log(`the plane's logs (API server, controllers, every kubelet and containerd) are kept in ${cp.dir}/logs`);
    },
  };
}

export function ok(r: Run, what: string): string {
  assert.equal(r.status, 0, `${what} failed (exit ${String(r.status)}): ${r.stderr}${r.stdout}`);
  return r.stdout;
}

/** The toleration of the real nodes' taint. */
export const realNodeToleration = { key: REAL_NODE_TAINT.key, operator: 'Exists', effect: REAL_NODE_TAINT.effect };

/**
 * helm --set arguments that put the chart's replicas on `nodes` (one each) with outprobe's
 * own image, as imported into every real node (pullPolicy Never: no registry). Only these
 * keys are set, so values other engineers add to the chart keep their defaults.
 */
export function chartArgs(image: string, nodes: readonly string[], replicas = 2): string[] {
  const colon = image.lastIndexOf(':');
  const affinity = {
    nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: nodes }] }] } },
    // Soft, as the chart's default: a rolling update's surge pod must fit beside a running replica.
    podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { 'app.kubernetes.io/instance': RELEASE } } } }] },
  };
  return [
    '--set', `image.repository=${image.slice(0, colon)}`, '--set', `image.tag=${image.slice(colon + 1)}`, '--set', 'image.pullPolicy=Never',
    '--set', `replicaCount=${replicas}`,
    '--set-json', `affinity=${JSON.stringify(affinity)}`,
    '--set-json', `tolerations=${JSON.stringify([realNodeToleration])}`,
  ];
}

/** Polls `fn` until it returns a value (errors are retried); the last error is in the timeout's message. */
export async function until<T>(what: string, fn: () => Promise<T | undefined> | T | undefined, ms = 60_000, everyMs = 250): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (err: unknown) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}${last instanceof Error ? `: ${last.message}` : ''}`);
    await sleep(everyMs);
  }
}

export interface PodJson {
  metadata: { name: string; namespace: string; uid: string; labels?: Record<string, string>; deletionTimestamp?: string };
  spec: { nodeName?: string; readinessGates?: { conditionType: string }[]; volumes?: { name: string; projected?: unknown }[]; containers: { name: string; image: string; readinessProbe?: { httpGet?: { scheme?: string } } }[] };
  status: {
    phase?: string; podIP?: string;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    containerStatuses?: { name: string; ready: boolean; restartCount: number; image: string; containerID?: string; state?: Record<string, { reason?: string; message?: string; exitCode?: number } | undefined>; lastState?: Record<string, { reason?: string; exitCode?: number } | undefined> }[];
  };
}

export function condition(p: PodJson, type: string): string | undefined {
  return p.status.conditions?.find((c) => c.type === type)?.status;
}

export async function listPods(cp: ControlPlane, ns: string, selector: string): Promise<PodJson[]> {
  const l = await cp.kube.get(`/api/v1/namespaces/${ns}/pods?labelSelector=${encodeURIComponent(selector)}`);
  return (l['items'] as PodJson[]).filter((p) => p.metadata.deletionTimestamp === undefined);
}

/** Logs of every container of the release and the workloads, for a failure's message. */
export function dumpLogs(p: RealPlane, namespaces: readonly string[]): string {
  return namespaces.map((ns) => {
    const pods = p.kubectl('get', 'pods', '-n', ns, '-o', 'wide');
    const logs = p.kubectl('logs', '-n', ns, '--all-containers', '--prefix', '--tail=40', '-l', 'app.kubernetes.io/instance', '--ignore-errors');
    return `--- ${ns}\n${pods.stdout}${pods.stderr}\n${logs.stdout}${logs.stderr}`;
  }).join('\n');
}

/** helm install of the chart with outprobe's own image on `nodes`; resolves once `replicas` replica pods are Ready. */
export async function installChart(p: RealPlane, nodes: readonly string[], replicas = 2, extra: readonly string[] = []): Promise<PodJson[]> {
  const image = p.cp.images?.outprobe.name;
  assert.ok(image !== undefined, 'the plane has real nodes and images');
  ok(p.helm('install', RELEASE, CHART, '--namespace', NS, '--create-namespace', ...chartArgs(image, nodes, replicas), ...extra, '--wait', '--timeout', '5m'), 'helm install');
  return until(`${replicas} replicas Ready`, async () => {
    const ps = await listPods(p.cp, NS, `app.kubernetes.io/instance=${RELEASE}`);
    return ps.length === replicas && ps.every((x) => condition(x, 'Ready') === 'True') ? ps : undefined;
  }, 180_000);
}

/** A namespace (labelled for gate injection when `inject`), ready for pods once its default ServiceAccount exists. */
export async function createNamespace(p: RealPlane, name: string, inject: boolean): Promise<void> {
  await p.cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: inject ? { 'outprobe.io/inject-readiness-gates': 'enabled' } : {} } });
  await until(`the default ServiceAccount of ${name}`, async () => ((await p.cp.kube.call('GET', `/api/v1/namespaces/${name}/serviceaccounts/default`)).status === 200 ? true : undefined));
}

export interface WebOptions {
  readonly namespace: string;
  readonly replicas: number;
  /** Nodes the pods may run on (all of them on one node when a single name). */
  readonly nodes: readonly string[];
  /** One pod per node (hard anti-affinity). */
  readonly spread?: boolean;
  /** The container's own readinessProbe (the kubelet runs it; fromContainer policies run it too). */
  readonly readinessProbe?: Record<string, unknown>;
}

/** A Deployment `web` of podserve (its own image, `podserve serve http:8080`) behind a Service `web` on port 80. */
export async function deployWeb(p: RealPlane, o: WebOptions): Promise<{ clusterIp: string }> {
  const image = p.cp.images?.podserve.name;
  assert.ok(image !== undefined);
  const affinity: Record<string, unknown> = {
    nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: o.nodes }] }] } },
    ...(o.spread === true ? { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'web' } } }] } } : {}),
  };
  await p.cp.kube.create(`/apis/apps/v1/namespaces/${o.namespace}/deployments`, {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: o.namespace },
    spec: {
      replicas: o.replicas, selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          affinity, tolerations: [realNodeToleration], terminationGracePeriodSeconds: 2,
          containers: [{
            name: 'web', image, imagePullPolicy: 'Never', args: ['serve', 'http:8080:http'],
            env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
            ports: [{ name: 'http', containerPort: 8080 }],
            readinessProbe: o.readinessProbe ?? { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 1, failureThreshold: 3, timeoutSeconds: 1 },
            securityContext: { runAsNonRoot: true, runAsUser: 65532, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false },
            resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { memory: '64Mi' } },
          }],
        },
      },
    },
  });
  const svc = await p.cp.kube.create(`/api/v1/namespaces/${o.namespace}/services`, {
    apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: o.namespace },
    spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 'http' }] },
  });
  return { clusterIp: (svc['spec'] as { clusterIP: string }).clusterIP };
}
