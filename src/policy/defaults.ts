/**
 * Every default of a ProbePolicy, stated once. The CRD schema (`crd.ts`), the
 * zod schema and the field descriptions all read these, so `kubectl explain`,
 * the API server's defaulting and the controller's defaulting cannot drift.
 */

/** core/v1 Probe defaults (kubelet-probes.md §1.1). */
export const probeDefaults = {
  initialDelaySeconds: 0,
  timeoutSeconds: 1,
  periodSeconds: 10,
  successThreshold: 1,
  failureThreshold: 3,
} as const;

/** core/v1 HTTPGetAction and GRPCAction defaults (§1.2). */
export const handlerDefaults = {
  httpPath: '/',
  httpScheme: 'HTTP',
  grpcService: '',
} as const;

/** The probe fields of a container that `fromContainer` may name (ADR 0023). */
export const containerProbeFields = ['readinessProbe', 'livenessProbe', 'startupProbe'] as const;
export type ContainerProbeField = (typeof containerProbeFields)[number];

/** Timing and threshold fields of a probe: what a `fromContainer` probe may override. */
export const probeTimingFields = ['initialDelaySeconds', 'timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold', 'terminationGracePeriodSeconds'] as const;
export type ProbeTimingField = (typeof probeTimingFields)[number];

export const policyModes = ['Enforce', 'Observe'] as const;
export type PolicyMode = (typeof policyModes)[number];

export const livenessActions = ['Evict', 'Delete'] as const;
export type LivenessAction = (typeof livenessActions)[number];

export const httpSchemes = ['HTTP', 'HTTPS'] as const;
export type HttpScheme = (typeof httpSchemes)[number];

/** Where a policy's verdicts may come from (ADR 0040). */
export const vantageSpreads = ['node', 'zone', 'any'] as const;
export type VantageSpread = (typeof vantageSpreads)[number];

/** How several vantages' verdicts on one pod make its gate (ADR 0058). */
export const vantageDecisions = ['quorum', 'all', 'any'] as const;
export type VantageDecision = (typeof vantageDecisions)[number];
/** The most vantages a policy may ask for per pod. */
export const maxVantageCount = 3;

export const selectorOperators = ['In', 'NotIn', 'Exists', 'DoesNotExist'] as const;
export type SelectorOperator = (typeof selectorOperators)[number];

/** Policy-level defaults (DESIGN.md §2, §4). */
export const policyDefaults = {
  mode: 'Enforce',
  livenessAction: 'Evict',
  /** At most one pod of a policy remediated or not ready at once. */
  maxUnavailable: 1,
  /** Halt remediation when more than half of a policy's pods fail at once. */
  haltAbovePercentFailing: 50,
  /**
   * Panic threshold: at most half of a policy's gated pods held unready by
   * outprobe (Envoy's default panic threshold, "below 50 % healthy"; ADR 0015).
   */
  maxUnreadyPercent: 50,
  /** Ask a second replica before the first False and before any remediation (ADR 0018). */
  secondOpinion: true,
  /** Never probe a pod from its own node (ADR 0040). */
  vantageSpread: 'node',
  /** One vantage per pod (ADR 0058). */
  vantageCount: 1,
  /** False only when a majority of a pod's vantages fail (ADR 0058). */
  vantageDecision: 'quorum',
  /** Inject the readiness gate only in namespaces labelled for it, unless a policy asks (ADR 0021). */
  injectGate: false,
} as const satisfies {
  mode: PolicyMode;
  livenessAction: LivenessAction;
  maxUnavailable: number;
  haltAbovePercentFailing: number;
  maxUnreadyPercent: number;
  secondOpinion: boolean;
  vantageSpread: VantageSpread;
  vantageCount: number;
  vantageDecision: VantageDecision;
  injectGate: boolean;
};

/**
 * Hysteresis of the panic threshold, in percentage points: a policy in
 * readiness panic leaves it only when its failing share is at most
 * `maxUnreadyPercent` minus this (ADR 0015).
 */
export const panicExitMarginPercent = 10;

/** The readiness condition type when `readiness.conditionType` is not set. */
export const conditionTypePrefix = 'outprobe.io/';

/** `outprobe.io/<policy name>`: the default readiness condition (and gate) type. */
export function defaultConditionType(policyName: string): string {
  return `${conditionTypePrefix}${policyName}`;
}
