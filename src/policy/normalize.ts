import { defaultConditionType, probeDefaults, probeTimingFields } from './defaults.ts';
import type { ParsedPolicy } from './schema.ts';
import type { ParsedProbe } from './schema-probe.ts';
import type { ContainerProbeRef, PolicyProbe, ProbeHandler, ProbePolicy, ProbeSpec } from './types.ts';

/**
 * From what zod parsed (API shape, schema defaults applied) to the
 * controller's view: one handler as a tagged union, `null` for absent
 * blocks, and `conditionType` defaulted from the policy name (the one
 * default a CRD schema cannot express).
 */
export function toProbePolicy(parsed: ParsedPolicy): ProbePolicy {
  const { metadata, spec } = parsed;
  const { readiness, liveness, startup } = spec;
  return {
    metadata: {
      name: metadata.name,
      namespace: metadata.namespace,
      uid: metadata.uid,
      generation: metadata.generation,
      resourceVersion: metadata.resourceVersion,
    },
    spec: {
      selector: {
        matchLabels: spec.selector.matchLabels,
        matchExpressions: spec.selector.matchExpressions,
      },
      mode: spec.mode,
      readiness:
        readiness === undefined
          ? null
          : {
              conditionType: readiness.conditionType ?? defaultConditionType(metadata.name),
              container: readiness.container ?? null,
              probe: toPolicyProbe(readiness.probe),
              maxUnreadyPercent: readiness.maxUnreadyPercent,
              injectGate: readiness.injectGate,
            },
      liveness:
        liveness === undefined
          ? null
          : { action: liveness.action, container: liveness.container ?? null, probe: toPolicyProbe(liveness.probe) },
      startup: startup === undefined ? null : { container: startup.container ?? null, probe: toPolicyProbe(startup.probe) },
      remediation: spec.remediation,
      secondOpinion: spec.secondOpinion,
      vantage: { spread: spec.vantage.spread, count: spec.vantage.count, decision: spec.vantage.decision },
    },
  };
}

function toHandler(probe: ParsedProbe): ProbeHandler {
  if (probe.httpGet !== undefined) {
    const { path, port, scheme, httpHeaders } = probe.httpGet;
    return { type: 'httpGet', path, port, scheme, httpHeaders };
  }
  if (probe.tcpSocket !== undefined) return { type: 'tcpSocket', port: probe.tcpSocket.port };
  if (probe.grpc !== undefined) return { type: 'grpc', port: probe.grpc.port, service: probe.grpc.service };
  if (probe.exec?.command !== undefined) return { type: 'exec', command: probe.exec.command };
  // The schema guarantees exactly one handler; reaching here is a bug.
  throw new TypeError('probe has no handler after validation');
}

/** A parsed handler probe with the kubelet's defaults for the fields not written. */
export function toProbeSpec(probe: ParsedProbe): ProbeSpec {
  const d = probeDefaults;
  return {
    handler: toHandler(probe),
    initialDelaySeconds: probe.initialDelaySeconds ?? d.initialDelaySeconds,
    timeoutSeconds: probe.timeoutSeconds ?? d.timeoutSeconds,
    periodSeconds: probe.periodSeconds ?? d.periodSeconds,
    successThreshold: probe.successThreshold ?? d.successThreshold,
    failureThreshold: probe.failureThreshold ?? d.failureThreshold,
    terminationGracePeriodSeconds: probe.terminationGracePeriodSeconds ?? null,
  };
}

/** A `fromContainer` probe keeps only what its author wrote (ADR 0023); a handler probe is defaulted. */
function toPolicyProbe(probe: ParsedProbe): PolicyProbe {
  if (probe.fromContainer === undefined) return toProbeSpec(probe);
  const overrides: Partial<Record<(typeof probeTimingFields)[number], number>> = {};
  for (const field of probeTimingFields) {
    const v = probe[field];
    if (v !== undefined) overrides[field] = v;
  }
  const ref: ContainerProbeRef = { fromContainer: probe.fromContainer, overrides };
  return ref;
}
