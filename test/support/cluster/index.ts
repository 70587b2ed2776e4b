// startControlPlane(): etcd + kube-apiserver (+ kube-controller-manager,
// kube-scheduler, kwok with fake loopback nodes when `full`), each on free loopback
// ports with its own log file, in a directory of its own. kube-apiserver listens on
// `bindAddress` (127.0.0.1 unless the caller puts it on a pod network's fabric). Used by the tests and by
// `npm run cluster:up` (scripts/cluster.ts).
import { appendFileSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Agent, request } from 'undici';
import { apiserverArgs, BIND_ADDRESS, controllerManagerArgs, etcdArgs, kwokArgs, schedulerArgs, SERVICE_CIDR } from './args.ts';
import type { PlaneAddresses, Ports } from './args.ts';
import type { Binaries } from './bins.ts';
import { findBinaries, REPO_ROOT } from './bins.ts';
import { generatePki } from './certs.ts';
import { firstIp, ipv4ToInt } from './cidr.ts';
import { KubeClient } from './kube.ts';
import { kubeconfigFor, loadCredentials, writeKubeconfig } from './kubeconfig.ts';
import type { AdminCredentials } from './kubeconfig.ts';
import { createPodNet, podNetSupport } from '../podnet/index.ts';
import type { PodNet } from '../podnet/index.ts';
import { onProcessEnd } from '../podnet/hooks.ts';
import { createFakeNodes, nodesReady } from './nodes.ts';
import { createNetworkNodes, nodeAddressesSet, startNodeServices } from './node-services.ts';
import { claimPodNetwork } from './podnet.ts';
import { assertPortFree, claimPort, releasePort } from './ports.ts';
import type { Component } from './proc.ts';
import { killNow, startComponent, stopPids, tail } from './proc.ts';
import { waitReady } from './wait.ts';
import { prepareRealNodes, startRealNodes } from './real-nodes.ts';
import { realNodeSupport, type RealNode } from '../realnode/index.ts';
import type { NodeImages } from '../images/index.ts';

export { KubeClient } from './kube.ts';
export { firstIp } from './cidr.ts';
export { kubeProxyConfig, netnsSpawn, startKubeProxy } from './kube-proxy.ts';
export type { KubeProxy, KubeProxyConfigOptions, KubeProxySpawn, StartKubeProxyOptions } from './kube-proxy.ts';
export { isAlive, killNow, stopPids } from './proc.ts';
export { ComponentError } from './wait.ts';

