// Real nodes for the local plane (docs/adr/0047-real-nodes.md): a real kubelet with
// containerd and runc per node, in the node's network namespace of the pod network
// (ADR 0014), pods wired by the CNI bridge and host-local plugins.
export { startRealNode, specFor, createCgroup } from './node.ts';
export type { RealNode, RealNodeDeps } from './node.ts';
export { containerdConfig, cniConfig, kubeletConfig, kubeletArgs, nodePaths, REAL_NODE_TAINT, REAL_NODE_LABEL, POD_ROUTE } from './config.ts';
export type { RealNodeSpec } from './config.ts';
export { realNodeSupport } from './support.ts';
export type { RealNodeSupport } from './support.ts';
export { kubeletBinary } from './kubelet.ts';
export { KUBELET_TUNABLES, restoreTunables, snapshotTunables } from './sysctls.ts';
