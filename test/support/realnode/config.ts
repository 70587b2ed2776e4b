// The files of one real node (docs/adr/0047-real-nodes.md), pure: containerd's
// configuration, the node's CNI network (bridge + host-local on the node's pod bridge
// of ADR 0014), and the kubelet's configuration and flags. Everything a node owns
// lives under its directory, so several nodes share one host without sharing state:
// containerd root, state, sockets and runc root; the kubelet's root dir and pod logs;
// the CNI plugins' IP allocations; and a cgroup root of their own.
import path from 'node:path';
import { stringify } from 'yaml';

/** Where a node's pods get their routes: the whole test range, never a default route (ADR 0014). */
export const POD_ROUTE = '198.18.0.0/15';
/** Taint every real node registers with: only pods that ask for a real node land there. */
export const REAL_NODE_TAINT = { key: 'outprobe.test/real-node', value: 'true', effect: 'NoSchedule' } as const;
/** Label of every real node (kwok nodes carry type=kwok). */
export const REAL_NODE_LABEL = { key: 'type', value: 'real' } as const;
export const CNI_BIN_DIR = '/usr/lib/cni';

export interface RealNodeSpec {
  readonly name: string;
  readonly netns: string;
  /** The node's address on the fabric (kubelet --node-ip, its server's address). */
  readonly ip: string;
  /** The node's pod bridge /24 and its gateway (the bridge's address, `.254`). */
  readonly subnet: string;
  readonly gateway: string;
  /** host-local's range inside the subnet: spec.podCIDR's addresses, `.1`–`.126`. */
  readonly rangeStart: string;
  readonly rangeEnd: string;
  readonly bridge: string;
  /** The node's directory (absolute). */
  readonly dir: string;
  /** The kubelet's cgroupRoot: one cgroup name under every hierarchy. */
  readonly cgroup: string;
  readonly pauseImage: string;
  readonly kubeconfig: string;
  readonly clientCaFile: string;
}

export interface NodePaths {
  readonly containerdConfig: string;
  readonly containerdSocket: string;
  readonly containerdRoot: string;
  readonly containerdState: string;
  readonly runcRoot: string;
  readonly cniConfDir: string;
  readonly cniDataDir: string;
  readonly kubeletConfig: string;
  readonly kubeletRoot: string;
  readonly podLogs: string;
}

export function nodePaths(dir: string): NodePaths {
  const p = (...s: string[]): string => path.join(dir, ...s);
  return {
    containerdConfig: p('containerd.toml'), containerdSocket: p('containerd.sock'), containerdRoot: p('containerd', 'root'),
    containerdState: p('containerd', 'state'), runcRoot: p('containerd', 'runc'), cniConfDir: p('cni', 'net.d'),
    cniDataDir: p('cni', 'ipam'), kubeletConfig: p('kubelet.yaml'), kubeletRoot: p('kubelet'), podLogs: p('pod-logs'),
  };
}

const q = (s: string): string => JSON.stringify(s); // a TOML basic string is a JSON string for these values

/**
 * containerd 1.6/1.7 configuration (version 2) for one node. restrict_oom_score_adj: this
 * machine's root lacks CAP_SYS_RESOURCE, so no process may lower its oom_score_adj; the
 * kubelet asks -998 for the pause container (and -997 for Guaranteed pods), which runc's
 * init cannot write ("can't get final child's PID from pipe: EOF"). containerd raises such
 * values to its own score (0) instead, as in rootless setups.
 */
export function containerdConfig(s: RealNodeSpec): string {
  const p = nodePaths(s.dir);
  const cri = 'plugins."io.containerd.grpc.v1.cri"';
  return `version = 2
root = ${q(p.containerdRoot)}
state = ${q(p.containerdState)}
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = ${q(p.containerdSocket)}

[ttrpc]
  address = ${q(`${p.containerdSocket}.ttrpc`)}

[plugins."io.containerd.internal.v1.opt"]
  path = ${q(path.join(s.dir, 'containerd', 'opt'))}

[${cri}]
  sandbox_image = ${q(s.pauseImage)}
  netns_mounts_under_state_dir = true
  disable_apparmor = true
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"

[${cri}.cni]
  bin_dir = ${q(CNI_BIN_DIR)}
  conf_dir = ${q(p.cniConfDir)}
  max_conf_num = 1

[${cri}.containerd]
  snapshotter = "overlayfs"
  default_runtime_name = "runc"

[${cri}.containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"

[${cri}.containerd.runtimes.runc.options]
  SystemdCgroup = false
  Root = ${q(p.runcRoot)}
`;
}

/** The node's CNI network: the bridge plugin on the node's pod bridge, host-local in its podCIDR. */
export function cniConfig(s: RealNodeSpec): string {
  return `${JSON.stringify({
    cniVersion: '0.4.0',
    name: 'outprobe-podnet',
    plugins: [{
      type: 'bridge', bridge: s.bridge, isGateway: true, ipMasq: false, hairpinMode: true,
      ipam: {
        type: 'host-local', dataDir: nodePaths(s.dir).cniDataDir,
        ranges: [[{ subnet: s.subnet, rangeStart: s.rangeStart, rangeEnd: s.rangeEnd, gateway: s.gateway }]],
        routes: [{ dst: POD_ROUTE }],
      },
    }],
  }, null, 2)}\n`;
}

/**
 * KubeletConfiguration for one node. failCgroupV1: false lets v1.35+ run on a cgroup v1
 * host (a deprecation warning, not a refusal). Eviction thresholds are low so a shared
 * test machine's disk does not evict pods; images are never garbage-collected (they
 * cannot be pulled again: there is no registry).
 */
export function kubeletConfig(s: RealNodeSpec): string {
  const p = nodePaths(s.dir);
  return stringify({
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    failCgroupV1: false,
    cgroupDriver: 'cgroupfs',
    cgroupRoot: `/${s.cgroup}`,
    cgroupsPerQOS: true,
    containerRuntimeEndpoint: `unix://${p.containerdSocket}`,
    address: s.ip,
    port: 10250,
    readOnlyPort: 0,
    healthzBindAddress: '127.0.0.1',
    healthzPort: 10248,
    authentication: { anonymous: { enabled: false }, webhook: { enabled: false }, x509: { clientCAFile: s.clientCaFile } },
    authorization: { mode: 'AlwaysAllow' },
    registerWithTaints: [REAL_NODE_TAINT],
    failSwapOn: false,
    podLogsDir: p.podLogs,
    resolvConf: '/etc/resolv.conf',
    serializeImagePulls: false,
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '1%', 'imagefs.available': '1%', 'nodefs.inodesFree': '1%' },
    maxPods: 50,
    shutdownGracePeriod: '0s',
    protectKernelDefaults: false,
  });
}

export function kubeletArgs(s: RealNodeSpec): string[] {
  const p = nodePaths(s.dir);
  return [
    `--config=${p.kubeletConfig}`, `--kubeconfig=${s.kubeconfig}`, `--root-dir=${p.kubeletRoot}`,
    `--hostname-override=${s.name}`, `--node-ip=${s.ip}`,
    `--node-labels=${REAL_NODE_LABEL.key}=${REAL_NODE_LABEL.value}`, '--v=2',
  ];
}
