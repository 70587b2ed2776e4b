/**
 * The syntax rules a ProbePolicy must follow, as pure predicates plus the one
 * message each produces. The CRD's CEL rules (`crd.ts`) use the same messages
 * and equivalent regular expressions, so a user sees the same words whether
 * the API server or the controller rejects a policy.
 */

export const messages = {
  // The next five are the API server's words for a Pod's probes
  // (pkg/apis/core/validation: validateHandler, validateProbe,
  // validateLivenessProbe/validateStartupProbe, validateReadinessProbe).
  noHandler: 'must specify a handler type',
  extraHandler: 'may not specify more than 1 handler type',
  successThresholdOne: 'must be 1',
  gracePeriodReadiness: 'must not be set for readinessProbes',
  gracePeriodPositive: 'must be greater than 0',
  fromContainerHandler:
    "fromContainer runs the container's own probe: it may not be set together with a handler (exec, httpGet, tcpSocket or grpc)",
  hostNotAllowed: "host is not allowed: outprobe always probes the pod's own IP (SSRF guard)",
  portNumber: 'port number must be between 1 and 65535, inclusive',
  portName:
    "port name must be an IANA_SVC_NAME: at most 15 characters of a-z, 0-9 and '-', " +
    "with at least one letter and no leading, trailing or consecutive '-'",
  conditionType:
    'conditionType must be a qualified name: an optional DNS subdomain prefix and "/", then a name of ' +
    "at most 63 characters of A-Z, a-z, 0-9, '-', '_' and '.' that starts and ends with a letter or digit " +
    '(e.g. outprobe.io/web)',
  conditionTypePrefix: 'conditionType prefix (before "/") must be at most 253 characters',
  conditionTypeReserved:
    'conditionType must not be a pod condition that Kubernetes itself owns ' +
    '(Ready, ContainersReady, Initialized, PodScheduled, PodReadyToStartContainers, DisruptionTarget, ' +
    'PodResizePending, PodResizeInProgress)',
  defaultConditionType:
    'readiness.conditionType must be set when the policy name is longer than 63 characters ' +
    '(the default outprobe.io/<policy name> would not be a valid condition type)',
  container:
    "container must be a container name: at most 63 characters of a-z, 0-9 and '-', " +
    'starting and ending with a letter or digit',
  headerName: "header name must be an HTTP token: letters, digits and !#$%&'*+-.^_`|~",
  headerValue: 'header value must not contain control characters (CR, LF, NUL, DEL, ...); only horizontal tab is allowed',
  execCommand: 'exec.command must not be empty',
  execDisabled:
    'exec probes need the controller to run with exec enabled (pods/exec); ' +
    'this controller runs without it, so the policy cannot be honoured',
  execNamespace: (namespace: string, allowed: readonly string[]): string =>
    `exec probes are not allowed in namespace "${namespace}": the installer allows them ` +
    (allowed.length === 0 ? 'in no namespace' : `only in ${allowed.map((n) => `"${n}"`).join(', ')}`) +
    ' (--exec-namespaces), so the policy cannot be honoured',
  maxUnavailable:
    'maxUnavailable must be a non-negative integer or a percentage from "0%" to "100%" (e.g. 1 or "25%")',
  noProbes: 'must specify at least one of readiness, liveness or startup',
  selectorValues: 'values must be non-empty when operator is In or NotIn, and empty when it is Exists or DoesNotExist',
  labelKey:
    'label key must be a qualified name: an optional DNS subdomain prefix and "/", then a name of at most ' +
    "63 characters of A-Z, a-z, 0-9, '-', '_' and '.' that starts and ends with a letter or digit",
  labelValue:
    "label value must be at most 63 characters of A-Z, a-z, 0-9, '-', '_' and '.', " +
    'starting and ending with a letter or digit (or empty)',
} as const;

export const portRange = { min: 1, max: 65535 } as const;

/** Kubelet-owned and control-plane pod conditions a readiness gate must never name (§7.3). */
export const reservedConditionTypes = [
  'Ready',
  'ContainersReady',
  'Initialized',
  'PodScheduled',
  'PodReadyToStartContainers',
  'DisruptionTarget',
  'PodResizePending',
  'PodResizeInProgress',
] as const;

/** Regular expressions in RE2 syntax, shared verbatim with the CEL rules. */
export const patterns = {
  /** IANA_SVC_NAME without the length and "has a letter" parts. */
  portName: '^[a-z0-9]+(-[a-z0-9]+)*$',
  hasLetter: '[a-z]',
  /** Qualified name (readiness gates, label keys): optional DNS-1123 subdomain prefix. */
  qualifiedName:
    '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]$',
  labelValue: '^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$',
  dnsLabel: '^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$',
  httpToken: "^[-!#$%&'*+.^_`|~0-9A-Za-z]+$",
  /** Go's httpguts.ValidHeaderFieldValue: no CTL (0x00-0x1f, 0x7f) except HTAB. */
  httpHeaderValue: '^[^\\x00-\\x08\\x0a-\\x1f\\x7f]*$',
  percent: '^(100|[1-9]?[0-9])%$',
} as const;

const re = (pattern: string): RegExp => new RegExp(pattern, 'u');
const portNameRe = re(patterns.portName);
const hasLetterRe = re(patterns.hasLetter);
const qualifiedNameRe = re(patterns.qualifiedName);
const labelValueRe = re(patterns.labelValue);
const dnsLabelRe = re(patterns.dnsLabel);
const httpTokenRe = re(patterns.httpToken);
const httpHeaderValueRe = re(patterns.httpHeaderValue);
const percentRe = re(patterns.percent);

export const maxPortNameLength = 15;
export const maxPrefixLength = 253;

export function isPortNumber(port: number): boolean {
  return Number.isInteger(port) && port >= portRange.min && port <= portRange.max;
}

/** IANA_SVC_NAME as core/v1 validates named ports (`IsValidPortName`). */
export function isPortName(name: string): boolean {
  return name.length <= maxPortNameLength && portNameRe.test(name) && hasLetterRe.test(name);
}

/** The message for an int-or-string port, or null when it is valid. */
export function portProblem(port: number | string): string | null {
  if (typeof port === 'number') return isPortNumber(port) ? null : messages.portNumber;
  return isPortName(port) ? null : messages.portName;
}

/** A qualified name (`prefix/name` or `name`), as pod readiness gates and label keys require. */
export function isQualifiedName(value: string): boolean {
  const slash = value.indexOf('/');
  return qualifiedNameRe.test(value) && slash <= maxPrefixLength;
}

export function qualifiedNamePrefixTooLong(value: string): boolean {
  return value.indexOf('/') > maxPrefixLength;
}

export function isReservedConditionType(value: string): boolean {
  return (reservedConditionTypes as readonly string[]).includes(value);
}

export function isLabelValue(value: string): boolean {
  return labelValueRe.test(value);
}

export function isDnsLabel(value: string): boolean {
  return dnsLabelRe.test(value);
}

export function isHttpToken(value: string): boolean {
  return httpTokenRe.test(value);
}

/** A header value Go's transport would send (no control characters but HTAB). */
export function isHttpHeaderValue(value: string): boolean {
  return httpHeaderValueRe.test(value);
}

/** A non-negative integer, or a percentage string from 0% to 100%. */
export function isMaxUnavailable(value: number | string): boolean {
  return typeof value === 'number' ? Number.isInteger(value) && value >= 0 : percentRe.test(value);
}
