import type { ProbeKind } from '../kernel/index.ts';
import type { ProbePolicy, ProbeSpec } from './types.ts';

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
  const cap = (kind: ProbeKind, probe: ProbeSpec): ProbeSpec => {
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
  return { policy: capped.length === 0 ? policy : { ...policy, spec }, capped };
}
