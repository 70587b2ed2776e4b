import http from 'node:http';
import type { KubeClient } from '../../support/cluster/index.ts';
import { claimLoopbackBlock } from '../../support/ports/index.ts';

/**
 * The test plays the kubelet for pods bound to a node that does not exist:
 * it creates pods, writes their status (Running, a 127.x pod IP, container
 * statuses with IDs and start times), restarts containers, and serves each
 * pod's health endpoint on its loopback IP with health the test flips.
 */
export interface FakePodOptions {
  readonly labels?: Record<string, string>;
  readonly gate?: string;
  readonly port?: number;
  readonly terminationGracePeriodSeconds?: number;
  /** Fields merged into container `web`'s spec, e.g. its own `readinessProbe` (fromContainer policies). */
  readonly container?: Record<string, unknown>;
}

export interface FakePod {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly ip: string;
  healthy: boolean;
  /** Health requests the pod's server answered. */
  hits: number;
  /** The request path of each of them, in order. */
  readonly paths: string[];
  readonly close: () => Promise<void>;
}

let nextIp = 1;
/**
 * The second octet of this process's pod addresses, claimed machine-wide
 * (test/support/ports), so two test processes on one machine (a developer's run
 * beside CI's, a helper's beside another's) never take the same addresses.
 */
const ipBlock = await claimLoopbackBlock();

/** A fresh loopback address per pod: 127.<16-239>.<10-254>.<1-250>, never 127.0.0.1; 61,000 per process. */
export function allocateIp(): string {
  const n = nextIp++;
  return `127.${ipBlock}.${10 + (Math.floor(n / 250) % 245)}.${(n % 250) + 1}`;
}

const podsPath = (ns: string): string => `/api/v1/namespaces/${ns}/pods`;

/** A JSON merge patch (status subresources included); throws unless 2xx. */
export async function mergePatch(kube: KubeClient, path: string, body: unknown): Promise<void> {
  await patch(kube, path, body, 'application/merge-patch+json');
}

/** A strategic merge patch, as the kubelet writes pod status: conditions merge by type. */
export async function strategicPatch(kube: KubeClient, path: string, body: unknown): Promise<void> {
  await patch(kube, path, body, 'application/strategic-merge-patch+json');
}

async function patch(kube: KubeClient, path: string, body: unknown, contentType: string): Promise<void> {
  const r = await kube.call('PATCH', path, body, contentType);
  if (r.status < 200 || r.status > 299) throw new Error(`PATCH ${path}: HTTP ${r.status}: ${JSON.stringify(r.body)}`);
}

/** The status the kubelet writes for a running pod whose one container `web` is ready. */
export function statusBody(uid: string, ip: string, restartCount: number, startedAt: string, hostIp = '127.0.0.1'): Record<string, unknown> {
  return {
    status: {
      phase: 'Running',
      podIP: ip,
      podIPs: [{ ip }],
      hostIP: hostIp,
      startTime: startedAt,
      conditions: [
        { type: 'PodScheduled', status: 'True' },
        { type: 'Initialized', status: 'True' },
        { type: 'ContainersReady', status: 'True' },
        { type: 'Ready', status: 'True' },
      ],
      containerStatuses: [
        {
          name: 'web',
          image: 'example/web:1',
          imageID: 'example/web@sha256:0',
          containerID: `containerd://${uid}-${restartCount}`,
          restartCount,
          started: true,
          ready: true,
          state: { running: { startedAt } },
        },
      ],
    },
  };
}

/** The Pod object of a fake pod bound to `nodeName`: one container `web` with port `http` (8080 unless `o.port`). */
export function fakePodManifest(namespace: string, name: string, o: FakePodOptions = {}, nodeName = 'fake-node'): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels: o.labels ?? { app: 'web' } },
    spec: {
      nodeName,
      terminationGracePeriodSeconds: o.terminationGracePeriodSeconds ?? 30,
      ...(o.gate === undefined ? {} : { readinessGates: [{ conditionType: o.gate }] }),
      containers: [{ name: 'web', image: 'example/web:1', ports: [{ name: 'http', containerPort: o.port ?? 8080 }], ...o.container }],
    },
  };
}

export async function createFakePod(kube: KubeClient, namespace: string, name: string, o: FakePodOptions = {}): Promise<FakePod> {
  const ip = allocateIp();
  const port = o.port ?? 8080;
  const created = await kube.create(podsPath(namespace), fakePodManifest(namespace, name, o));
  const uid = (created['metadata'] as { uid: string }).uid;
  const pod: FakePod = { namespace, name, uid, ip, healthy: true, hits: 0, paths: [], close: () => Promise.resolve() };
  const server = http.createServer((req, res) => {
    pod.hits++;
    pod.paths.push(req.url ?? '');
    res.writeHead(pod.healthy ? 200 : 503);
    res.end(pod.healthy ? 'ok' : 'unhealthy');
  });
  await new Promise<void>((resolve) => server.listen(port, ip, resolve));
  (pod as { close: () => Promise<void> }).close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  await strategicPatch(kube, `${podsPath(namespace)}/${name}/status`, statusBody(uid, ip, 0, startedAgo(60_000)));
  return pod;
}

/** An RFC 3339 timestamp (whole seconds, as the kubelet writes them) `ms` before now. */
export function startedAgo(ms: number): string {
  return new Date(Date.now() - ms).toISOString().replace(/\.\d+Z$/, 'Z');
}

/** The kubelet restarted the container: new containerID, restartCount + 1, new startedAt. */
export async function restartContainer(kube: KubeClient, pod: FakePod, restartCount: number): Promise<void> {
  await strategicPatch(kube, `${podsPath(pod.namespace)}/${pod.name}/status`, statusBody(pod.uid, pod.ip, restartCount, new Date().toISOString().replace(/\.\d+Z$/, 'Z')));
}

export async function getPod(kube: KubeClient, pod: { namespace: string; name: string }): Promise<Record<string, unknown> | undefined> {
  const r = await kube.call('GET', `${podsPath(pod.namespace)}/${pod.name}`);
  return r.status === 200 ? (r.body as Record<string, unknown>) : undefined;
}

export function conditionOf(podObj: Record<string, unknown> | undefined, type: string): { status: string; reason?: string; message?: string } | undefined {
  const conditions = ((podObj?.['status'] as { conditions?: { type: string; status: string; reason?: string; message?: string }[] } | undefined)?.conditions) ?? [];
  return conditions.find((c) => c.type === type);
}

export async function waitFor<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 20_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v;
    } catch (err: unknown) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last instanceof Error ? `: ${last.message}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
