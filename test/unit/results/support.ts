// Fixtures for the results tests: a pod, a running container, and a pass
// driver (decide, then record when it says probe), all with explicit times.
import type { ProbeKind } from '../../../src/kernel/index.ts';
import type { Outcome } from '../../../src/probing/outcome.ts';
import { createTarget, decide, record } from '../../../src/results/index.ts';
import type {
  ContainerView,
  CreateTargetOptions,
  Decision,
  PodView,
  TargetKey,
  TargetState,
  TargetView,
  Transition,
} from '../../../src/results/index.ts';

export const T0 = 1_700_000_000_000;

export function key(kind: ProbeKind): TargetKey {
  return { podUid: 'uid-1', container: 'app', kind, policy: 'ns/policy' };
}

export function pod(overrides: Partial<PodView> = {}): PodView {
  return { uid: 'uid-1', phase: 'Running', ...overrides };
}

/** A container running since a minute before T0. */
export function running(overrides: Partial<ContainerView> = {}): ContainerView {
  return { containerId: 'containerd://a', restartCount: 0, state: 'running', startedAt: T0 - 60_000, ...overrides };
}

export function view(container: ContainerView | undefined = running(), overrides: Partial<TargetView> = {}): TargetView {
  return { pod: pod(), container, started: true, ...overrides };
}

export function target(kind: ProbeKind, options: CreateTargetOptions = {}): TargetState {
  return createTarget(key(kind), options);
}

/** A target that has already seen the default running container (initial value written). */
export function seen(kind: ProbeKind, options: CreateTargetOptions = {}): TargetState {
  return decide(target(kind, options), view(), T0).state;
}

export interface PassResult {
  readonly state: TargetState;
  readonly decision: Decision;
  /** Transitions from decide and record, in order. */
  readonly emitted: readonly Transition[];
}

/** One full pass: decide, and if it says probe, record the outcome. */
export function pass(state: TargetState, outcome: Outcome, now = T0, v: TargetView = view()): PassResult {
  const decision = decide(state, v, now);
  const emitted: Transition[] = decision.emitted === null ? [] : [decision.emitted];
  if (decision.action !== 'probe') return { state: decision.state, decision, emitted };
  const recorded = record(decision.state, outcome, now, decision.state.instance ?? undefined);
  if (recorded.emitted !== null) emitted.push(recorded.emitted);
  return { state: recorded.state, decision, emitted };
}

/** Records outcomes in order straight into `record` (no decide), returning each step's state. */
export function recordAll(state: TargetState, outcomes: readonly Outcome[], now = T0): TargetState[] {
  const states: TargetState[] = [];
  let current = state;
  for (const outcome of outcomes) {
    current = record(current, outcome, now).state;
    states.push(current);
  }
  return states;
}
