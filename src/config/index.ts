import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { defaultMaxProbeTimeoutSeconds } from '../policy/index.ts';
import { tlsMinVersionFlag } from '../servingcert/index.ts';

/**
 * Controller configuration from flags, then `OUTPROBE_*` environment
 * variables, then defaults; validated with zod so a bad value is a clear
 * startup error, never a crash later.
 */
const options = {
  kubeconfig: { type: 'string', env: '', help: 'Path to one kubeconfig file; default: every file of $KUBECONFIG merged as kubectl does, else the in-cluster service account, else ~/.kube/config. Read by @kubernetes/client-node: client certificates, tokens and tokenFile, exec credential plugins, OIDC and the other auth-providers, tls-server-name, proxy-url (http, https, socks5), insecure-skip-tls-verify' },
  context: { type: 'string', env: 'OUTPROBE_CONTEXT', help: 'kubeconfig context to use instead of the current context' },
  namespace: { type: 'string', env: 'OUTPROBE_NAMESPACE', help: 'Comma-separated namespaces: watch ProbePolicies and pods, and act, in these only, one watch each (default: all namespaces)' },
  identity: { type: 'string', env: 'OUTPROBE_IDENTITY', help: 'This replica\'s identity (default: $POD_NAME, else the hostname)' },
  'metrics-addr': { type: 'string', env: 'OUTPROBE_METRICS_ADDR', help: 'host:port for /metrics, /healthz and /readyz (default 0.0.0.0:8080 with --metrics-auth=kubernetes, 127.0.0.1:8080 with none; port 0 picks a free one)' },
  'metrics-auth': { type: 'string', env: 'OUTPROBE_METRICS_AUTH', help: 'kubernetes | none: /metrics needs a bearer token that a TokenReview authenticates and a SubjectAccessReview allows to get the non-resource URL /metrics (needs RBAC create on tokenreviews and subjectaccessreviews), or is open (default kubernetes; /healthz and /readyz are always open)' },
  'metrics-cert-dir': { type: 'string', env: 'OUTPROBE_METRICS_CERT_DIR', help: 'Directory with tls.crt and tls.key (a kubernetes.io/tls Secret mounted there: cert-manager\'s or one\'s own): the metrics port then serves HTTPS only, TLS 1.2 at least, /metrics, /healthz and /readyz alike (probe them with scheme HTTPS); the files are re-read every 10 s and a changed pair is served to new connections without a restart, a broken one (unreadable, key not matching) leaving the previous pair in service; the process does not start without a servable pair (default: none, plain HTTP; ADR 0068)' },
  'metrics-tls-min-version': { type: 'string', env: 'OUTPROBE_METRICS_TLS_MIN_VERSION', help: 'VersionTLS12 | VersionTLS13: the oldest TLS version the metrics port accepts with --metrics-cert-dir, spelt as Kubernetes components spell --tls-min-version (default VersionTLS12; TLS 1.2 only with ECDHE and AEAD ciphers)' },
  'log-level': { type: 'string', env: 'OUTPROBE_LOG_LEVEL', help: 'error | warn | info | debug (default info)' },
  concurrency: { type: 'string', env: 'OUTPROBE_CONCURRENCY', help: 'Probes in flight at once, shared fairly between namespaces, then policies (default 256; up to twice it while a namespace reclaims its share from slow probes)' },
  'max-probe-timeout': { type: 'string', env: 'OUTPROBE_MAX_PROBE_TIMEOUT', help: 'Longest probe timeout in seconds; a probe\'s longer timeoutSeconds runs with this and its policy gets a ProbeTimeoutCapped Warning Event (default 60)' },
  'kube-api-qps': { type: 'string', env: 'OUTPROBE_KUBE_API_QPS', help: 'Client-side API rate limit, requests per second (default 50)' },
  'kube-api-burst': { type: 'string', env: 'OUTPROBE_KUBE_API_BURST', help: 'Client-side API burst (default 100)' },
  'event-qps': { type: 'string', env: 'OUTPROBE_EVENT_QPS', help: 'Kubernetes Event writes per second, a budget of their own beside --kube-api-qps (as the kubelet\'s --event-qps); Events beyond it are combined, and gate-change Events that still cannot be sent are counted in a ReadinessGateChangesFolded Event on their policy (default 50)' },
  'gate-write-max-inflight': { type: 'string', env: 'OUTPROBE_GATE_WRITE_MAX_INFLIGHT', help: 'Ceiling of readiness-gate writes in flight at once. Gate writes have a path of their own beside --kube-api-qps: the number in flight adapts to what the API server accepts (grows while writes succeed within 1 s, halves on a 429 or 503, and nothing is sent until its Retry-After has passed), and a gate turning False, a repair, or a True after a False goes before first-time Trues (default 64)' },
  'gate-write-qps': { type: 'string', env: 'OUTPROBE_GATE_WRITE_QPS', help: 'Upper cap on readiness-gate writes per second (burst of the same size), beside --gate-write-max-inflight (default 1000)' },
  'event-burst': { type: 'string', env: 'OUTPROBE_EVENT_BURST', help: 'Burst of the Event write budget (default 100)' },
  'enable-exec-probes': { type: 'boolean', env: 'OUTPROBE_ENABLE_EXEC_PROBES', help: 'Run exec probes through pods/exec (needs RBAC create on pods/exec; default false)' },
  'exec-namespaces': { type: 'string', env: 'OUTPROBE_EXEC_NAMESPACES', help: 'Comma-separated namespaces whose ProbePolicies may use exec probes, or * for all; elsewhere an exec policy is Invalid (default: none, even with --enable-exec-probes)' },
  'publish-exec-output': { type: 'boolean', env: 'OUTPROBE_PUBLISH_EXEC_OUTPUT', help: 'Publish exec probe output in Events, pod conditions and logs, control characters stripped and cut to 512 characters (default false: "exec probe output withheld (N bytes)")' },
  'max-remediations-per-minute': { type: 'string', env: 'OUTPROBE_MAX_REMEDIATIONS_PER_MINUTE', help: 'Evictions/deletes this replica may send per minute across all policies (token bucket, burst of the same size; 0 = none; default 10)' },
  'max-halt-above-percent-failing': { type: 'string', env: 'OUTPROBE_MAX_HALT_ABOVE_PERCENT_FAILING', help: 'Ceiling for every policy\'s remediation.haltAbovePercentFailing (0-100); a policy asking more is clamped and told so (default 50)' },
  'allow-delete-action': { type: 'boolean', env: 'OUTPROBE_ALLOW_DELETE_ACTION', help: 'Honour liveness.action Delete; without it such policies are remediated by Eviction (PDB-aware) and told so (default false)' },
  'allowed-probe-cidrs': { type: 'string', env: 'OUTPROBE_ALLOWED_PROBE_CIDRS', help: 'Comma-separated CIDRs pod IPs must be in to be probed (default: any pod IP). Never probed, even if listed: link-local (169.254.0.0/16, fe80::/10), cloud metadata (fd00:ec2::254, 100.100.100.200, 168.63.129.16), unspecified, multicast, broadcast, and these IPv4 addresses in IPv6 form (::ffff:a.b.c.d, ::a.b.c.d, 64:ff9b::/96, 2002::/16). Loopback (127.0.0.0/8, ::1) only when a listed CIDR lies inside it (0.0.0.0/0 does not count). On hostNetwork pods only ports the container declares (ports[].containerPort) are probed, redirect hops included' },
  'shutdown-timeout': { type: 'string', env: 'OUTPROBE_SHUTDOWN_TIMEOUT', help: 'Seconds a stop (SIGTERM) may take: the shard Lease is released first (within 5 s at most); what is still unfinished then is logged by name and the process exits 1. Keep it below the pod\'s terminationGracePeriodSeconds (default 20)' },
  'stall-bound': { type: 'string', env: 'OUTPROBE_STALL_BOUND', help: 'Seconds of event-loop delay (a GC pause, long synchronous work, CPU throttling) beyond which a failed probe attempt that overlapped it, or whose timeout fired that late, is void: retried, never counted as a failure; successes always count. 0 turns the guard off (default 0.5)' },
  'status-interval': { type: 'string', env: 'OUTPROBE_STATUS_INTERVAL', help: 'Seconds between ProbePolicy status refreshes (written only when changed; default 2)' },
  'kube-probe-version': { type: 'string', env: 'OUTPROBE_KUBE_PROBE_VERSION', help: 'Version in the User-Agent kube-probe/<major>.<minor> (default: the API server\'s)' },
  sharding: { type: 'string', env: 'OUTPROBE_SHARDING', help: 'true | false: split pods across replicas by pod UID with one Lease per replica (default true)' },
  'lease-namespace': { type: 'string', env: 'OUTPROBE_LEASE_NAMESPACE', help: 'Namespace of the shard Leases (default: $POD_NAMESPACE, else the kubeconfig\'s or in-cluster namespace)' },
  'lease-duration': { type: 'string', env: 'OUTPROBE_LEASE_DURATION', help: 'Seconds a replica\'s shard Lease lives without renewal (default 15)' },
  'lease-renew-interval': { type: 'string', env: 'OUTPROBE_LEASE_RENEW_INTERVAL', help: 'Seconds between shard Lease renewals (default 5; must be below the duration)' },
  'self-partition-detection': { type: 'string', env: 'OUTPROBE_SELF_PARTITION_DETECTION', help: 'true | false: replicas check each other\'s /healthz; a replica cut off from its peers, or failing far more than they do, declares itself impaired, writes no False gate, remediates nothing, fails /readyz and gives up its shard Lease; and with peers, a False gate or a remediation waits for a peer check that started after the failure was seen (default true; needs --sharding)' },
  'membership-proof': { type: 'string', env: 'OUTPROBE_MEMBERSHIP_PROOF', help: 'pod | none: a shard member is a Lease whose holder is a Running, Ready pod of this replica\'s own Deployment and ServiceAccount with the UID, node and IP the Lease declares, as the API server says (ADR 0036; needs $POD_NAME, $POD_NAMESPACE, $POD_UID, $NODE_NAME and $POD_IP from the downward API, and RBAC get/list/watch pods and get replicasets in the Lease namespace); none takes every Lease\'s word, for development outside a cluster only: it logs a warning and is refused when $POD_NAME is set (default pod)' },
  'debug-addr': { type: 'string', env: 'OUTPROBE_DEBUG_ADDR', help: 'Loopback host:port of the debug endpoint that `kubectl outprobe explain` and `status` read through kubectl port-forward (ADR 0067); only 127.0.0.0/8 or ::1 is accepted, so nothing on the pod network reaches it; "off" disables it (default 127.0.0.1:9446; port 0 picks a free one)' },
  'peer-addr': { type: 'string', env: 'OUTPROBE_PEER_ADDR', help: 'host:port of the peer listener (ADR 0037): the second opinion and the peer checks of /healthz, and nothing else; the chart\'s NetworkPolicy opens it to the replicas only. Peers reach a replica on its pod IP and its pod\'s `peer` container port, else this port (default 0.0.0.0:9444; only with --sharding)' },
  'peer-token-file': { type: 'string', env: 'OUTPROBE_PEER_TOKEN_FILE', help: 'File holding this replica\'s peer token: a projected ServiceAccount token of audience outprobe.io/peer bound to its pod, re-read as the kubelet rotates it; the only credential it ever presents to a peer (default: none, and this replica asks no second opinions)' },
  'peer-pod-selector': { type: 'string', env: 'OUTPROBE_PEER_POD_SELECTOR', help: 'Label selector narrowing the watch of the Lease namespace\'s pods that membership is proven against (the chart\'s pod labels); owner references decide, never labels (default: every pod of the namespace)' },
  'advertise-address': { type: 'string', env: 'OUTPROBE_ADVERTISE_ADDRESS', help: 'With --membership-proof=none only: host or host:port this replica declares its peer listener at; the port defaults to the --peer-addr listener\'s (default: $POD_IP; empty: none, and this replica is nobody\'s peer). With proof, peers use the pod object\'s IP' },
  'node-name': { type: 'string', env: 'OUTPROBE_NODE_NAME', help: 'The node this replica runs on: its vantage (ADR 0040), named in the gate messages it writes; with --membership-proof=pod its peers take it from its pod, never from its Lease (default: $NODE_NAME, which the chart sets from the downward API, spec.nodeName)' },
  zone: { type: 'string', env: 'OUTPROBE_ZONE', help: 'This replica\'s zone, declared on its shard Lease for clusters where replicas may not read Nodes (RBAC get nodes): a peer takes it only where it cannot read the Node\'s topology.kubernetes.io/zone label itself (ADR 0040; default: none, the zone comes from the Node)' },
  'peer-check-interval': { type: 'string', env: 'OUTPROBE_PEER_CHECK_INTERVAL', help: 'Seconds between checks of the peers\' /healthz (default 1)' },
  'peer-check-timeout': { type: 'string', env: 'OUTPROBE_PEER_CHECK_TIMEOUT', help: 'Timeout of one peer check in seconds (default 0.5)' },
  'impaired-unreachable-after': { type: 'string', env: 'OUTPROBE_IMPAIRED_UNREACHABLE_AFTER', help: 'Impaired when no peer answered for this many seconds while a peer reports reaching another peer (default 3)' },
  'impaired-failing-share': { type: 'string', env: 'OUTPROBE_IMPAIRED_FAILING_SHARE', help: 'Impaired when at least this share (0-1) of its targets fails… (default 0.5)' },
  'impaired-failing-margin': { type: 'string', env: 'OUTPROBE_IMPAIRED_FAILING_MARGIN', help: '…and that share is at least this far (0-1) above the median share of its peers (default 0.3)' },
  'impaired-min-targets': { type: 'string', env: 'OUTPROBE_IMPAIRED_MIN_TARGETS', help: 'Failing shares are compared only between replicas owning at least this many targets (default 10)' },
  'impaired-min-namespaces': { type: 'string', env: 'OUTPROBE_IMPAIRED_MIN_NAMESPACES', help: '…and its failures span at least this many namespaces, and at least that share of the namespaces it probes: a tenant failing one replica\'s address in its own namespaces cannot make it stand down (default 3)' },
  'impaired-failing-sustain': { type: 'string', env: 'OUTPROBE_IMPAIRED_FAILING_SUSTAIN', help: '…for this many seconds without a break, compared only with peer reports published since (default 10)' },
  'impaired-recover-after': { type: 'string', env: 'OUTPROBE_IMPAIRED_RECOVER_AFTER', help: 'An impaired replica rejoins after reaching a peer (or having none) for this many seconds without a break (default 10)' },
  'kube-api-http2': { type: 'boolean', env: 'OUTPROBE_KUBE_API_HTTP2', help: 'Send API requests (not watches) over HTTP/2, a few shared connections, when the server offers it (default false: HTTP/1.1, at most 64 connections per client; with Node 24.21 a stop with many HTTP/2 requests in flight was seen spinning in node\'s http2 and growing without bound, ADR 0020)' },
  'second-opinion': { type: 'string', env: 'OUTPROBE_SECOND_OPINION', help: 'true | false: before the first False of a gate and before any eviction or delete, ask the next live replica in the pod\'s rendezvous order to probe the same target from its own node (POST /v1/second-opinion on its peer listener, with this replica\'s peer token from --peer-token-file, never its API token); act only if it fails there too. Per policy: spec.secondOpinion. Does nothing with one replica (default true)' },
  'second-opinion-unavailable-after': { type: 'string', env: 'OUTPROBE_SECOND_OPINION_UNAVAILABLE_AFTER', help: 'Seconds of nothing but errors from the peers asked about one failure (refused, overloaded, unreachable) after which its readiness False is written on this replica\'s own verdict, still behind the peer write guard and the panic threshold, with a SecondOpinionUnavailable Event; remediation always waits for a second opinion. 0: a readiness False waits too (default 30)' },
  'second-opinion-allowed-users': { type: 'string', env: 'OUTPROBE_SECOND_OPINION_ALLOWED_USERS', help: 'With --membership-proof=none only: comma-separated usernames (as TokenReview returns them) whose peer tokens may ask this replica for a second opinion (default: this replica\'s own user, learnt with a SelfSubjectReview). With proof, only a token bound to a member\'s pod, of the fleet\'s ServiceAccount, may ask' },
  'webhook-addr': { type: 'string', env: 'OUTPROBE_WEBHOOK_ADDR', help: 'host:port of the readiness-gate injection webhook (HTTPS, POST /mutate-pods; ADR 0021); empty or off: no webhook (default off; the chart sets 0.0.0.0:9443 when webhook.enabled)' },
  'webhook-secret': { type: 'string', env: 'OUTPROBE_WEBHOOK_SECRET', help: 'Secret in the controller\'s namespace holding the webhook\'s self-signed CA and serving certificate: created if missing, reused while valid, rotated before expiry; every replica serves what it holds (default outprobe-webhook-tls)' },
  'webhook-service': { type: 'string', env: 'OUTPROBE_WEBHOOK_SERVICE', help: 'Service the API server calls the webhook through; the serving certificate is for <service>.<namespace>.svc (default outprobe-webhook)' },
  'webhook-configuration': { type: 'string', env: 'OUTPROBE_WEBHOOK_CONFIGURATION', help: 'MutatingWebhookConfiguration whose webhooks get the CA as caBundle (default: none is patched)' },
  'webhook-cert-dir': { type: 'string', env: 'OUTPROBE_WEBHOOK_CERT_DIR', help: 'Directory with tls.crt and tls.key (e.g. a cert-manager Secret mounted there), re-read every minute; no Secret is written and caBundle is left to cert-manager (default: none, the controller manages its own certificate)' },
  help: { type: 'boolean', env: '', help: 'Show this help' },
} as const;

