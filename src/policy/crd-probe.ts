import type { ProbeKind } from '../kernel/index.ts';
import { containerProbeFields, handlerDefaults, httpSchemes, probeDefaults } from './defaults.ts';
import { messages, maxPortNameLength, patterns, portRange } from './rules.ts';
import { int32Max, probeLimits, timingLimits } from './schema-probe.ts';

/**
 * OpenAPI v3 schema of the core/v1 Probe shape inside the ProbePolicy CRD.
 * Plain JSON, built from the same defaults, bounds and messages as the zod
 * schema. `crd.ts` assembles the whole CRD.
 */

export type JsonSchema = Readonly<Record<string, unknown>>;

export interface CelRule {
  readonly rule: string;
  readonly message: string;
  readonly fieldPath?: string;
  readonly reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired';
}

/** A CEL raw string literal for a regular expression (no escaping needed inside). */
export function celRegex(pattern: string): string {
  if (!pattern.includes("'")) return `r'${pattern}'`;
  if (!pattern.includes('"')) return `r"${pattern}"`;
  throw new Error(`pattern has both quote kinds: ${pattern}`);
}

export function withRules(schema: JsonSchema, rules: readonly CelRule[]): JsonSchema {
  return { ...schema, 'x-kubernetes-validations': rules };
}

export const str = (description: string, extra: JsonSchema = {}): JsonSchema => ({ type: 'string', description, ...extra });
export const int32 = (description: string, extra: JsonSchema = {}): JsonSchema => ({
  type: 'integer',
  format: 'int32',
  description,
  ...extra,
});
export const int64 = (description: string, extra: JsonSchema = {}): JsonSchema => ({
  type: 'integer',
  format: 'int64',
  description,
  ...extra,
});
export const obj = (description: string, properties: Record<string, JsonSchema>, extra: JsonSchema = {}): JsonSchema => ({
  type: 'object',
  description,
  properties,
  ...extra,
});

const portRules: readonly CelRule[] = [
  { rule: `type(self) != int || (self >= ${portRange.min} && self <= ${portRange.max})`, message: messages.portNumber },
  {
    rule:
      `type(self) == int || (size(self) <= ${maxPortNameLength} && self.matches(${celRegex(patterns.portName)}) ` +
      `&& self.matches(${celRegex(patterns.hasLetter)}))`,
    message: messages.portName,
  },
];

function portSchema(handler: string): JsonSchema {
  return withRules(
    {
      'x-kubernetes-int-or-string': true,
      description:
        `Port of the pod to ${handler}: a number from 1 to 65535, or the name of a port in the container's ` +
        '`ports` (an IANA_SVC_NAME), resolved per pod when the probe runs. A name that does not resolve ' +
        'makes the probe error (never counted as a failure), like the kubelet.',
    },
    portRules,
  );
}

function hostSchema(): JsonSchema {
  return str(
    'Not allowed. core/v1 lets a probe target any host; outprobe always probes the pod\'s own IP ' +
      '(SSRF guard). Declared only so that setting it is rejected with a clear message instead of being dropped.',
    { maxLength: probeLimits.hostLength },
  );
}

const hostRule: CelRule = { rule: '!has(self.host)', message: messages.hostNotAllowed, fieldPath: '.host', reason: 'FieldValueForbidden' };

const execSchema = withRules(
  obj('Run a command in the container through the API server (pods/exec). Needs the controller to run with exec enabled for this namespace (--exec-namespaces); otherwise the policy is marked Invalid. The chart\'s admission policy accepts it only from a user who may create pods/exec in this namespace. The output is not published in Events, conditions or logs unless the installer opts in (--publish-exec-output).', {
    command: {
      type: 'array',
      description:
        'Command line to run, without a shell, in working directory `/`. Exit status 0 is healthy. Output is capped at 10 KiB; a timeout is a failure.',
      maxItems: probeLimits.commandItems,
      items: str('One argument.', { maxLength: probeLimits.commandItemLength }),
      'x-kubernetes-list-type': 'atomic',
    },
  }),
  [{ rule: 'has(self.command) && size(self.command) > 0', message: messages.execCommand, fieldPath: '.command', reason: 'FieldValueRequired' }],
);

const httpGetSchema = withRules(
  obj(
    "HTTP GET to the pod's IP. 200-399 is healthy (a redirect that is not followed counts as healthy, with a warning).",
    {
      path: str('Path to request; may carry a query string.', { default: handlerDefaults.httpPath, maxLength: probeLimits.pathLength }),
      port: portSchema('request'),
      host: hostSchema(),
      scheme: str('HTTP or HTTPS. HTTPS does not verify the certificate, as the kubelet.', {
        enum: [...httpSchemes],
        default: handlerDefaults.httpScheme,
      }),
      httpHeaders: {
        type: 'array',
        description:
          'Extra request headers; duplicate names are allowed. A User-Agent or Accept header with an empty value removes that default header.',
        maxItems: probeLimits.headers,
        'x-kubernetes-list-type': 'atomic',
        items: obj(
          'One request header.',
          {
            name: withRules(str('Header name (an HTTP token).', { maxLength: probeLimits.headerNameLength }), [
              { rule: `self.matches(${celRegex(patterns.httpToken)})`, message: messages.headerName },
            ]),
            value: withRules(
              str('Header value. No control characters but horizontal tab (Go\'s net/http would refuse to send the request).', {
                maxLength: probeLimits.headerValueLength,
              }),
              [{ rule: `self.matches(${celRegex(patterns.httpHeaderValue)})`, message: messages.headerValue }],
            ),
          },
          { required: ['name', 'value'] },
        ),
      },
    },
    { required: ['port'] },
  ),
  [hostRule],
);

