// A real pod network of network namespaces for the local plane (ADR 0014): a fabric
// bridge in the root namespace, a namespace per node routing between its pod bridge and
// the fabric, a namespace per pod or other sandbox, nftables faults, and clean-up that
// survives a crashed run. Needs root, `ip` (iproute2) and `nft` (nftables).
//
// Delay cannot be injected: the kernel has no sch_netem and nft's `queue` verdict fails
// (CONFIG_NFT_QUEUE unset), so neither netem nor a user-space delayer is possible here;
// slow pods are emulated by the pod server instead.
export { createPodNet, sweepStale } from './podnet.ts';
export type { NodeNet, PodNet, PodNetOptions, Sandbox } from './podnet.ts';
export type { FaultHandle, Faults } from './faults.ts';
export type { Degrade } from './rules.ts';
export { podNetSupport } from './support.ts';
export type { Support } from './support.ts';
export { addressPlan, MAX_NODES, SLOTS, FAMILY, NODE_BRIDGE, NODE_UPLINK, slotOfName } from './plan.ts';
export type { AddressPlan, NodePlan } from './plan.ts';