const intFrom = (min: number) => z.coerce.number().int().min(min);
const seconds = (min: number, max: number) => z.coerce.number().min(min).max(max).transform((s) => Math.round(s * 1000));

export const configSchema = z.object({
  kubeconfig: z.string().min(1).optional(),
  context: z.string().min(1).optional(),
  /** Empty: all namespaces. */
  namespaces: z.array(z.string().max(63).regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a namespace name')),
  identity: z.string().min(1).max(253),
  metricsHost: z.string(),
  metricsPort: intFrom(0).max(65535),
  metricsAuth: z.enum(['kubernetes', 'none']),
  /** Serve the metrics port over TLS from tls.crt/tls.key here (ADR 0068); undefined: plain HTTP. */
  metricsCertDir: z.string().min(1).optional(),
  /** The oldest TLS version of the metrics port. @default TLSv1.2 */
  metricsTlsMinVersion: z.enum(['VersionTLS12', 'VersionTLS13']).transform((v) => tlsMinVersionFlag[v]),
  logLevel: z.enum(['error', 'warn', 'info', 'debug']),
  concurrency: intFrom(1).max(100_000),
  maxProbeTimeoutSeconds: intFrom(1),
  qps: z.coerce.number().positive(),
  burst: intFrom(1),
  eventQps: z.coerce.number().positive(),
  eventBurst: intFrom(1),
  /** Gate writes' own path (ADR 0022): the ceiling of writes in flight. @default 64 */
  gateWriteMaxInflight: intFrom(1).max(10_000),
  /** Gate writes' upper rate cap (burst the same). @default 1000 */
  gateWriteQps: z.coerce.number().positive(),
  execEnabled: z.boolean(),
  /** Namespaces where exec probes are honoured; `'*'` for all. @default [] (none) */
  execNamespaces: z.union([z.literal('*'), z.array(z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be namespace names, or *'))]),
  publishExecOutput: z.boolean(),
  maxRemediationsPerMinute: intFrom(0).max(100_000),
  maxHaltAbovePercentFailing: intFrom(0).max(100),
  allowDeleteAction: z.boolean(),
  kubeApiHttp2: z.boolean(),
  allowedCidrs: z.array(z.string().regex(/^[0-9a-fA-F:.]+\/\d{1,3}$/, 'must be a CIDR like 10.0.0.0/8')),
  statusIntervalMs: z.coerce.number().positive().transform((s) => Math.round(s * 1000)),
  /** How long a stop may take before the process logs what is unfinished and exits 1. @default 20000 */
  shutdownTimeoutMs: z.coerce.number().min(1).max(3600).transform((s) => Math.round(s * 1000)),
  /** The stall guard's bound in ms (ADR 0016); 0: off. @default 500 */
  stallBoundMs: z.coerce.number().min(0).max(60).transform((s) => Math.round(s * 1000)),
  kubeProbeVersion: z.string().regex(/^\d+\.\d+\+?$/, 'must be <major>.<minor>').optional(),
  sharding: z.enum(['true', 'false']).transform((v) => v === 'true'),
  leaseNamespace: z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a namespace name').optional(),
  leaseDurationMs: z.coerce.number().int().min(1).max(3600).transform((s) => s * 1000),
  leaseRenewIntervalMs: z.coerce.number().positive().max(3600).transform((s) => Math.round(s * 1000)),
  selfCheck: z.enum(['true', 'false']).transform((v) => v === 'true'),
  /** host:port, or undefined when none is advertised. */
  advertiseAddress: z.string().max(300).optional(),
  peerCheckIntervalMs: seconds(0.1, 60),
  peerCheckTimeoutMs: seconds(0.05, 30),
  impairedUnreachableAfterMs: seconds(0.5, 3600),
  impairedFailingShare: z.coerce.number().min(0).max(1),
  impairedFailingMargin: z.coerce.number().min(0).max(1),
  impairedMinTargets: intFrom(1),
  impairedRecoverAfterMs: seconds(0, 3600),
  impairedFailingSustainMs: seconds(0, 3600),
  impairedMinNamespaces: intFrom(1),
  secondOpinion: z.enum(['true', 'false']).transform((v) => v === 'true'),
  /** Undefined: never (0 given). @default 30000 */
  secondOpinionUnavailableAfterMs: z.coerce.number().min(0).max(3600).transform((s) => (s === 0 ? undefined : Math.round(s * 1000))),
  /** ADR 0036: 'pod' proves members against their pods; 'none' takes the Leases' word (development). */
  membershipProof: z.enum(['pod', 'none']),
  /** This replica's pod from the downward API (needed with --membership-proof=pod and sharding). */
  self: z.object({ podName: z.string().optional(), namespace: z.string().optional(), podUid: z.string().optional(), nodeName: z.string().optional(), podIP: z.string().optional() }),
  /** The peer listener (ADR 0037). */
  peerHost: z.string(),
  peerPort: intFrom(0).max(65535),
  peerTokenFile: z.string().min(1).optional(),
  peerPodSelector: z.string().max(1024).optional(),
  /** This replica's declared zone (`--zone`, ADR 0040): on its Lease, for peers that cannot read Nodes. */
  zone: z.string().regex(/^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/, 'must be a label value').optional(),
  /** Empty: this replica's own username. */
  secondOpinionAllowedUsers: z.array(z.string().min(1).max(1024)),
  /** The debug endpoint (ADR 0067), loopback only; undefined: off. */
  debug: z.object({ host: z.string().refine((h) => h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h), 'must be a loopback address (127.0.0.0/8 or ::1): the endpoint is reached through kubectl port-forward'), port: intFrom(0).max(65535) }).optional(),
  /** The webhook listener; undefined: off. */
  webhook: z.object({ host: z.string(), port: intFrom(0).max(65535) }).optional(),
  webhookSecret: z.string().max(253).regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'must be a Secret name'),
  webhookService: z.string().max(63).regex(/^[a-z]([-a-z0-9]*[a-z0-9])?$/, 'must be a Service name'),
  webhookConfiguration: z.string().max(253).regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'must be an object name').optional(),
  webhookCertDir: z.string().min(1).optional(),
}).refine((c) => c.leaseRenewIntervalMs < c.leaseDurationMs, { path: ['leaseRenewIntervalMs'], message: 'must be below --lease-duration' })
  .superRefine(membershipChecks);
export type Config = z.infer<typeof configSchema>;

/**
 * ADR 0036: `none` is for development and is refused in a pod; `pod` needs the
 * downward API, and the identity is the pod's name (peers check it against the pod).
 */
function membershipChecks(c: { readonly sharding: boolean; readonly membershipProof: 'pod' | 'none'; readonly identity: string; readonly self: { readonly podName?: string | undefined; readonly namespace?: string | undefined; readonly podUid?: string | undefined; readonly nodeName?: string | undefined; readonly podIP?: string | undefined } }, ctx: z.RefinementCtx): void {
  if (!c.sharding) return;
  if (c.membershipProof === 'none') {
    if (c.self.podName !== undefined) ctx.addIssue({ code: 'custom', path: ['membershipProof'], message: '--membership-proof=none is for development outside a cluster and is refused when $POD_NAME is set (this replica runs in a pod: its membership must be proven)' });
    return;
  }
  const missing = (['POD_NAME', 'POD_NAMESPACE', 'POD_UID', 'NODE_NAME', 'POD_IP'] as const).filter((_, i) => [c.self.podName, c.self.namespace, c.self.podUid, c.self.nodeName, c.self.podIP][i] === undefined);
  if (missing.length > 0) ctx.addIssue({ code: 'custom', path: ['membershipProof'], message: `sharding proves each replica's membership against its pod (ADR 0036) and needs ${missing.map((m) => `$${m}`).join(', ')} from the downward API; outside a cluster run --sharding=false, or --membership-proof=none for development` });
  else if (c.identity !== c.self.podName) ctx.addIssue({ code: 'custom', path: ['identity'], message: `with --membership-proof=pod the identity is the pod's name (${c.self.podName ?? ''}): peers check it against the pod` });
}

export type ConfigResult = { readonly ok: true; readonly config: Config } | { readonly ok: false; readonly help: boolean; readonly message: string };

export function helpText(): string {
  const lines = ['Usage: outprobe [flags]', '', 'Runs kubelet-exact pod probes from outside the node (see README.md; every flag: docs/configuration.md).', '', 'Flags (each also read from the environment variable shown):'];
  for (const [name, o] of Object.entries(options)) lines.push(`  --${name}${o.type === 'string' ? ' <value>' : ''}`.padEnd(34) + `${o.help}${o.env === '' ? '' : ` [$${o.env}]`}`);
  return lines.join('\n');
}

/** Parses argv and env into a validated Config. Never throws. */
export function loadConfig(argv: readonly string[], env: NodeJS.ProcessEnv): ConfigResult {
  let values: Record<string, string | boolean | undefined>;
  try {
    const parseOptions = Object.fromEntries(Object.entries(options).map(([k, o]) => [k, { type: o.type }]));
    values = parseArgs({ args: [...argv], options: parseOptions, strict: true, allowPositionals: false }).values;
  } catch (err: unknown) {
    return { ok: false, help: false, message: err instanceof Error ? err.message : String(err) };
  }
  if (values['help'] === true) return { ok: false, help: true, message: helpText() };
  const get = (name: keyof typeof options): string | boolean | undefined => {
    const envName = options[name].env;
    const fromEnv = envName === '' ? undefined : env[envName];
    return values[name] ?? (options[name].type === 'boolean' && fromEnv !== undefined ? fromEnv === 'true' : fromEnv);
  };
  const parsed = configSchema.safeParse(rawConfig(get, env));
  if (!parsed.success) {
    return { ok: false, help: false, message: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('\n') };
  }
  return { ok: true, config: parsed.data };
}

function rawConfig(get: (name: keyof typeof options) => string | boolean | undefined, env: NodeJS.ProcessEnv): Record<string, unknown> {
  const metricsAuth = get('metrics-auth') ?? 'kubernetes';
  // Unauthenticated metrics stay on loopback unless an address is given.
  const addr = String(get('metrics-addr') ?? (metricsAuth === 'none' ? '127.0.0.1:8080' : '0.0.0.0:8080'));
  const colon = addr.lastIndexOf(':');
  const cidrs = get('allowed-probe-cidrs');
  return {
    kubeconfig: get('kubeconfig'),
    context: get('context'),
    namespaces: listOf(get('namespace')),
    identity: get('identity') ?? env['POD_NAME'] ?? hostname(),
    metricsHost: addr.slice(0, Math.max(colon, 0)).replace(/^\[|\]$/g, '') || '0.0.0.0',
    metricsPort: addr.slice(colon + 1),
    metricsAuth,
    ...metricsTlsConfig(get),
    logLevel: get('log-level') ?? 'info',
    concurrency: get('concurrency') ?? 256,
    maxProbeTimeoutSeconds: get('max-probe-timeout') ?? defaultMaxProbeTimeoutSeconds,
    qps: get('kube-api-qps') ?? 50,
    burst: get('kube-api-burst') ?? 100,
    ...eventConfig(get),
    ...trustConfig(get),
    allowedCidrs: typeof cidrs === 'string' && cidrs !== '' ? cidrs.split(',').map((c) => c.trim()) : [],
    statusIntervalMs: get('status-interval') ?? 2,
    ...guardConfig(get),
    kubeProbeVersion: get('kube-probe-version'),
    ...shardingConfig(get, env),
    ...selfCheckConfig(get, env),
    ...secondOpinionConfig(get, env),
    ...webhookConfig(get),
  };
}

/** TLS on the metrics port (ADR 0068). */
function metricsTlsConfig(get: (name: keyof typeof options) => string | boolean | undefined): Record<string, unknown> {
  return { metricsCertDir: nonEmpty(get('metrics-cert-dir')), metricsTlsMinVersion: nonEmpty(get('metrics-tls-min-version')) ?? 'VersionTLS12' };
}

/** A trimmed string, or undefined when unset or blank. */
function nonEmpty(v: string | boolean | undefined): string | undefined {
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
}

/** `host:port` (brackets around an IPv6 host allowed) or `off`/empty. */
function addressOrOff(value: string | boolean): { host: string; port: string } | undefined {
  const addr = String(value).trim();
  if (addr === '' || addr === 'off') return undefined;
  const colon = addr.lastIndexOf(':');
  return { host: addr.slice(0, Math.max(colon, 0)).replace(/^\[|\]$/g, '') || '127.0.0.1', port: addr.slice(colon + 1) };
}

/** The readiness-gate injection webhook (ADR 0021). */
function webhookConfig(get: (name: keyof typeof options) => string | boolean | undefined): Record<string, unknown> {
  const addr = String(get('webhook-addr') ?? 'off').trim();
  const colon = addr.lastIndexOf(':');
  const optional = (v: string | boolean | undefined): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);
  return {
    webhook: addr === '' || addr === 'off' ? undefined : { host: addr.slice(0, Math.max(colon, 0)).replace(/^\[|\]$/g, '') || '0.0.0.0', port: addr.slice(colon + 1) },
    webhookSecret: get('webhook-secret') ?? 'outprobe-webhook-tls',
    webhookService: get('webhook-service') ?? 'outprobe-webhook',
    webhookConfiguration: optional(get('webhook-configuration')),
    webhookCertDir: optional(get('webhook-cert-dir')),
    debug: addressOrOff(get('debug-addr') ?? '127.0.0.1:9446'),
  };
}