export interface ControlPlaneOptions {
  /** Add kube-controller-manager, kube-scheduler and kwok with fake nodes. */
  readonly full?: boolean;
  /** State directory (created; must not exist or be empty). Default: a new temp dir. */
  readonly dir?: string;
  /** Components outlive this process (CLI). Default false: killed when it exits. */
  readonly detached?: boolean;
  /** Fixed kube-apiserver port instead of a free one. */
  readonly apiserverPort?: number;
  /** Number of fake nodes in full mode (default 2). */
  readonly nodes?: number;
  /** Progress messages. */
  readonly log?: (msg: string) => void;
  /**
   * IPv4 address kube-apiserver binds to and advertises; it must already exist on a
   * local interface. etcd, kube-controller-manager and kube-scheduler stay on 127.0.0.1.
   * @default '127.0.0.1'
   */
  readonly bindAddress?: string;
  /** Service ClusterIP range (kube-apiserver, kube-controller-manager). @default '10.0.0.0/24' */
  readonly serviceCidr?: string;
  /**
   * Full mode's pod network. 'netns' (ADR 0014): nodes and pods are network namespaces
   * on 198.18.0.0/15, with a node agent and kube-proxy per node; needs root, iproute2
   * and nftables. 'loopback': pods are 127.x aliases (no partitions, no Service
   * traffic). 'auto': 'netns' when this machine supports it, else 'loopback' with a
   * one-line reason in the log.
   * @default 'auto'
   */
  readonly network?: 'auto' | 'netns' | 'loopback';
  /**
   * More kube-apiserver flags, after the plane's own (a later flag wins), e.g.
   * `--max-mutating-requests-inflight=2` for a server that answers 429.
   */
  readonly apiserverArgs?: readonly string[];
  /**
   * Chooses each component's port (`claimPort` by default: below the ephemeral range, locked
   * machine-wide, released by stop()). Tests pass one that hands out a taken port to see a
   * component started again on a new one.
   */
  readonly choosePort?: (host: string) => Promise<number>;
  /**
   * Real nodes `real-node-0`.. beside the kwok nodes (docs/adr/0047-real-nodes.md): a real
   * kubelet with containerd and runc each, on the pod network, with the pause, podserve
   * and outprobe images imported. Needs the 'netns' network, containerd, runc and the CNI
   * plugins (realNodeSupport() says why not). They register tainted
   * `outprobe.test/real-node=true:NoSchedule` and labelled `type=real`.
   * @default 0
   */
  readonly realNodes?: number;
  /**
   * Full mode: kwok's own options (`KwokConfiguration.options`, config.kwok.x-k8s.io/v1alpha1),
   * appended to its config file, e.g. `{ disregardStatusWithLabelSelector: 'a=b' }` for pods
   * whose status someone else writes (bench/scale-live/pod-status.ts). Flags the plane
   * passes kwok (args.ts) still win.
   */
  readonly kwokOptions?: Readonly<Record<string, string | number | boolean>>;
}

export interface ControlPlane {
  readonly dir: string;
  /**
   * The components' log files (`<name>.log`), inside `dir`: removed with it by stop(), so a
   * harness that keeps logs of a failed test copies them first (test/support/replicas).
   */
  readonly logDir: string;
  readonly server: string;
  readonly kubeconfigPath: string;
  readonly kubeconfig: Record<string, unknown>;
  readonly kube: KubeClient;
  readonly binaries: Binaries;
  /** kube-apiserver's address (also in `server`). */
  readonly bindAddress: string;
  /** The Service ClusterIP range. */
  readonly serviceCidr: string;
  readonly components: readonly Component[];
  readonly nodeNames: readonly string[];
  /** Full mode: the pod network's range (198.18.x.0/20 with 'netns', 127.x.0.0/16 with 'loopback'). */
  readonly podNetwork: string | undefined;
  /** Full mode with the 'netns' network: its nodes, sandboxes and faults. */
  readonly net: PodNet | undefined;
  /** Real nodes (realNodes > 0), with their containerd sockets. */
  readonly realNodes: readonly RealNode[];
  /** The images imported into every real node (pause, podserve, outprobe). */
  readonly images: NodeImages | undefined;
  stop(opts?: { keepDir?: boolean }): Promise<void>;
}

/** kwok v0.8.0's defaults for the options a KwokConfiguration document would otherwise leave at 0. */
const kwokDefaults = { podPlayStageParallelism: 4, nodePlayStageParallelism: 4, nodeLeaseParallelism: 4, heartbeatFactor: 5 };

const insecure = new Agent({ connect: { rejectUnauthorized: false } });

async function httpOk(url: string, dispatcher?: Agent): Promise<boolean> {
  // Bounded: a port whose holder accepts and never answers must not stall the start for undici's 300 s default.
  const timeouts = { headersTimeout: 5_000, bodyTimeout: 5_000 };
  const res = await request(url, dispatcher === undefined ? timeouts : { ...timeouts, dispatcher });
  const body = await res.body.text();
  return res.statusCode === 200 && (!url.endsWith('/health') || body.includes('"health":"true"'));
}

function planeAddresses(o: ControlPlaneOptions): PlaneAddresses {
  const a = { bindAddress: o.bindAddress ?? BIND_ADDRESS, serviceCidr: o.serviceCidr ?? SERVICE_CIDR };
  ipv4ToInt(a.bindAddress); // throws with the value when it is not an IPv4 address
  firstIp(a.serviceCidr); // likewise for the range
  return a;
}

