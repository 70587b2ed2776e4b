import { z } from 'zod';
import { containerProbeFields, handlerDefaults, httpSchemes } from './defaults.ts';
import { coded } from './issues.ts';
import { isHttpHeaderValue, isHttpToken, messages, portProblem } from './rules.ts';

/**
 * zod schemas for the core/v1 Probe shape inside a ProbePolicy. They mirror
 * the CRD (`crd.ts`): same fields, bounds, defaults and messages. Unknown
 * fields are stripped, as the API server prunes them.
 */

export const int32Max = 2_147_483_647;

/** Bounds shared with the CRD; they also keep its CEL rules within the cost budget. */
export const probeLimits = {
  commandItems: 128,
  commandItemLength: 4096,
  headers: 64,
  headerNameLength: 256,
  headerValueLength: 4096,
  pathLength: 2048,
  grpcServiceLength: 1024,
  hostLength: 253,
} as const;

/**
 * Caps on the probe fields that become timers or deadlines. core/v1 accepts
 * any int32 (and int64 for the grace period), but Node.js fires a timer
 * longer than 2^31 − 1 ms (about 24.8 days) after 1 ms, so a huge
 * timeoutSeconds used to fail healthy pods at once. The executors chain long
 * timers anyway; these caps keep every value in a range that makes sense for
 * a probe and that the CRD rejects up front.
 */
export const timingLimits = {
  timeoutSeconds: 3600,
  periodSeconds: 3600,
  initialDelaySeconds: 86_400,
  /** Not a timer in outprobe (sent to the API server); the cap keeps it an exact JS integer, as the CRD's int64 would not. */
  terminationGracePeriodSeconds: int32Max,
} as const;

const intOrString = z.custom<number | string>((v) => Number.isInteger(v) || typeof v === 'string', {
  error: 'must be of type integer or string',
  ...coded('invalid_type'),
});

/** httpGet.port and tcpSocket.port: a number 1–65535 or an IANA_SVC_NAME. */
export const portSchema = intOrString.superRefine((port, ctx) => {
  const problem = portProblem(port);
  if (problem !== null) ctx.addIssue({ code: 'custom', message: problem, ...coded('port_invalid') });
});

/** `host` is declared only so that it can be refused with a clear message. */
function refuseHost(value: { readonly host?: string | undefined }, ctx: z.RefinementCtx): void {
  if (value.host !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['host'], message: messages.hostNotAllowed, ...coded('host_not_allowed') });
  }
}

const execSchema = z
  .object({
    command: z.array(z.string().max(probeLimits.commandItemLength)).max(probeLimits.commandItems).optional(),
  })
  .superRefine((exec, ctx) => {
    if (exec.command === undefined || exec.command.length === 0) {
      ctx.addIssue({ code: 'custom', path: ['command'], message: messages.execCommand, ...coded('exec_command_empty') });
    }
  });

const headerSchema = z.object({
  name: z
    .string()
    .max(probeLimits.headerNameLength)
    .refine(isHttpToken, { message: messages.headerName, ...coded('header_name_invalid') }),
  value: z
    .string()
    .max(probeLimits.headerValueLength)
    .refine(isHttpHeaderValue, { message: messages.headerValue, ...coded('header_value_invalid') }),
});

const httpGetSchema = z
  .object({
    path: z.string().max(probeLimits.pathLength).default(handlerDefaults.httpPath),
    port: portSchema,
    host: z.string().max(probeLimits.hostLength).optional(),
    scheme: z.enum(httpSchemes).default(handlerDefaults.httpScheme),
    httpHeaders: z.array(headerSchema).max(probeLimits.headers).default([]),
  })
  .superRefine(refuseHost);

const tcpSocketSchema = z.object({ port: portSchema, host: z.string().max(probeLimits.hostLength).optional() }).superRefine(refuseHost);

const grpcSchema = z.object({
  port: z.int().superRefine((port, ctx) => {
    if (portProblem(port) !== null) ctx.addIssue({ code: 'custom', message: messages.portNumber, ...coded('port_invalid') });
  }),
  service: z.string().max(probeLimits.grpcServiceLength).default(handlerDefaults.grpcService),
});

const handlerKeys = ['exec', 'httpGet', 'tcpSocket', 'grpc'] as const;

/**
 * A core/v1 Probe, or `fromContainer` with optional overrides (ADR 0023).
 * Thresholds, period and timeout have a minimum of 1: the API server replaces
 * an explicit 0 with the default only in Pods, while outprobe defaults only
 * absent fields, so it rejects 0 rather than reinterpret it (core/v1
 * documents "Minimum value is 1" for all four). Timing fields have lower
 * maximums than core/v1 (`timingLimits`). They carry no schema default: a
 * `fromContainer` probe must tell the fields its author wrote from the ones
 * it takes from the container; `toProbeSpec` applies the kubelet's defaults.
 */
export const probeSchema = z
  .object({
    fromContainer: z.enum(containerProbeFields).optional(),
    exec: execSchema.optional(),
    httpGet: httpGetSchema.optional(),
    tcpSocket: tcpSocketSchema.optional(),
    grpc: grpcSchema.optional(),
    initialDelaySeconds: z.int().min(0).max(timingLimits.initialDelaySeconds).optional(),
    timeoutSeconds: z.int().min(1).max(timingLimits.timeoutSeconds).optional(),
    periodSeconds: z.int().min(1).max(timingLimits.periodSeconds).optional(),
    successThreshold: z.int().min(1).max(int32Max).optional(),
    failureThreshold: z.int().min(1).max(int32Max).optional(),
    terminationGracePeriodSeconds: z
      .int()
      .max(timingLimits.terminationGracePeriodSeconds)
      .refine((v) => v > 0, { message: messages.gracePeriodPositive, ...coded('out_of_range') })
      .optional(),
  })
  .superRefine((probe, ctx) => {
    const present = handlerKeys.filter((key) => probe[key] !== undefined);
    if (probe.fromContainer !== undefined) {
      for (const key of present) ctx.addIssue({ code: 'custom', path: [key], message: messages.fromContainerHandler, ...coded('from_container_with_handler') });
      return;
    }
    // As validateHandler: every handler after the first is reported on its own field.
    if (present.length === 0) ctx.addIssue({ code: 'custom', message: messages.noHandler, ...coded('handler_count') });
    for (const key of present.slice(1)) {
      ctx.addIssue({ code: 'custom', path: [key], message: messages.extraHandler, ...coded('handler_count') });
    }
  });

export type ParsedProbe = z.output<typeof probeSchema>;