/** The second opinion (ADR 0018) and the peer channel (ADR 0036, 0037). */
function secondOpinionConfig(get: (name: keyof typeof options) => string | boolean | undefined, env: NodeJS.ProcessEnv): Record<string, unknown> {
  const peer = String(get('peer-addr') ?? '0.0.0.0:9444').trim();
  const colon = peer.lastIndexOf(':');
  const optional = (v: string | boolean | undefined): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);
  const envOf = (k: string): string | undefined => optional(env[k]);
  return {
    secondOpinion: get('second-opinion') ?? 'true',
    secondOpinionUnavailableAfterMs: get('second-opinion-unavailable-after') ?? 30,
    secondOpinionAllowedUsers: listOf(get('second-opinion-allowed-users')),
    membershipProof: get('membership-proof') ?? 'pod',
    self: { podName: envOf('POD_NAME'), namespace: envOf('POD_NAMESPACE'), podUid: envOf('POD_UID'), nodeName: optional(get('node-name')) ?? envOf('NODE_NAME'), podIP: envOf('POD_IP') },
    zone: optional(get('zone')),
    peerHost: peer.slice(0, Math.max(colon, 0)).replace(/^\[|\]$/g, '') || '0.0.0.0',
    peerPort: peer.slice(colon + 1),
    peerTokenFile: optional(get('peer-token-file')),
    peerPodSelector: optional(get('peer-pod-selector')),
  };
}

