import { defaultConditionType } from './defaults.ts';
import type { ParsedPolicy } from './schema.ts';
import type { ParsedProbe } from './schema-probe.ts';
import type { ProbeHandler, ProbePolicy, ProbeSpec } from './types.ts';

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
              probe: toProbeSpec(readiness.probe),
              maxUnreadyPercent: readiness.maxUnreadyPercent,
              injectGate: readiness.injectGate,
            },
      liveness:
        liveness === undefined
          ? null
          : { action: liveness.action, container: liveness.container ?? null, probe: toProbeSpec(liveness.probe) },
      startup: startup === undefined ? null : { container: startup.container ?? null, probe: toProbeSpec(startup.probe) },
      remediation: spec.remediation,
      secondOpinion: spec.secondOpinion,
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

export function toProbeSpec(probe: ParsedProbe): ProbeSpec {
  return {
    handler: toHandler(probe),
    initialDelaySeconds: probe.initialDelaySeconds,
    timeoutSeconds: probe.timeoutSeconds,
    periodSeconds: probe.periodSeconds,
    successThreshold: probe.successThreshold,
    failureThreshold: probe.failureThreshold,
    terminationGracePeriodSeconds: probe.terminationGracePeriodSeconds ?? null,
  };
}
