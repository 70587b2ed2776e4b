/**
 * The results stage: the kubelet's per-worker state machine (`doProbe` in
 * pkg/kubelet/prober/worker.go) plus its results cache, as pure functions over
 * plain state (kubelet-probes.md §2–§4). A pass is `decide` (steps 1–9), then,
 * if it says `probe`, the probe itself (elsewhere), then `record` (steps 11–13).
 * Only changes of a target's committed value leave this stage, as Transitions.
 */
export { decide, decideActions, decideReasons } from './decide.ts';
export type { DecideAction, DecideReason, Decision } from './decide.ts';
export { containerStarted, decideContainer } from './gating.ts';
export type { ContainerDecisions, ContainerTargets } from './gating.ts';
export { isNewInstance, sameInstance } from './instance.ts';
export type { InstanceId } from './instance.ts';
export { confirmedResult, record, recordReasons } from './record.ts';
export type { RecordReason, RecordResult } from './record.ts';
export { initialResult, probeResults } from './result.ts';
export type { CountedResult, ProbeResult } from './result.ts';
export { createTarget, defaultTargetConfig, reconfigure, restartGracePeriodMs, targetKeyString } from './target.ts';
export type { CreateTargetOptions, ErrorStreak, Seed, TargetConfig, TargetKey, TargetState } from './target.ts';
export { transitionCauses } from './transition.ts';
export type { Transition, TransitionCause } from './transition.ts';
export { instanceOf } from './view.ts';
export type { ContainerObservation, ContainerState, ContainerView, PodPhase, PodView, TargetView } from './view.ts';