/** `a, b,,a` → `[a, b, a]`; unset or empty → `[]`. */
function items(value: string | boolean | undefined): string[] {
  return typeof value === 'string' ? value.split(',').map((v) => v.trim()).filter((v) => v !== '') : [];
}

/** `a, b,,a` → `[a, b]`; unset or empty → `[]`. */
function listOf(value: string | boolean | undefined): string[] {
  return [...new Set(items(value))];
}

/** What the installer lets ProbePolicy authors do (issue #10): exec, and remediation limits. */
function trustConfig(get: (name: keyof typeof options) => string | boolean | undefined): Record<string, unknown> {
  return {
    execEnabled: get('enable-exec-probes') ?? false,
    execNamespaces: listOrAll(get('exec-namespaces')),
    publishExecOutput: get('publish-exec-output') ?? false,
    maxRemediationsPerMinute: get('max-remediations-per-minute') ?? 10,
    maxHaltAbovePercentFailing: get('max-halt-above-percent-failing') ?? 50,
    allowDeleteAction: get('allow-delete-action') ?? false,
    kubeApiHttp2: get('kube-api-http2') ?? false,
  };
}

/** `*` (alone) means every namespace; otherwise a comma-separated list, empty entries dropped. */
function listOrAll(value: string | boolean | undefined): '*' | string[] {
  const list = items(value);
  return list.length === 1 && list[0] === '*' ? '*' : list;
}