type MutablePorts = { -readonly [K in keyof Ports]: Ports[K] };

/** Starts of one component when the ports chosen for it were taken before it bound them. */
const maxStarts = 3;

/**
 * True when the component exited because it could not bind a port: a program that does not
 * use claimPort() (or a chooser a test passes) may have bound it after it was chosen.
 */
function portTaken(c: Component): boolean {
  return c.exit !== undefined && /address already in use/.test(tail(c.logFile, 30));
}

async function pickPorts(o: ControlPlaneOptions, bindAddress: string, choose: (host: string) => Promise<number>): Promise<MutablePorts> {
  if (o.apiserverPort !== undefined) await assertPortFree('kube-apiserver', o.apiserverPort, bindAddress);
  return {
    etcdClient: await choose(BIND_ADDRESS), etcdPeer: await choose(BIND_ADDRESS),
    apiserver: o.apiserverPort ?? await choose(bindAddress),
    controllerManager: await choose(BIND_ADDRESS), scheduler: await choose(BIND_ADDRESS),
  };
}

async function choosePodNet(o: ControlPlaneOptions, log: (m: string) => void): Promise<PodNet | undefined> {
  const realNodes = o.realNodes ?? 0;
  if (realNodes > 0) {
    const support = realNodeSupport();
    if (!support.ok) throw new Error(`real nodes cannot run here: ${support.why}`);
    if (o.network === 'loopback') throw new Error('real nodes need the netns pod network, not the loopback plane');
    return createPodNet({ nodes: o.nodes ?? 2, realNodes, log, persist: o.detached === true });
  }
  const want = o.network ?? 'auto';
  if (want === 'loopback') return undefined;
  const support = podNetSupport();
  if (!support.ok) {
    if (want === 'netns') throw new Error(`the pod network cannot be built here: ${support.why}`);
    log(`pod network unavailable (${support.why}); falling back to the loopback plane: no partitions, no Service traffic`);
    return undefined;
  }
  return createPodNet({ nodes: o.nodes ?? 2, log, persist: o.detached === true });
}

