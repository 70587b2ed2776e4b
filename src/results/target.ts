import type { ProbeKind } from '../kernel/index.ts';
import type { InstanceId } from './instance.ts';
import type { CountedResult, ProbeResult } from './result.ts';

/**
 * One target: the kubelet's (pod UID, container, kind) worker, per policy.
 * A new pod UID is a new target, never an update of an old one.
 */
export interface TargetKey {
  readonly podUid: string;
  readonly container: string;
  readonly kind: ProbeKind;
  /** The ProbePolicy the probe comes from (opaque here, e.g. `namespace/name`). */
  readonly policy: string;
}

/** A stable string for maps and logs: `policy/podUid/container/kind`. */
export function targetKeyString(key: TargetKey): string {
  return `${key.policy}/${key.podUid}/${key.container}/${key.kind}`;
}

/** The probe fields the state machine needs, after core/v1 defaulting (§1.1). */
export interface TargetConfig {
  /** Consecutive successes to commit Success; must be 1 for liveness and startup. @default 1 */
  readonly successThreshold: number;
  /** Consecutive failures to commit Failure. @default 3 */
  readonly failureThreshold: number;
  /** Whole seconds after `startedAt` before the first probe. @default 0 */
  readonly initialDelaySeconds: number;
}

export const defaultTargetConfig: TargetConfig = {
  successThreshold: 1,
  failureThreshold: 3,
  initialDelaySeconds: 0,
};

/**
 * A committed value the target inherits instead of starting fresh, e.g. a
 * gate condition already True when the controller restarts or takes over a
 * shard (§3.9, design rule 5). It replaces the initial value for the first
 * container instance the target sees, so nothing flips until the target's own
 * probes cross a threshold (or the container is seen not running).
 */
export interface Seed {
  readonly value: ProbeResult;
  /**
   * Honour the seed only if the first instance seen started before this time
   * (ms). Pass the time the prober began watching − `restartGracePeriodMs`
   * to mirror the kubelet's restart rule.
   * @default undefined (honoured whatever the start time)
   */
  readonly startedBefore?: number | undefined;
}

/**
 * The kubelet's `kubeletRestartGracePeriod` (prober_manager.go): a container
 * that started less than this before the prober began watching it is treated
 * as new after a restart, since the previous prober may never have probed it.
 */
export const restartGracePeriodMs = 10_000;

/** The last run of errored attempts, kept so callers can surface it (§4 improvement). */
export interface ErrorStreak {
  readonly error: string;
  readonly at: number;
  /** Errored attempts in a row, across instances, until a counted outcome. */
  readonly consecutive: number;
}

/**
 * Everything one target remembers between passes. Plain readonly data: every
 * function here returns a new state and never mutates its input.
 */
export interface TargetState {
  readonly key: TargetKey;
  readonly config: TargetConfig;
  /** The instance last seen; `null` until a container with an ID is seen. */
  readonly instance: InstanceId | null;
  /** The cached value downstream knows about; `null` before anything is committed. */
  readonly committed: ProbeResult | null;
  readonly lastResult: CountedResult | null;
  readonly resultRun: number;
  /** Set after a committed liveness Failure or any committed startup result (§3.3). */
  readonly onHold: boolean;
  /** The target is finished for good (pod finished, deleted, replaced, or container gone). */
  readonly stopped: boolean;
  /** A seed not yet applied; consumed by the first instance seen. */
  readonly seed: Seed | null;
  /** Readiness: the next probe decision carries `probeNow` (§3.6 improvement). */
  readonly probeNowArmed: boolean;
  readonly lastError: ErrorStreak | null;
}

export interface CreateTargetOptions {
  /** Missing fields take `defaultTargetConfig`. */
  readonly config?: Partial<TargetConfig> | undefined;
  /** @default undefined (start from the kind's initial value) */
  readonly seed?: Seed | undefined;
}

/**
 * A fresh target, normally created before its container exists. Throws a
 * RangeError on a config that core/v1 validation would reject, since that is
 * a bug upstream (the policy stage validates and defaults).
 */
export function createTarget(key: TargetKey, options: CreateTargetOptions = {}): TargetState {
  const config = checkedConfig(key.kind, { ...defaultTargetConfig, ...options.config });
  const seed = options.seed ?? null;
  return {
    key,
    config,
    instance: null,
    committed: seed === null ? null : seed.value,
    lastResult: null,
    resultRun: 0,
    onHold: false,
    stopped: false,
    seed,
    probeNowArmed: false,
    lastError: null,
  };
}

/**
 * A changed probe (handler, timeout or threshold): counters restart, as in the
 * mutable worker (§3.10). The committed value, hold and instance are kept.
 */
export function reconfigure(state: TargetState, config: Partial<TargetConfig>): TargetState {
  const next = checkedConfig(state.key.kind, { ...state.config, ...config });
  return { ...state, config: next, lastResult: null, resultRun: 0 };
}

function checkedConfig(kind: ProbeKind, config: TargetConfig): TargetConfig {
  const { successThreshold, failureThreshold, initialDelaySeconds } = config;
  if (!Number.isInteger(successThreshold) || successThreshold < 1) {
    throw new RangeError(`successThreshold must be an integer >= 1, got ${successThreshold}`);
  }
  if (kind !== 'readiness' && successThreshold !== 1) {
    throw new RangeError(`successThreshold must be 1 for ${kind} probes, got ${successThreshold}`);
  }
  if (!Number.isInteger(failureThreshold) || failureThreshold < 1) {
    throw new RangeError(`failureThreshold must be an integer >= 1, got ${failureThreshold}`);
  }
  if (!Number.isInteger(initialDelaySeconds) || initialDelaySeconds < 0) {
    throw new RangeError(`initialDelaySeconds must be an integer >= 0, got ${initialDelaySeconds}`);
  }
  return sharedConfig(successThreshold, failureThreshold, initialDelaySeconds);
}

/**
 * Targets hold their thresholds in one object per distinct value, not one
 * each: policies name few distinct configs (issue 17). Configs are read-only
 * data; the cache is bounded (cleared when full).
 */
const configs = new Map<string, TargetConfig>();
const maxConfigs = 1024;

function sharedConfig(successThreshold: number, failureThreshold: number, initialDelaySeconds: number): TargetConfig {
  const key = `${successThreshold}/${failureThreshold}/${initialDelaySeconds}`;
  let config = configs.get(key);
  if (config === undefined) {
    if (configs.size >= maxConfigs) configs.clear();
    config = Object.freeze({ successThreshold, failureThreshold, initialDelaySeconds });
    configs.set(key, config);
  }
  return config;
}