/** The guards against outprobe causing an outage (issue 13). */
/** Events' own write budget (as the kubelet's --event-qps/--event-burst). */
function eventConfig(get: (name: keyof typeof options) => string | boolean | undefined): Record<string, unknown> {
  return {
    eventQps: get('event-qps') ?? 50,
    eventBurst: get('event-burst') ?? 100,
    gateWriteMaxInflight: get('gate-write-max-inflight') ?? 64,
    gateWriteQps: get('gate-write-qps') ?? 1000,
  };
}

function guardConfig(get: (name: keyof typeof options) => string | boolean | undefined): Record<string, unknown> {
  return { stallBoundMs: get('stall-bound') ?? 0.5, shutdownTimeoutMs: get('shutdown-timeout') ?? 20 };
}

function shardingConfig(get: (name: keyof typeof options) => string | boolean | undefined, env: NodeJS.ProcessEnv): Record<string, unknown> {
  return {
    sharding: get('sharding') ?? 'true',
    leaseNamespace: get('lease-namespace') ?? env['POD_NAMESPACE'],
    leaseDurationMs: get('lease-duration') ?? 15,
    leaseRenewIntervalMs: get('lease-renew-interval') ?? 5,
  };
}

function selfCheckConfig(get: (name: keyof typeof options) => string | boolean | undefined, env: NodeJS.ProcessEnv): Record<string, unknown> {
  const address = get('advertise-address') ?? env['POD_IP'];
  return {
    selfCheck: get('self-partition-detection') ?? 'true',
    advertiseAddress: typeof address === 'string' && address.trim() !== '' ? address.trim() : undefined,
    peerCheckIntervalMs: get('peer-check-interval') ?? 1,
    peerCheckTimeoutMs: get('peer-check-timeout') ?? 0.5,
    impairedUnreachableAfterMs: get('impaired-unreachable-after') ?? 3,
    impairedFailingShare: get('impaired-failing-share') ?? 0.5,
    impairedFailingMargin: get('impaired-failing-margin') ?? 0.3,
    impairedMinTargets: get('impaired-min-targets') ?? 10,
    impairedRecoverAfterMs: get('impaired-recover-after') ?? 10,
    impairedFailingSustainMs: get('impaired-failing-sustain') ?? 10,
    impairedMinNamespaces: get('impaired-min-namespaces') ?? 3,
  };
}

/**
 * The address peers check: `host:port` as given, else the host with the
 * metrics listener's port; an IPv6 literal is bracketed.
 */
export function peerAddress(advertise: string | undefined, port: number): string | undefined {
  if (advertise === undefined) return undefined;
  if (/^\[.*\]:\d+$/.test(advertise) || /^[^:]+:\d+$/.test(advertise)) return advertise;
  const host = advertise.replace(/^\[|\]$/g, '');
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
