// kube-proxy (nftables mode) for the pod network: one per node namespace, as in a
// cluster (ADR 0014). kubeProxyConfig() writes the KubeProxyConfiguration; the
// caller decides where the process runs through an injected spawn, normally
// netnsSpawn(<node namespace>), so the rules land in that namespace and never in the
// root one. Settings that would touch machine-wide state are switched off: conntrack
// maxPerCore 0 (nf_conntrack_max is global) and every conntrack timeout 0 ("leave
// as is"), oomScoreAdj 0.
import { spawn as nodeSpawn } from 'node:child_process';
import type { ChildProcess, StdioOptions } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { request } from 'undici';
import { stringify } from 'yaml';
import { ipv4ToInt, parseIpv4Cidr } from './cidr.ts';
import type { Component } from './proc.ts';
import { stopPids } from './proc.ts';
import { waitReady } from './wait.ts';

export interface KubeProxyConfigOptions {
  /** The Node object's name (hostnameOverride); the Node should exist with an InternalIP. */
  readonly nodeName: string;
  /** The node's primary IPv4 address (bindAddress); healthz and metrics listen on it. */
  readonly nodeIp: string;
  /** Pods' range: traffic from it is "local" (detectLocalMode ClusterCIDR) and not masqueraded. */
  readonly clusterCidr: string;
  readonly kubeconfigPath: string;
  /**
   * Least time between the end of one rule sync and the start of the next. A change
   * arriving after a quiet period is synced at once; only bursts wait. Must be > 0:
   * kube-proxy defaults a 0 in the v1alpha1 file to 1s.
   * @default 100
   */
  readonly minSyncPeriodMs?: number;
  /** Periodic re-sync (kube-proxy's default is 30s). @default 10_000 */
  readonly syncPeriodMs?: number;
  /** @default 10256 */
  readonly healthzPort?: number;
  /** @default 10249 */
  readonly metricsPort?: number;
  /** klog verbosity; 2 logs every sync with its duration. @default 2 */
  readonly verbosity?: number;
}

function duration(ms: number): string {
  return `${ms}ms`;
}

/** A KubeProxyConfiguration (kubeproxy.config.k8s.io/v1alpha1) as YAML. */
export function kubeProxyConfig(o: KubeProxyConfigOptions): string {
  ipv4ToInt(o.nodeIp);
  parseIpv4Cidr(o.clusterCidr);
  const minSync = o.minSyncPeriodMs ?? 100;
  const sync = o.syncPeriodMs ?? 10_000;
  if (!(minSync > 0)) throw new Error(`minSyncPeriodMs must be > 0 (kube-proxy turns 0 into 1s), got ${minSync}`);
  if (!(sync >= minSync)) throw new Error(`syncPeriodMs (${sync}) must be >= minSyncPeriodMs (${minSync})`);
  return stringify({
    apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
    kind: 'KubeProxyConfiguration',
    mode: 'nftables',
    hostnameOverride: o.nodeName,
    bindAddress: o.nodeIp,
    healthzBindAddress: `${o.nodeIp}:${o.healthzPort ?? 10256}`,
    metricsBindAddress: `${o.nodeIp}:${o.metricsPort ?? 10249}`,
    bindAddressHardFail: true,
    clientConnection: { kubeconfig: o.kubeconfigPath, qps: 50, burst: 100 },
    clusterCIDR: o.clusterCidr,
    detectLocalMode: 'ClusterCIDR',
    nodePortAddresses: [`${o.nodeIp}/32`],
    nftables: { syncPeriod: duration(sync), minSyncPeriod: duration(minSync), masqueradeAll: false },
    conntrack: {
      maxPerCore: 0, min: 0,
      tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s', udpTimeout: '0s', udpStreamTimeout: '0s',
    },
    oomScoreAdj: 0,
    configSyncPeriod: '15m',
    logging: { format: 'text', verbosity: o.verbosity ?? 2 },
  });
}

/** Starts `bin args` with `stdio`; returns the child whose PID is kube-proxy's own. */
export type KubeProxySpawn = (bin: string, args: readonly string[], stdio: StdioOptions) => ChildProcess;

/**
 * Runs the binary inside network namespace `netns` via `ip netns exec`, which execs
 * in place: the child's PID is kube-proxy's, so signalling it stops kube-proxy.
 */
export function netnsSpawn(netns: string): KubeProxySpawn {
  return (bin, args, stdio) => nodeSpawn('ip', ['netns', 'exec', netns, bin, ...args], { stdio });
}

export interface StartKubeProxyOptions {
  readonly bin: string;
  readonly configPath: string;
  readonly logFile: string;
  readonly spawn: KubeProxySpawn;
  /** @default 'kube-proxy' */
  readonly name?: string;
  /**
   * When set, waits until GET on this URL (kube-proxy's /healthz, e.g.
   * http://<nodeIp>:10256/healthz) answers 200, i.e. the first rule sync is done.
   */
  readonly healthzUrl?: string;
  /** @default 30_000 */
  readonly readyTimeoutMs?: number;
}

export type KubeProxy = Component;

async function healthy(url: string): Promise<boolean> {
  const res = await request(url, { headersTimeout: 2_000, bodyTimeout: 2_000 });
  await res.body.dump();
  return res.statusCode === 200;
}

/**
 * Starts kube-proxy with `--config`; output to `logFile`. The caller stops it by PID
 * (stopPids) and removes its nftables tables by deleting the namespace.
 */
export async function startKubeProxy(o: StartKubeProxyOptions): Promise<KubeProxy> {
  const name = o.name ?? 'kube-proxy';
  const fd = openSync(o.logFile, 'a');
  let c: Component;
  try {
    const child = o.spawn(o.bin, [`--config=${o.configPath}`], ['ignore', fd, fd]);
    if (child.pid === undefined) throw new Error(`${name}: could not start ${o.bin} (log: ${o.logFile})`);
    const started: Component = { name, pid: child.pid, logFile: o.logFile, exit: undefined };
    child.once('error', (err) => { started.exit = `spawn error: ${err.message}`; });
    child.once('exit', (code, signal) => { started.exit = signal === null ? `exit code ${code ?? '?'}` : `signal ${signal}`; });
    c = started;
  } finally {
    closeSync(fd);
  }
  const url = o.healthzUrl;
  if (url === undefined) return c;
  try {
    await waitReady(c, () => healthy(url), o.readyTimeoutMs ?? 30_000);
  } catch (err) {
    await stopPids([c.pid], 2_000); // never leave a kube-proxy that never became ready
    throw err;
  }
  return c;
}
