// Simulated workloads: watches the pods of a namespace (optionally a label
// selector) and serves every Running pod's declared container ports through one
// podserve process (test/support/podserve) until the pod is deleted. Without a
// sandbox provider pods are 127.x addresses served on loopback; with one, pod
// IPs are in 198.18.0.0/15 and each pod is served inside the network namespace
// the provider returns (docs/adr/0014-pod-network.md). Tests and the demo flip
// health per pod with setHealthy().
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeClient, WatchEvent } from '../cluster/kube.ts';
import type { PodNet } from '../podnet/index.ts';
import { startPodserve } from '../podserve/index.ts';
import type { Podserve } from '../podserve/index.ts';
import type { PodObject } from './pods.ts';
import { isPodNetworkIp, isSimulatedPodIp, podPorts } from './pods.ts';
import { servePod } from './served-pod.ts';
import type { ServedPod } from './served-pod.ts';

export { isPodNetworkIp, isSimulatedPodIp, podPorts, portKind } from './pods.ts';
export type { PodPort, PortKind } from './pods.ts';
export type { ServedPod } from './served-pod.ts';

/** What the workloads tell a sandbox provider about a pod they are about to serve. */
export interface SandboxPod {
  readonly name: string;
  readonly uid: string;
  readonly ip: string;
  readonly nodeName: string;
}

/** Gives each pod a network namespace (the pod network's part), and takes it back. */
export interface SandboxProvider {
  attach(pod: SandboxPod): Promise<{ netnsPath?: string }>;
  detach(ip: string): Promise<void>;
}

/** Pods as namespaces of a pod network: each pod on its own node's bridge (ADR 0014). */
export function podNetSandbox(net: PodNet): SandboxProvider {
  return {
    attach: async (pod) => ({ netnsPath: (await net.attachPod(pod.nodeName, pod.ip)).netnsPath }),
    detach: (ip) => net.detachPod(ip),
  };
}

/** The sandbox option for a plane: pod namespaces when it has a pod network, loopback otherwise. */
export function sandboxFor(net: PodNet | undefined): { sandbox?: SandboxProvider } {
  return net === undefined ? {} : { sandbox: podNetSandbox(net) };
}

export interface WorkloadsOptions {
  readonly kube: KubeClient;
  readonly namespace: string;
  readonly labelSelector?: string;
  readonly log?: (msg: string) => void;
  /** Pod namespaces; @default none: pods are 127.x addresses served on loopback. */
  readonly sandbox?: SandboxProvider;
  /** A podserve to share (not closed by stop()); @default one started for these workloads and closed by stop(). */
  readonly podserve?: Podserve;
}

interface Served { readonly uid: string; readonly server: ServedPod }

export interface Workloads {
  /** Pods currently served, by name. */
  servedPods(): string[];
  server(podName: string): ServedPod | undefined;
  /** Flips a pod's health (remembered for pods not served yet). */
  setHealthy(podName: string, healthy: boolean): Promise<void>;
  /** Resolves once `count` pods are served. */
  waitServing(count: number, timeoutMs?: number): Promise<string[]>;
  stop(): Promise<void>;
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

  const owned = o.podserve === undefined;
  const podserve: Promise<Podserve> = o.podserve !== undefined ? Promise.resolve(o.podserve) : startPodserve({ log: (l) => { log(`podserve: ${l}`); } });
  podserve.catch((err: unknown) => { log(`workloads: podserve did not start: ${String(err)}`); });
  const key = (name: string): string => `${o.namespace}/${name}`;
  const acceptsIp = (ip: unknown): ip is string => (o.sandbox === undefined ? isSimulatedPodIp(ip) : isPodNetworkIp(ip));

  const drop = async (name: string): Promise<void> => {
    const s = served.get(name);
    if (s === undefined) return;
    served.delete(name);
    await (await podserve).remove(key(name));
    await o.sandbox?.detach(s.server.ip);
    log(`workloads: stopped serving ${name}`);
  };

  /** Attaches the pod's sandbox (if any) and serves its ports there; detaches again if serving fails. */
  const serve = async (pod: PodObject, ip: string): Promise<ServedPod> => {
    const name = pod.metadata?.name ?? '';
    const sandbox = o.sandbox === undefined ? undefined : await o.sandbox.attach({ name, uid: pod.metadata?.uid ?? '', ip, nodeName: pod.spec?.nodeName ?? '' });
    try {
      return await servePod({ ps: await podserve, key: key(name), ip, ports: podPorts(pod), netnsPath: sandbox?.netnsPath, healthy: health.get(name) ?? true });
    } catch (err) {
      if (o.sandbox !== undefined) await o.sandbox.detach(ip);
      throw err;
    }
  };

  const reconcile = async (type: string, pod: PodObject): Promise<void> => {
    const name = pod.metadata?.name ?? '';
    const uid = pod.metadata?.uid ?? '';
    const cur = served.get(name);
    if (type === 'DELETED' || (cur !== undefined && cur.uid !== uid)) await drop(name);
    if (type === 'DELETED' || served.has(name)) return;
    const ip = pod.status?.podIP;
    if (pod.status?.phase !== 'Running' || !acceptsIp(ip)) return;
    const server = await serve(pod, ip);
    served.set(name, { uid, server });
    const where = server.netnsPath === undefined ? '' : ` in ${server.netnsPath}`;
    log(`workloads: serving ${name} on ${ip}${where} ports ${server.ports.map((p) => `${p.port}/${p.kind}`).join(',')}`);
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
      for (const name of [...served.keys()]) await drop(name).catch((err: unknown) => { log(`workloads: ${String(err)}`); });
      if (owned) await (await podserve.catch(() => undefined))?.close();
    },
  };
}
