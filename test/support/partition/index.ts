/**
 * The partition scenario of issue 12 (ADR 0014): a world of 4 nodes, 3 gated web
 * pods behind a Service, one outprobe replica and a Service client on the infra
 * node; cut() partitions one pod from every other node and times each step of
 * the chain (outprobe detection, gate write, Ready fold, EndpointSlice,
 * kube-proxy), heal() the way back.
 */
export { breakdown, GATE, startPartitionWorld } from './world.ts';
export type { CutResult, HealResult, OutprobeLine, WebPod, World, WorldOptions } from './world.ts';
export { routedIps, Timeline } from './timeline.ts';
export type { Change, Signal, TimelineOptions } from './timeline.ts';