export async function startControlPlane(o: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const t0 = Date.now();
  const log = (m: string): void => { o.log?.(`[+${((Date.now() - t0) / 1000).toFixed(1)}s] ${m}`); };
  const full = o.full ?? false;
  const binaries = findBinaries();
  const claimed: number[] = [];
  const choose = o.choosePort ?? (async (host: string): Promise<number> => {
    const port = await claimPort(host);
    claimed.push(port);
    return port;
  });
  const releaseClaims = (): void => { for (const p of claimed.splice(0)) releasePort(p); };
  if ((o.realNodes ?? 0) > 0 && !full) throw new Error('real nodes need the full plane (full: true)');
  // Before anything runs: the kubelet and the images may take minutes to build when cold.
  const realParts = (o.realNodes ?? 0) > 0 ? await prepareRealNodes(log) : undefined;
  const net = full ? await choosePodNet(o, log) : undefined;
  const addrs = planeAddresses(net === undefined ? o : { ...o, bindAddress: net.hostIp, serviceCidr: net.serviceCidr });
  let ports: MutablePorts;
  try {
    ports = await pickPorts(o, addrs.bindAddress, choose); // before any other state exists: a busy port leaves nothing behind
  } catch (err) {
    releaseClaims();
    await net?.destroy();
    throw err;
  }
  const podnet = full && net === undefined ? claimPodNetwork() : undefined;
  const dir = o.dir ?? mkdtempSync(path.join(os.tmpdir(), 'outprobe-cp-'));
  mkdirSync(path.join(dir, 'pki'), { recursive: true });
  mkdirSync(path.join(dir, 'logs'), { recursive: true });
  const components: Component[] = [];
  const pids = (): number[] => components.map((c) => c.pid);
  // Not detached: never outlive this process, and leave nothing behind, also when it ends on
  // SIGINT (Ctrl-C of `npm run demo`) or SIGTERM (a test runner's timeout): the components are
  // killed and the directory (etcd data, logs, PKI: ~124 MB for a full plane) removed at once.
  // A program with its own signal handler (the demo) still decides when it exits.
  const endSync = (): void => {
    killNow(pids());
    podnet?.release();
    releaseClaims();
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  };
  const unhook = o.detached === true ? (): void => undefined : onProcessEnd(endSync);
  const record = (): void => {
    writeFileSync(path.join(dir, 'pids.json'), JSON.stringify(components.map(({ name, pid, logFile }) => ({ name, pid, logFile })), null, 2));
  };
  const start = (name: string, bin: string, args: string[]): Component => {
    const c = startComponent({ name, bin, args, logFile: path.join(dir, 'logs', `${name}.log`), detached: o.detached ?? false });
    components.push(c);
    record();
    log(`${name} started (pid ${c.pid})`);
    return c;
  };
  /**
   * Waits until `c` is ready. If it exited because a port chosen for it was taken
   * meanwhile (portTaken), `again` chooses new ports and starts it anew, up to
   * `maxStarts` starts in all; any other failure is thrown as it is.
   */
  const readyOnFreePorts = async (c: Component, check: () => Promise<boolean>, timeoutMs: number, again: (() => Promise<Component>) | undefined): Promise<Component> => {
    for (let starts = 1; ; starts++) {
      try {
        await waitReady(c, check, timeoutMs);
        return c;
      } catch (err) {
        if (again === undefined || starts >= maxStarts || !portTaken(c)) throw err;
        log(`${c.name}: a port chosen for it was taken before it could bind it; starting it again on new ports`);
        components.splice(components.indexOf(c), 1);
        record();
        c = await again();
      }
    }
  };
  let kube: KubeClient | undefined;
  let realNodes: RealNode[] = [];
  const stop = async (opts: { keepDir?: boolean } = {}): Promise<void> => {
    await kube?.close();
    await stopPids([...pids()].reverse());
    podnet?.release();
    await net?.destroy();
    unhook();
    releaseClaims();
    if (opts.keepDir !== true) rmSync(dir, { recursive: true, force: true });
  };
  try {
    const pki = generatePki(path.join(dir, 'pki'), [addrs.bindAddress, firstIp(addrs.serviceCidr)]);
    log('certificates generated');
    const startEtcd = (): Component => {
      const c = start('etcd', binaries.etcd, etcdArgs(path.join(dir, 'etcd-data'), ports));
      podnet?.setOwner(c.pid); // etcd runs as long as the plane (and outlives a detaching CLI)
      net?.setOwner(c.pid);
      return c;
    };
    await readyOnFreePorts(startEtcd(), () => httpOk(`http://127.0.0.1:${ports.etcdClient}/health`), 30_000, async () => {
      rmSync(path.join(dir, 'etcd-data'), { recursive: true, force: true });
      ports.etcdClient = await choose(BIND_ADDRESS);
      ports.etcdPeer = await choose(BIND_ADDRESS);
      return startEtcd();
    });
    log('etcd ready');
    const credsAt = (): AdminCredentials => loadCredentials(`https://${addrs.bindAddress}:${ports.apiserver}`, pki.servingCa, pki.adminCert, pki.adminKey);
    let creds = credsAt();
    let k = new KubeClient(creds);
    kube = k;
    const startApiserver = (): Component => start('kube-apiserver', binaries.kubeApiserver, [...apiserverArgs(pki, ports, full, addrs, realParts !== undefined), ...(o.apiserverArgs ?? [])]);
    await readyOnFreePorts(startApiserver(), async () => (await k.call('GET', '/readyz')).status === 200
      && (await k.call('GET', '/api/v1/namespaces/default')).status === 200, 90_000, o.apiserverPort !== undefined ? undefined : async () => {
      ports.apiserver = await choose(addrs.bindAddress);
      await k.close();
      creds = credsAt();
      k = new KubeClient(creds);
      kube = k;
      return startApiserver();
    });
    log('kube-apiserver ready');
    const { server } = creds;
    const kubeconfigPath = path.join(dir, 'kubeconfig');
    writeKubeconfig(kubeconfigPath, creds);
    let nodeNames: string[] = [];
    if (full) {
      const startKcm = (): Component => start('kube-controller-manager', binaries.kubeControllerManager, controllerManagerArgs(pki, kubeconfigPath, ports, addrs.serviceCidr));
      const startSched = (): Component => start('kube-scheduler', binaries.kubeScheduler, schedulerArgs(kubeconfigPath, path.join(dir, 'pki', 'scheduler'), ports));
      const kcm = startKcm();
      const sched = startSched();
      const stages = path.join(dir, 'kwok-stages.yaml');
      copyFileSync(path.join(REPO_ROOT, 'test/support/cluster/kwok-stages.yaml'), stages);
      // A KwokConfiguration replaces kwok's defaults whole (v0.8.0 exits on a parallelism of 0): its defaults first.
      if (o.kwokOptions !== undefined) appendFileSync(stages, `---\napiVersion: config.kwok.x-k8s.io/v1alpha1\nkind: KwokConfiguration\noptions: ${JSON.stringify({ ...kwokDefaults, ...o.kwokOptions })}\n`);
      const fallbackCidr = podnet?.fallbackCidr ?? net?.nodes[0]?.podCidr ?? '';
      const kwok = start('kwok', binaries.kwok, kwokArgs(kubeconfigPath, stages, fallbackCidr));
      nodeNames = net === undefined ? await createFakeNodes(k, o.nodes ?? 2, podnet?.nodeCidr ?? (() => '')) : await createNetworkNodes(k, net);
      await readyOnFreePorts(kcm, () => httpOk(`https://127.0.0.1:${ports.controllerManager}/healthz`, insecure), 90_000, async () => {
        ports.controllerManager = await choose(BIND_ADDRESS);
        return startKcm();
      });
      log('kube-controller-manager ready');
      await readyOnFreePorts(sched, () => httpOk(`https://127.0.0.1:${ports.scheduler}/healthz`, insecure), 90_000, async () => {
        ports.scheduler = await choose(BIND_ADDRESS);
        return startSched();
      });
      log('kube-scheduler ready');
      await waitReady(kwok, () => nodesReady(k, nodeNames), 60_000);
      if (net === undefined) {
        log(`kwok ready: nodes ${nodeNames.join(', ')} Ready; loopback pod network 127.${podnet?.octet ?? 0}.0.0/16`);
      } else {
        // kube-proxy exits when its Node's addresses change: start it once they are final.
        await waitReady(kwok, () => nodeAddressesSet(k, net), 30_000);
        log(`kwok ready: nodes ${nodeNames.join(', ')} Ready on pod network ${net.clusterCidr}`);
        await startNodeServices({ net, binaries, kubeconfigPath, dir, start, log });
        if (realParts !== undefined) {
          realNodes = await startRealNodes({ net, kube: k, pki, server, dir, start, log, parts: realParts });
          await startNodeServices({ net, binaries, kubeconfigPath, dir, start, log, nodes: realNodes.map((r) => r.node) });
        }
      }
    }
    return { dir, logDir: path.join(dir, 'logs'), server, kubeconfigPath, kubeconfig: kubeconfigFor(creds), kube: k, binaries,
      bindAddress: addrs.bindAddress, serviceCidr: addrs.serviceCidr, components, nodeNames,
      podNetwork: net?.clusterCidr ?? (podnet === undefined ? undefined : `127.${podnet.octet}.0.0/16`), net,
      realNodes, images: realParts?.images, stop };
  } catch (err) {
    await stop({ keepDir: true }).catch(() => undefined);
    throw err;
  }
}
