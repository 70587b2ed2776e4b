import type { ProbeKind } from '../kernel/index.ts';
import { isContainerProbeRef } from './from-container.ts';
import type { PolicyProbe, ProbePolicy } from './types.ts';

/** The controller's default `--max-probe-timeout`, in seconds. */
export const defaultMaxProbeTimeoutSeconds = 60;

/** A probe whose `timeoutSeconds` was above the controller's maximum. */
export interface CappedTimeout {
  readonly kind: ProbeKind;
  readonly requestedSeconds: number;
  readonly appliedSeconds: number;
}

/**
 * Lowers every probe's `timeoutSeconds` to `maxSeconds` (the controller's
 * `--max-probe-timeout`) and lists the probes it lowered. A probe slot is
 * held for up to a timeout, so a policy author's 3600 s timeout against a
 * target that never answers would hold slots for an hour; the kubelet has
 * no such cap, which is why each capped probe is reported.
 */
export function capProbeTimeouts(policy: ProbePolicy, maxSeconds: number): { readonly policy: ProbePolicy; readonly capped: readonly CappedTimeout[] } {
  const capped: CappedTimeout[] = [];
  const cap = (kind: ProbeKind, probe: PolicyProbe): PolicyProbe => {
    if (isContainerProbeRef(probe)) {
      // The container's own timeout is capped per pod when the probe is resolved (ADR 0023); a written one is reported here.
      const written = probe.overrides.timeoutSeconds;
      if (written === undefined || written <= maxSeconds) return { ...probe, maxTimeoutSeconds: maxSeconds };
      capped.push({ kind, requestedSeconds: written, appliedSeconds: maxSeconds });
      return { ...probe, maxTimeoutSeconds: maxSeconds, overrides: { ...probe.overrides, timeoutSeconds: maxSeconds } };
    }
    if (probe.timeoutSeconds <= maxSeconds) return probe;
    capped.push({ kind, requestedSeconds: probe.timeoutSeconds, appliedSeconds: maxSeconds });
    return { ...probe, timeoutSeconds: maxSeconds };
  };
  const { startup, liveness, readiness } = policy.spec;
  const spec = {
    ...policy.spec,
    startup: startup === null ? null : { ...startup, probe: cap('startup', startup.probe) },
    liveness: liveness === null ? null : { ...liveness, probe: cap('liveness', liveness.probe) },
    readiness: readiness === null ? null : { ...readiness, probe: cap('readiness', readiness.probe) },
  };
  const changed = spec.startup?.probe !== startup?.probe || spec.liveness?.probe !== liveness?.probe || spec.readiness?.probe !== readiness?.probe;
  return { policy: changed ? { ...policy, spec } : policy, capped };
}
