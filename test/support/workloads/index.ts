// Simulated workloads: watches the pods of a namespace (optionally a label
// selector) and, for every Running pod with a 127.x pod IP, serves its declared
// container ports (see pod-server.ts) until the pod is deleted. Tests and the demo
// flip health per pod with setHealthy().
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeClient, WatchEvent } from '../cluster/kube.ts';
import type { PodPort } from './pod-server.ts';
import { isSimulatedPodIp, PodServer, portKind } from './pod-server.ts';

export { PodServer, portKind } from './pod-server.ts';
export type { PodPort, PortKind } from './pod-server.ts';

export interface WorkloadsOptions {
  readonly kube: KubeClient;
  readonly namespace: string;
  readonly labelSelector?: string;
  readonly log?: (msg: string) => void;
}

interface PodObject {
  metadata?: { name?: string; uid?: string; resourceVersion?: string };
  spec?: { containers?: { ports?: { containerPort: number; name?: string; protocol?: string }[] }[] };
  status?: { phase?: string; podIP?: string };
}

interface Served { readonly uid: string; readonly server: PodServer }

export interface Workloads {
  /** Pods currently served, by name. */
  servedPods(): string[];
  server(podName: string): PodServer | undefined;
  /** Flips a pod's health (remembered for pods not served yet). */
  setHealthy(podName: string, healthy: boolean): Promise<void>;
  /** Resolves once `count` pods are served. */
  waitServing(count: number, timeoutMs?: number): Promise<string[]>;
  stop(): Promise<void>;
}

export function podPorts(pod: PodObject): PodPort[] {
  const out: PodPort[] = [];
  for (const c of pod.spec?.containers ?? []) {
    for (const p of c.ports ?? []) {
      if ((p.protocol ?? 'TCP') === 'TCP') out.push({ port: p.containerPort, name: p.name ?? '', kind: portKind(p.name ?? '') });
    }
  }
  return out;
}

export function startWorkloads(o: WorkloadsOptions): Workloads {
  const served = new Map<string, Served>();
  const health = new Map<string, boolean>();
  const abort = new AbortController();
  const log = o.log ?? ((): void => undefined);
  let chain: Promise<void> = Promise.resolve();
  const serial = (fn: () => Promise<void>): void => {
    chain = chain.then(fn).catch((err: unknown) => { log(`workloads: ${String(err)}`); });
  };

  const drop = async (name: string): Promise<void> => {
    const s = served.get(name);
    if (s === undefined) return;
    served.delete(name);
    await s.server.stop();
    log(`workloads: stopped serving ${name}`);
  };

  const reconcile = async (type: string, pod: PodObject): Promise<void> => {
    const name = pod.metadata?.name ?? '';
    const uid = pod.metadata?.uid ?? '';
    const cur = served.get(name);
    if (type === 'DELETED' || (cur !== undefined && cur.uid !== uid)) await drop(name);
    if (type === 'DELETED' || served.has(name)) return;
    const ip = pod.status?.podIP;
    if (pod.status?.phase !== 'Running' || !isSimulatedPodIp(ip)) return;
    const server = new PodServer(ip, podPorts(pod), health.get(name) ?? true);
    await server.start();
    served.set(name, { uid, server });
    log(`workloads: serving ${name} on ${ip} ports ${server.ports.map((p) => `${p.port}/${p.kind}`).join(',')}`);
  };

  const base = `/api/v1/namespaces/${o.namespace}/pods`;
  const sel = o.labelSelector === undefined ? '' : `labelSelector=${encodeURIComponent(o.labelSelector)}`;
  const relist = async (): Promise<string> => {
    const list = await o.kube.get(`${base}?${sel}`);
    const items = (list['items'] as PodObject[] | undefined) ?? [];
    const names = new Set(items.map((p) => p.metadata?.name ?? ''));
    for (const name of served.keys()) if (!names.has(name)) serial(() => drop(name));
    for (const p of items) serial(() => reconcile('ADDED', p));
    return (list['metadata'] as { resourceVersion?: string } | undefined)?.resourceVersion ?? '';
  };

  const stopped = (): boolean => abort.signal.aborted;
  const loop = async (): Promise<void> => {
    while (!stopped()) {
      try {
        let rv = await relist();
        const onEvent = (e: WatchEvent): void => {
          const pod = e.object as PodObject;
          rv = pod.metadata?.resourceVersion ?? rv;
          if (e.type === 'ADDED' || e.type === 'MODIFIED' || e.type === 'DELETED') serial(() => reconcile(e.type, pod));
          if (e.type === 'ERROR') throw new Error(`watch error: ${JSON.stringify(e.object)}`);
        };
        await o.kube.watch(base, `${sel}&resourceVersion=${rv}&timeoutSeconds=300`, onEvent, abort.signal);
      } catch (err) {
        if (!stopped()) log(`workloads: watch ended (${String(err)}); relisting`);
      }
      if (!stopped()) await sleep(300).catch(() => undefined);
    }
  };
  const running = loop();

  return {
    servedPods: () => [...served.keys()].sort(),
    server: (name) => served.get(name)?.server,
    async setHealthy(name, healthy) {
      health.set(name, healthy);
      await served.get(name)?.server.setHealthy(healthy);
    },
    async waitServing(count, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      while (served.size < count) {
        if (Date.now() > deadline) throw new Error(`only ${served.size}/${count} pods served after ${timeoutMs} ms`);
        await sleep(100);
      }
      return [...served.keys()].sort();
    },
    async stop() {
      abort.abort();
      await running;
      await chain;
      for (const name of [...served.keys()]) await drop(name);
    },
  };
}
