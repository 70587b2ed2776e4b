/**
 * The kubelet's readiness folding, ported from k8s.io/kubernetes v1.37.2
 * pkg/kubelet/status/generate.go (GenerateContainersReadyCondition,
 * GeneratePodReadyCondition) and status_manager.go (updateLastTransitionTime).
 * Pure: the pod and the container statuses arrive as plain data.
 */

/** What the folding reads of a pod's spec. */
export interface FoldSpec {
  readonly generation: number;
  /** `spec.containers[].name`, in order. */
  readonly containers: readonly string[];
  /** `spec.initContainers[].name` with `restartPolicy: Always` (sidecars), in order. */
  readonly restartableInitContainers: readonly string[];
  /** `spec.readinessGates[].conditionType`, in order. */
  readonly readinessGates: readonly string[];
}

export interface ContainerReadiness {
  readonly name: string;
  readonly ready: boolean;
}

export interface FoldCondition {
  readonly type: string;
  readonly status: string;
}

/** A generated condition; `''` reason or message means the field is absent, as in Go. */
export interface GeneratedCondition {
  readonly type: 'Ready' | 'ContainersReady';
  readonly status: 'True' | 'False';
  readonly reason: string;
  readonly message: string;
  readonly observedGeneration: number;
}

export const UnknownContainerStatuses = 'UnknownContainerStatuses';
export const PodCompleted = 'PodCompleted';
export const PodFailed = 'PodFailed';
export const ContainersNotReady = 'ContainersNotReady';
export const ReadinessGatesNotReady = 'ReadinessGatesNotReady';

/** Go's `fmt.Sprintf("%s", []string{...})`: `[a b]`. */
const goList = (names: readonly string[]): string => `[${names.join(' ')}]`;

function condition(type: GeneratedCondition['type'], spec: FoldSpec, status: 'True' | 'False', reason = '', message = ''): GeneratedCondition {
  // PodObservedGenerationTracking is GA (locked on) in v1.37: the pod's generation.
  return { type, status, reason, message, observedGeneration: spec.generation };
}

/**
 * GenerateContainersReadyCondition. `statuses` undefined is Go's nil slice
 * (no container statuses at all), distinct from an empty list.
 */
export function generateContainersReadyCondition(spec: FoldSpec, statuses: readonly ContainerReadiness[] | undefined, phase: string): GeneratedCondition {
  if (statuses === undefined) return condition('ContainersReady', spec, 'False', UnknownContainerStatuses);
  const unknown: string[] = [];
  const unready: string[] = [];
  for (const name of [...spec.restartableInitContainers, ...spec.containers]) {
    const s = statuses.find((c) => c.name === name);
    if (s === undefined) unknown.push(name);
    else if (!s.ready) unready.push(name);
  }
  if (phase === 'Succeeded' && unknown.length === 0) return condition('ContainersReady', spec, 'False', PodCompleted);
  if (phase === 'Failed') return condition('ContainersReady', spec, 'False', PodFailed);
  const messages: string[] = [];
  if (unknown.length > 0) messages.push(`containers with unknown status: ${goList(unknown)}`);
  if (unready.length > 0) messages.push(`containers with unready status: ${goList(unready)}`);
  if (messages.length > 0) return condition('ContainersReady', spec, 'False', ContainersNotReady, messages.join(', '));
  return condition('ContainersReady', spec, 'True');
}

/**
 * GeneratePodReadyCondition: True only when ContainersReady is True and every
 * readiness gate's condition (looked up in `conditions`) is True.
 */
export function generatePodReadyCondition(
  spec: FoldSpec,
  conditions: readonly FoldCondition[],
  statuses: readonly ContainerReadiness[] | undefined,
  phase: string,
): GeneratedCondition {
  const containersReady = generateContainersReadyCondition(spec, statuses, phase);
  if (containersReady.status !== 'True') {
    return condition('Ready', spec, containersReady.status, containersReady.reason, containersReady.message);
  }
  const messages: string[] = [];
  for (const gate of spec.readinessGates) {
    const c = conditions.find((x) => x.type === gate);
    if (c === undefined) messages.push(`corresponding condition of pod readiness gate ${JSON.stringify(gate)} does not exist.`);
    else if (c.status !== 'True') messages.push(`the status of pod readiness gate ${JSON.stringify(gate)} is not "True", but ${c.status}`);
  }
  if (messages.length > 0) return condition('Ready', spec, 'False', ReadinessGatesNotReady, messages.join(', '));
  return condition('Ready', spec, 'True');
}

/**
 * The status manager's updateLastTransitionTime: the old condition's time
 * when the status did not change, else `now` (RFC 3339, whole seconds, as
 * metav1.Time serialises).
 */
export function lastTransitionTime(newStatus: string, old: { readonly status: string; readonly lastTransitionTime?: string | undefined } | undefined, nowMs: number): string {
  if (old !== undefined && old.status === newStatus && old.lastTransitionTime !== undefined) return old.lastTransitionTime;
  return rfc3339(nowMs);
}

export function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
}
