import type { ContainerProbeField, HttpScheme, LivenessAction, PolicyMode, ProbeTimingField, SelectorOperator, VantageDecision, VantageSpread } from './defaults.ts';

/**
 * A ProbePolicy after validation and defaulting: what the rest of the
 * controller works with. Every optional field of the API object has its
 * default here; an absent probe block is `null`.
 */
export interface ProbePolicy {
  readonly metadata: PolicyMetadata;
  readonly spec: ProbePolicySpec;
}

export interface PolicyMetadata {
  readonly name: string;
  /** Absent only on manifests not yet applied (fixtures); always set on objects read from the API. */
  readonly namespace?: string | undefined;
  readonly uid?: string | undefined;
  readonly generation?: number | undefined;
  readonly resourceVersion?: string | undefined;
}

export interface ProbePolicySpec {
  /** Pods in the policy's namespace that it applies to. `{}` selects every pod. */
  readonly selector: LabelSelector;
  /** @default 'Enforce' */
  readonly mode: PolicyMode;
  readonly readiness: ReadinessSpec | null;
  readonly liveness: LivenessSpec | null;
  readonly startup: StartupSpec | null;
  readonly remediation: RemediationSpec;
  /**
   * Before the first False of a pod's gate and before any eviction or delete,
   * the next replica in the pod's rendezvous order probes it from its own
   * node; outprobe acts only if it fails there too (ADR 0018). Does nothing
   * with one replica. Always set by validation; absent (hand-built
   * policies) counts as true. @default true
   */
  readonly secondOpinion?: boolean;
  /**
   * Where the verdicts come from (ADR 0040): `node` never from the pod's own
   * node, `zone` from another zone where possible, else another node, `any`
   * from any replica. Always set by validation; absent (hand-built policies)
   * counts as `node`. @default { spread: 'node' }
   */
  readonly vantage?: VantageSpec;
}

export interface VantageSpec {
  readonly spread: VantageSpread;
  /**
   * How many replicas probe each pod, each from its own vantage (ADR 0058);
   * absent counts as 1. @default 1
   */
  readonly count?: number;
  /** How their verdicts make the gate: `quorum` (a majority failing), `all`, `any`. @default 'quorum' */
  readonly decision?: VantageDecision;
}

export interface LabelSelector {
  readonly matchLabels: Readonly<Record<string, string>>;
  readonly matchExpressions: readonly LabelSelectorRequirement[];
}

export interface LabelSelectorRequirement {
  readonly key: string;
  readonly operator: SelectorOperator;
  readonly values: readonly string[];
}

export interface ReadinessSpec {
  /** @default `outprobe.io/<policy name>` */
  readonly conditionType: string;
  /** `null`: the pod's first regular container (not a sidecar). */
  readonly container: string | null;
  readonly probe: PolicyProbe;
  /**
   * Panic threshold, 0–100: outprobe never holds more than this percentage
   * (rounded down) of the policy's gated pods False; above it, it fails open
   * (writes True, reason PanicFailOpen). 100 disables the guard. @default 50
   */
  readonly maxUnreadyPercent: number;
  /**
   * The gate-injection webhook adds conditionType to spec.readinessGates of
   * new pods this policy selects (Enforce mode), even in namespaces without
   * the `outprobe.io/inject-readiness-gates: enabled` label (ADR 0021).
   * Always set by validation; absent (hand-built policies) counts as false.
   * @default false
   */
  readonly injectGate?: boolean;
}

export interface LivenessSpec {
  /** Also used for startup-probe failures. @default 'Evict' */
  readonly action: LivenessAction;
  readonly container: string | null;
  readonly probe: PolicyProbe;
}

export interface StartupSpec {
  readonly container: string | null;
  readonly probe: PolicyProbe;
}

export interface RemediationSpec {
  /** A count, or a percentage string ("25%") of the policy's selected pods. @default 1 */
  readonly maxUnavailable: number | string;
  /** 0–100. @default 50 */
  readonly haltAbovePercentFailing: number;
}

/**
 * A core/v1 Probe with defaults applied. Structurally a `results`
 * TargetConfig (successThreshold, failureThreshold, initialDelaySeconds);
 * `probeTiming()` gives the executors' and scheduler's milliseconds.
 */
export interface ProbeSpec {
  readonly handler: ProbeHandler;
  /** @default 0 */
  readonly initialDelaySeconds: number;
  /** @default 1 */
  readonly timeoutSeconds: number;
  /** @default 10 */
  readonly periodSeconds: number;
  /** @default 1 (and always 1 for liveness and startup) */
  readonly successThreshold: number;
  /** @default 3 */
  readonly failureThreshold: number;
  /** `null`: the pod's `spec.terminationGracePeriodSeconds`. Never set on readiness. */
  readonly terminationGracePeriodSeconds: number | null;
}

/** A probe block's probe: one written in the policy, or the selected container's own (ADR 0023). */
export type PolicyProbe = ProbeSpec | ContainerProbeRef;

/**
 * `fromContainer`: run, from outside, the probe the selected container
 * declares in the pod spec (resolved per pod by the targets stage). Only the
 * fields the policy author wrote are in `overrides`; the rest come from the
 * container's probe, then the kubelet's defaults.
 */
export interface ContainerProbeRef {
  readonly fromContainer: ContainerProbeField;
  readonly overrides: Readonly<Partial<Record<ProbeTimingField, number>>>;
  /**
   * Whether a container's exec probe may run (the controller's exec flags
   * for the policy's namespace); when not, the message says why and the
   * target is reported instead. Set by validation; absent counts as refused.
   * @default undefined (refused: exec probes are disabled)
   */
  readonly exec?: { readonly allowed: true } | { readonly allowed: false; readonly message: string };
  /** The controller's --max-probe-timeout, applied to the resolved timeout. @default undefined (no cap) */
  readonly maxTimeoutSeconds?: number;
}

/** A port as written: a number, or a container port name resolved per pod (§1.3). */
export type PortRef = number | string;

export interface HttpHeader {
  readonly name: string;
  readonly value: string;
}

export type ProbeHandler =
  | { readonly type: 'exec'; readonly command: readonly string[] }
  | {
      readonly type: 'httpGet';
      /** @default '/' */
      readonly path: string;
      readonly port: PortRef;
      /** @default 'HTTP' */
      readonly scheme: HttpScheme;
      readonly httpHeaders: readonly HttpHeader[];
    }
  | { readonly type: 'tcpSocket'; readonly port: PortRef }
  | {
      readonly type: 'grpc';
      readonly port: number;
      /** @default '' (the server's overall health) */
      readonly service: string;
    };

export type ProbeHandlerType = ProbeHandler['type'];