const tcpSocketSchema = withRules(
  obj(
    "TCP connect to the pod's IP. A completed connection is healthy; nothing is sent or read.",
    { port: portSchema('connect to'), host: hostSchema() },
    { required: ['port'] },
  ),
  [hostRule],
);

const grpcSchema = obj(
  "gRPC health check (grpc.health.v1.Health/Check, plaintext) on the pod's IP. SERVING is healthy.",
  {
    port: withRules(int32('Port number, 1-65535. Named ports are not supported for gRPC probes.'), [
      { rule: `self >= ${portRange.min} && self <= ${portRange.max}`, message: messages.portNumber },
    ]),
    service: str('Service name sent in the health check request; empty means the server\'s overall health.', {
      default: handlerDefaults.grpcService,
      maxLength: probeLimits.grpcServiceLength,
    }),
  },
  { required: ['port'] },
);

const kindWords: Readonly<Record<ProbeKind, string>> = {
  readiness: 'Readiness probe: its result is written to the pod as the readiness condition.',
  liveness: 'Liveness probe: a failure past failureThreshold remediates the pod (liveness.action).',
  startup: 'Startup probe: until it succeeds, liveness and readiness probes of the container do not run.',
};

/** The core/v1 Probe shape for one probe kind (same fields; the kind only changes the words). */
export function probeSchema(kind: ProbeKind): JsonSchema {
  const d = probeDefaults;
  const tl = timingLimits;
  const controllerDefault = (v: number): string =>
    ` Default: ${v}, applied by the controller rather than the API server, so that a fromContainer probe can tell the fields written here from those it takes from the container.`;
  const properties: Record<string, JsonSchema> = {
    fromContainer: str(
      "Run the probe the selected container declares in the pod spec (readinessProbe, livenessProbe or startupProbe) instead of a handler written here; the timing and threshold fields written here override the container's, the others come from the container's probe, then the kubelet's defaults. A container that declares no such probe is reported (Degraded condition, ContainerProbeUnavailable Event on the pod), never guessed. The container's probe is held to the same rules as one written here (no host, outprobe's bounds); an exec probe runs only where exec probes are enabled and allowed for the namespace, otherwise it is reported.",
      { enum: [...containerProbeFields] },
    ),
    exec: execSchema,
    httpGet: httpGetSchema,
    tcpSocket: tcpSocketSchema,
    grpc: grpcSchema,
    initialDelaySeconds: int32(
      `Seconds after the container's start before the first probe. At most ${tl.initialDelaySeconds} (one day; core/v1 accepts any int32).${controllerDefault(d.initialDelaySeconds)}`,
      { minimum: 0, maximum: tl.initialDelaySeconds },
    ),
    timeoutSeconds: int32(
      `Seconds after which the probe times out (a failure). Minimum 1, maximum ${tl.timeoutSeconds} (one hour): unlike core/v1, which accepts any int32, outprobe caps it, since a timer beyond about 24.8 days would fire at once in Node.js. Longer than the controller's maximum (--max-probe-timeout, default 60) runs with that maximum, reported by a ProbeTimeoutCapped Warning Event on the policy.${controllerDefault(d.timeoutSeconds)}`,
      { minimum: 1, maximum: tl.timeoutSeconds },
    ),
    periodSeconds: int32(
      `How often to probe, in seconds: probes start on a ticker of this period, as the kubelet's do (a probe that outlasts the period is followed at once by the next). Minimum 1, maximum ${tl.periodSeconds} (one hour; core/v1 accepts any int32).${controllerDefault(d.periodSeconds)}`,
      { minimum: 1, maximum: tl.periodSeconds },
    ),
    successThreshold: int32(
      `Consecutive successes after a failure to count as healthy. Minimum 1; must be 1 for liveness and startup.${controllerDefault(d.successThreshold)}`,
      { minimum: 1, maximum: int32Max },
    ),
    failureThreshold: int32(`Consecutive failures to count as unhealthy. Minimum 1.${controllerDefault(d.failureThreshold)}`, {
      minimum: 1,
      maximum: int32Max,
    }),
    terminationGracePeriodSeconds: withRules(
      int64(
        `Grace period in seconds for the eviction or deletion after a liveness or startup failure (floored at 2). Must be greater than 0 and at most ${tl.terminationGracePeriodSeconds} (core/v1 accepts any int64); not allowed on readiness probes. Default: the pod's spec.terminationGracePeriodSeconds.`,
        { maximum: tl.terminationGracePeriodSeconds },
      ),
      // A CEL rule rather than `minimum: 1`, for the API server's Pod wording.
      [{ rule: 'self > 0', message: messages.gracePeriodPositive }],
    ),
  };
  return withRules(
    obj(
      `${kindWords[kind]} The core/v1 Probe shape, so a probe can be pasted from a container spec (without host). Exactly one handler, or fromContainer.`,
      properties,
    ),
    [
      {
        rule: 'has(self.fromContainer) || has(self.exec) || has(self.httpGet) || has(self.tcpSocket) || has(self.grpc)',
        message: messages.noHandler,
        reason: 'FieldValueRequired',
      },
      {
        rule: '!has(self.fromContainer) || !(has(self.exec) || has(self.httpGet) || has(self.tcpSocket) || has(self.grpc))',
        message: messages.fromContainerHandler,
        fieldPath: '.fromContainer',
        reason: 'FieldValueForbidden',
      },
      {
        rule: "(has(self.exec) ? 1 : 0) + (has(self.httpGet) ? 1 : 0) + (has(self.tcpSocket) ? 1 : 0) + (has(self.grpc) ? 1 : 0) <= 1",
        message: messages.extraHandler,
        reason: 'FieldValueForbidden',
      },
    ],
  );
}
