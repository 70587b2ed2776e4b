/**
 * The node agent (ADR 0014): per node, the kubelet's part for readiness —
 * containers' own probes run from the node, ContainersReady, and readiness
 * gates folded into Ready as the kubelet's status manager does.
 */
export { NodeAgent } from './agent.ts';
export type { LogEntry, NodeAgentOptions } from './agent.ts';
export { createRunProbe } from './probers.ts';
export { projectAgentPod } from './pod.ts';
export type { AgentContainer, AgentPod } from './pod.ts';
export { toProbeSpec } from './probe-spec.ts';
export {
  ContainersNotReady, generateContainersReadyCondition, generatePodReadyCondition, lastTransitionTime,
  PodCompleted, PodFailed, ReadinessGatesNotReady, UnknownContainerStatuses,
} from './readiness.ts';
export type { ContainerReadiness, FoldCondition, FoldSpec, GeneratedCondition } from './readiness.ts';
export { applyRestarts, nextContainerId } from './restart.ts';
export { foldSpec, statusPatch } from './status.ts';
export type { ConditionChange, ReadyVerdict, StatusPatch } from './status.ts';
export type { RunProbe } from './worker.ts';
