import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ProbeKind } from '../kernel/index.ts';
import { probeKinds } from '../kernel/index.ts';
import type { RequestRecord } from '../kube/index.ts';
import { AlertMetrics } from './alert-metrics.ts';
import { CertMetrics } from './cert-metrics.ts';
import { PeerMetrics } from './peer-metrics.ts';

/** How one probe pass ended: the executors' outcome kinds, or `voided` (a failure the stall guard voided, ADR 0016). */
export type ProbeResultLabel = 'success' | 'warning' | 'failure' | 'errored' | 'voided';
/** The probe handler, named as in core/v1. */
export type ProbeHandlerLabel = 'httpGet' | 'tcpSocket' | 'grpc' | 'exec';
/** The committed value a target moved to (the results stage's values). */
export type TransitionToLabel = 'unknown' | 'success' | 'failure';
export type GateWriteResult = 'written' | 'gone' | 'failed';
export type RemediationAction = 'Evict' | 'Delete';
export type RemediationResultLabel =
  | 'evicted' | 'deleted' | 'skipped_budget' | 'rate_limited' | 'halted' | 'waiting' | 'conflict' | 'not_found' | 'pdb_blocked' | 'observe' | 'failed';
/** What became of one `EventRecorder.record()` call. */
export type EventResultLabel = 'created' | 'bumped' | 'failed';
/** Why an Event was not written: its write queue was full, the per-object rate cap, the write failed, or it was still queued at shutdown. */
export type EventDropCause = 'queue_full' | 'rate_limited' | 'failed' | 'shutdown';

export interface MetricsOptions {
  /** Also collect prom-client's default process and Node.js metrics into this registry. @default true */
  readonly defaultMetrics?: boolean;
}

const prefix = 'outprobe_';
/** The namespace of a `<namespace>/<name>` policy key. */
const namespaceOf = (policy: string): string => policy.slice(0, Math.max(0, policy.indexOf('/')));
/** 1 ms to 10 s: a TCP connect on loopback up to a probe's longest sensible timeout. */
const latencyBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** 5 ms to 2 min: from a busy loop's jitter to a probe that waited out others' longest timeouts. */
/**
 * 1 ms to 30 s of event-loop delay, with an edge at 0.5 s (the default
 * --stall-bound) so `le="0.5"` separates the delays the stall guard acts on.
 */
const loopDelayBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const lagBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/**
 * Every outprobe metric, in a registry of its own (never prom-client's global
 * one, so tests and several instances do not collide). Labels are bounded:
 * never a pod. One convention for every per-policy series (ADR 0062): it
 * carries `namespace` (the policy's) and `policy` (`<namespace>/<name>`, unique
 * on its own, so `sum by (policy)` never merges two namespaces' policies). Series that carry a policy
 * are remembered so `forgetPolicy` can delete them when the policy goes away.
 */
export class Metrics {
  readonly registry: Registry;
  /** The fleet's trust metrics (ADR 0036, 0037). */
  readonly peer: PeerMetrics;
  /** The series the chart's alerts need (ADR 0061). */
  readonly alerts: AlertMetrics;
  /** Serving certificates read from files (ADR 0068). */
  readonly certs: CertMetrics;
  readonly #probes: Counter<'namespace' | 'policy' | 'kind' | 'result'>;
  readonly #probeDuration: Histogram<'kind' | 'handler'>;
  readonly #schedulerLag: Histogram;
  readonly #scheduleLag: Histogram<'namespace' | 'policy'>;
  /** policy → its labelled lag series (observed on every pass: labels hashed once). */
  readonly #scheduleLagByPolicy = new Map<string, { observe(value: number): void }>();
  /** The probe counter's series by policy, kind and result, and the duration histogram's by kind and handler: one label hash per series, not per probe (issue 16). */
  readonly #probeSeries = new Map<string, { inc(): void }>();
  readonly #durationSeries = new Map<string, { observe(value: number): void }>();
  readonly #probesInFlight: Gauge<'namespace'>;
  readonly #loopDelay: Histogram;
  readonly #probesVoided: Counter<'namespace' | 'policy' | 'kind'>;
  readonly #targets: Gauge<'kind'>;
  readonly #ownedTargets: Gauge;
  readonly #unownedPods: Gauge;
  readonly #shardMembers: Gauge;
  readonly #apiRequests: Counter<'verb' | 'resource' | 'code'>;
  readonly #apiDuration: Histogram<'verb' | 'resource'>;
  readonly #gateWrites: Counter<'result'>;
  readonly #gateWriteDelay: Histogram<'status'>;
  readonly #gateRepairs: Counter;
  readonly #gateWriteThrottled: Counter;
  readonly #gateWriteQueue: Gauge;
  readonly #gateWriteLimit: Gauge;
  readonly #gateWriteInflight: Gauge;
  readonly #remediations: Counter<'namespace' | 'policy' | 'action' | 'result'>;
  readonly #transitions: Counter<'namespace' | 'policy' | 'kind' | 'to'>;
  readonly #probeErrors: Gauge<'namespace' | 'policy'>;
  readonly #divergentPods: Gauge<'namespace' | 'policy'>;
  readonly #noVantagePods: Gauge<'namespace' | 'policy'>;
  readonly #policies: Gauge<'state'>;
  readonly #readinessPanic: Gauge<'namespace' | 'policy'>;
  readonly #unreadyHeld: Gauge<'namespace' | 'policy' | 'state'>;
  readonly #events: Counter<'result'>;
  readonly #eventsDropped: Counter<'reason' | 'cause'>;
  readonly #eventsFolded: Counter<'reason'>;
  readonly #webhookReviews: Counter<'result'>;
  readonly #webhookDuration: Histogram;
  readonly #skippedObjects: Counter<'resource'>;
  readonly #impaired: Gauge;
  readonly #impairments: Counter<'reason'>;
  readonly #peers: Gauge<'state'>;
  readonly #guardHeld: Counter<'action'>;
  readonly #secondOpinions: Counter<'result'>;
  readonly #secondOpinionDuration: Histogram<'result'>;
  /** policy → (series key → remover), for forgetPolicy. */
  readonly #policySeries = new Map<string, Map<string, () => void>>();

  constructor(options: MetricsOptions = {}) {
    this.registry = new Registry();
    const registers = [this.registry];
    this.peer = new PeerMetrics(this.registry);
    this.alerts = new AlertMetrics(this.registry);
    this.certs = new CertMetrics(this.registry);
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
    this.#probes = new Counter({ name: `${prefix}probes_total`, help: 'Probe attempts by policy, probe kind and result.', labelNames: ['namespace', 'policy', 'kind', 'result'], registers });
    this.#probeDuration = new Histogram({ name: `${prefix}probe_duration_seconds`, help: 'Time one probe attempt took.', labelNames: ['kind', 'handler'], buckets: latencyBuckets, registers });
    this.#schedulerLag = new Histogram({ name: `${prefix}scheduler_lag_seconds`, help: 'How late a probe started after its due time.', buckets: latencyBuckets, registers });
    this.#scheduleLag = new Histogram({
      name: `${prefix}probe_schedule_lag_seconds`,
      help: 'How late each probe pass started after its due time, by namespace and policy (waiting for a probe slot included).',
      labelNames: ['namespace', 'policy'],
      buckets: lagBuckets,
      registers,
    });
    this.#loopDelay = new Histogram({
      name: `${prefix}event_loop_delay_seconds`,
      help: 'How late the stall guard\'s sampler timer (armed every 20 ms) fired: event-loop delay, with the moments of stalls (GC pauses, long synchronous work, CPU throttling).',
      buckets: loopDelayBuckets,
      registers,
    });
    this.#probesVoided = new Counter({
      name: `${prefix}probes_voided_total`,
      help: 'Failed probe attempts voided by the stall guard (this process stalled during them beyond --stall-bound): retried, never counted. By namespace, policy and probe kind.',
      labelNames: ['namespace', 'policy', 'kind'],
      registers,
    });
    this.#probesInFlight = new Gauge({ name: `${prefix}probes_in_flight`, help: 'Probe passes running now, by namespace (sampled every few seconds).', labelNames: ['namespace'], registers });
    this.#targets = new Gauge({ name: `${prefix}targets`, help: 'Probe targets known to this replica, by probe kind.', labelNames: ['kind'], registers });
    this.#ownedTargets = new Gauge({ name: `${prefix}owned_targets`, help: 'Probe targets this replica owns and probes.', registers });
    this.#unownedPods = new Gauge({ name: `${prefix}unowned_pods`, help: 'Selected pods that no live replica owns.', registers });
    this.#shardMembers = new Gauge({ name: `${prefix}shard_members`, help: 'Live replicas in the shard membership.', registers });
    this.#apiRequests = new Counter({ name: `${prefix}api_requests_total`, help: 'Kubernetes API requests by verb, resource and HTTP code ("<error>" when no response).', labelNames: ['verb', 'resource', 'code'], registers });
    this.#apiDuration = new Histogram({ name: `${prefix}api_request_duration_seconds`, help: 'Kubernetes API request latency.', labelNames: ['verb', 'resource'], buckets: latencyBuckets, registers });
    this.#gateWrites = new Counter({ name: `${prefix}gate_writes_total`, help: 'Readiness-gate condition writes by result.', labelNames: ['result'], registers });
    this.#gateWriteDelay = new Histogram({
      name: `${prefix}gate_write_delay_seconds`,
      help: 'From the moment a gate condition was desired (for False: the failure verdict) to the API server taking its write, by the status written: write-guard holds, the write queue and the request.',
      labelNames: ['status'],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2.5, 5, 10, 30, 60, 120],
      registers,
    });
    this.#gateRepairs = new Counter({ name: `${prefix}gate_repairs_total`, help: 'Confirmed gate conditions written again because another writer had changed them (a previous owner during handover, or a person).', registers });
    this.#gateWriteThrottled = new Counter({
      name: `${prefix}gate_write_throttled_total`,
      help: 'Gate writes the API server refused with 429 or 503 (resent after its Retry-After, never dropped), by the API Priority and Fairness priority level (X-Kubernetes-PF-PriorityLevel-UID; "" when not sent).',
      labelNames: ['priority_level_uid'],
      registers,
    });
    this.#gateWriteQueue = new Gauge({ name: `${prefix}gate_write_queue`, help: 'Gate writes waiting for a slot, by urgency (false, repair, recovery, initial; sent in that order).', labelNames: ['urgency'], registers });
    this.#gateWriteLimit = new Gauge({ name: `${prefix}gate_write_inflight_limit`, help: 'Gate writes allowed in flight now: grows while writes succeed fast, halves on 429/503, up to --gate-write-max-inflight.', registers });
    this.#gateWriteInflight = new Gauge({ name: `${prefix}gate_write_inflight`, help: 'Gate writes in flight now.', registers });
    this.#remediations = new Counter({ name: `${prefix}remediations_total`, help: 'Liveness remediations by policy, action and result.', labelNames: ['namespace', 'policy', 'action', 'result'], registers });
    this.#transitions = new Counter({ name: `${prefix}transitions_total`, help: 'Committed result transitions by policy, probe kind and new value.', labelNames: ['namespace', 'policy', 'kind', 'to'], registers });
    this.#probeErrors = new Gauge({ name: `${prefix}probe_errors`, help: 'Targets of a policy whose last probe attempt errored (not counted as failure).', labelNames: ['namespace', 'policy'], registers });
    this.#readinessPanic = new Gauge({
      name: `${prefix}readiness_panic`,
      help: 'Whether this replica holds a policy in readiness panic (1): more of its gated pods fail readiness than maxUnreadyPercent allows, and outprobe fails open.',
      labelNames: ['namespace', 'policy'],
      registers,
    });
    this.#unreadyHeld = new Gauge({
      name: `${prefix}readiness_failing_pods`,
      help: 'Gated pods of a policy whose readiness probe fails, on this replica: state="held" are held unready (gate False), state="failed_open" are kept ready by the panic threshold.',
      labelNames: ['namespace', 'policy', 'state'],
      registers,
    });
    this.#divergentPods = new Gauge({
      name: `${prefix}divergent_pods`,
      help: 'Selected pods of a policy, on this replica, whose readiness the node (ContainersReady) and outprobe see differently, both views confirmed and stable: ready to the node but unreachable from outprobe, or the reverse. Sum over replicas for the policy.',
      labelNames: ['namespace', 'policy'],
      registers,
    });
    this.#noVantagePods = new Gauge({
      name: `${prefix}pods_without_vantage`,
      help: 'Selected pods of a policy that no replica may probe from outside their node under spec.vantage.spread (ADR 0040), kept by this replica: not probed, readiness condition kept True (reason NoVantage). Sum over replicas for the policy.',
      labelNames: ['namespace', 'policy'],
      registers,
    });
    this.#policies = new Gauge({ name: `${prefix}policies`, help: 'ProbePolicies by validity.', labelNames: ['state'], registers });
    this.#skippedObjects = new Counter({ name: `${prefix}watch_objects_skipped_total`, help: 'Listed or watched objects left out of the cache because they could not be read, by resource.', labelNames: ['resource'], registers });
    this.#impaired = new Gauge({ name: `${prefix}replica_impaired`, help: 'Whether this replica has declared itself impaired (1): it writes no False gate, remediates nothing and holds no shard Lease.', registers });
    this.#impairments = new Counter({ name: `${prefix}replica_impairments_total`, help: 'Times this replica declared itself impaired, by reason (unreachable: it reached no peer while they reach each other; failing: its failing share far above its peers\').', labelNames: ['reason'], registers });
    this.#peers = new Gauge({ name: `${prefix}peers`, help: 'Live peer replicas that advertise an address (state="known") and those whose /healthz answered recently (state="reached").', labelNames: ['state'], registers });
    this.#guardHeld = new Counter({ name: `${prefix}peer_guard_held_total`, help: 'False gate writes and remediations held back because no peer check confirmed this replica\'s network since the failure (or it is impaired), by action.', labelNames: ['action'], registers });
    this.#secondOpinions = new Counter({ name: `${prefix}second_opinions_total`, help: 'Second opinions asked of a peer replica before acting on a failure (ADR 0018), by result: agreed (the peer saw it fail too: the action proceeded), disagreed (the peer saw it succeed: nothing written, SecondOpinionDisagreed Event), error (no usable answer: held, asked again).', labelNames: ['result'], registers });
    this.#secondOpinionDuration = new Histogram({ name: `${prefix}second_opinion_duration_seconds`, help: 'Time from asking a peer replica for a second opinion to its answer (the delay it adds before a first False or a remediation), by result.', labelNames: ['result'], buckets: latencyBuckets, registers });
    this.#events = new Counter({ name: `${prefix}events_total`, help: 'Kubernetes Event writes: created, bumped (count of an existing Event raised) or failed.', labelNames: ['result'], registers });
    this.#eventsDropped = new Counter({
      name: `${prefix}events_dropped_total`,
      help: 'Events not written, by Event reason and cause (queue_full: the write queue was full; rate_limited: the per-object cap; failed: the API call failed; shutdown: still queued when the controller stopped).',
      labelNames: ['reason', 'cause'],
      registers,
    });
    this.#eventsFolded = new Counter({ name: `${prefix}events_folded_total`, help: 'Dropped Events accounted in a summary Event on their policy (e.g. ReadinessGateChangesFolded), by the dropped Event\'s reason.', labelNames: ['reason'], registers });
    this.#webhookReviews = new Counter({ name: `${prefix}webhook_reviews_total`, help: 'Pod admission reviews answered by the readiness-gate injection webhook (always allowed), by result: injected, already_gated, no_policy, excluded_namespace, not_pod_create, malformed, too_large, busy (refused: too many reviews at once).', labelNames: ['result'], registers });
    this.#webhookDuration = new Histogram({ name: `${prefix}webhook_review_duration_seconds`, help: 'Time the injection webhook took to read and answer one admission review.', buckets: latencyBuckets, registers });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The exposition text for a scrape. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  recordProbe(p: { readonly policy: string; readonly kind: ProbeKind; readonly handler: ProbeHandlerLabel; readonly result: ProbeResultLabel; readonly durationSeconds: number }): void {
    const key = `${p.policy}\u0000${p.kind}\u0000${p.result}`;
    let series = this.#probeSeries.get(key);
    if (series === undefined) {
      const labels = { namespace: namespaceOf(p.policy), policy: p.policy, kind: p.kind, result: p.result };
      series = this.#probes.labels(labels);
      this.#probeSeries.set(key, series);
      this.#remember(p.policy, 'probes', labels, () => {
        this.#probes.remove(labels);
        this.#probeSeries.delete(key);
      });
    }
    series.inc();
    const durationKey = `${p.kind}\u0000${p.handler}`;
    let duration = this.#durationSeries.get(durationKey);
    if (duration === undefined) {
      duration = this.#probeDuration.labels({ kind: p.kind, handler: p.handler });
      this.#durationSeries.set(durationKey, duration);
    }
    duration.observe(p.durationSeconds);
  }

  observeSchedulerLag(seconds: number): void {
    this.#schedulerLag.observe(Math.max(0, seconds));
  }

  /** One pass started `seconds` after it was due. `policy` is `<namespace>/<name>`. */
  observeScheduleLag(namespace: string, policy: string, seconds: number): void {
    let series = this.#scheduleLagByPolicy.get(policy);
    if (series === undefined) {
      const labels = { namespace, policy };
      series = this.#scheduleLag.labels(labels);
      this.#scheduleLagByPolicy.set(policy, series);
      this.#remember(policy, 'schedule_lag', {}, () => {
        this.#scheduleLag.remove(labels);
        this.#scheduleLagByPolicy.delete(policy);
      });
    }
    series.observe(Math.max(0, seconds));
  }

  /** One sample of event-loop delay (the stall guard's monitor). */
  observeEventLoopDelay(seconds: number): void {
    this.#loopDelay.observe(Math.max(0, seconds));
  }

  /** A failed attempt the stall guard voided. `policy` is `<namespace>/<name>`. */
  recordProbeVoided(v: { readonly namespace: string; readonly policy: string; readonly kind: ProbeKind }): void {
    const labels = { namespace: v.namespace, policy: v.policy, kind: v.kind };
    this.#probesVoided.inc(labels);
    this.#remember(v.policy, 'probes_voided', labels, () => this.#probesVoided.remove(labels));
  }

  /** Replaces the in-flight gauge: namespaces left out (idle) lose their series. */
  setProbesInFlight(byNamespace: ReadonlyMap<string, number>): void {
    this.#probesInFlight.reset();
    for (const [namespace, n] of byNamespace) this.#probesInFlight.set({ namespace }, n);
  }

  /** Sets the target gauge for every kind; a kind left out is 0. */
  setTargets(counts: Readonly<Partial<Record<ProbeKind, number>>>): void {
    for (const kind of probeKinds) this.#targets.set({ kind }, counts[kind] ?? 0);
  }

  setOwnedTargets(n: number): void {
    this.#ownedTargets.set(n);
  }

  setUnownedPods(n: number): void {
    this.#unownedPods.set(n);
  }

  setShardMembers(n: number): void {
    this.#shardMembers.set(n);
  }

  /** Fits `KubeClientOptions.onRequest`. */
  recordApiRequest(r: RequestRecord): void {
    this.#apiRequests.inc({ verb: r.verb, resource: r.resource, code: r.status === 0 ? '<error>' : String(r.status) });
    this.#apiDuration.observe({ verb: r.verb, resource: r.resource }, Math.max(0, r.durationMs) / 1000);
  }

  recordSkippedObject(resource: string): void {
    this.#skippedObjects.inc({ resource });
  }

  recordGateRepair(): void {
    this.#gateRepairs.inc();
  }

  recordGateWriteThrottled(priorityLevelUid: string): void {
    this.#gateWriteThrottled.inc({ priority_level_uid: priorityLevelUid });
  }

  /** The gate-write queue's state (ADR 0022). */
  setGateWriteQueue(s: { readonly waiting: Readonly<Record<string, number>>; readonly limit: number; readonly inflight: number }): void {
    for (const [urgency, n] of Object.entries(s.waiting)) this.#gateWriteQueue.set({ urgency }, n);
    this.#gateWriteLimit.set(s.limit);
    this.#gateWriteInflight.set(s.inflight);
  }

  /** `delaySeconds` (written only): from the desire to the server's answer. */
  recordGateWrite(result: GateWriteResult, written?: { readonly status: 'True' | 'False'; readonly delaySeconds: number }): void {
    this.#gateWrites.inc({ result });
    if (written !== undefined) this.#gateWriteDelay.observe({ status: written.status }, written.delaySeconds);
  }

  recordRemediation(r: { readonly policy: string; readonly action: RemediationAction; readonly result: RemediationResultLabel }): void {
    const labels = { namespace: namespaceOf(r.policy), policy: r.policy, action: r.action === 'Evict' ? 'evict' : 'delete', result: r.result };
    this.#remediations.inc(labels);
    this.#remember(r.policy, 'remediations', labels, () => this.#remediations.remove(labels));
  }

  recordTransition(t: { readonly policy: string; readonly kind: ProbeKind; readonly to: TransitionToLabel }): void {
    const labels = { namespace: namespaceOf(t.policy), policy: t.policy, kind: t.kind, to: t.to };
    this.#transitions.inc(labels);
    this.#remember(t.policy, 'transitions', labels, () => this.#transitions.remove(labels));
  }

  /** Targets of `policy` whose last attempts errored (the kubelet discards those results). */
  setProbeErrors(policy: string, n: number): void {
    const labels = { namespace: namespaceOf(policy), policy };
    this.#probeErrors.set(labels, n);
    this.#remember(policy, 'probe_errors', {}, () => this.#probeErrors.remove(labels));
  }

  /** A policy's panic-threshold state on this replica. `policy` is `<namespace>/<name>`. */
  setReadinessPanic(p: { readonly namespace: string; readonly policy: string; readonly panic: boolean; readonly held: number; readonly failedOpen: number }): void {
    const labels = { namespace: p.namespace, policy: p.policy };
    this.#readinessPanic.set(labels, p.panic ? 1 : 0);
    this.#unreadyHeld.set({ ...labels, state: 'held' }, p.held);
    this.#unreadyHeld.set({ ...labels, state: 'failed_open' }, p.failedOpen);
    this.#remember(p.policy, 'readiness_panic', {}, () => {
      this.#readinessPanic.remove(labels);
      this.#unreadyHeld.remove({ ...labels, state: 'held' });
      this.#unreadyHeld.remove({ ...labels, state: 'failed_open' });
    });
  }

  /** Pods of a policy whose node (ContainersReady) and this replica disagree on readiness (ADR 0023). `policy` is `<namespace>/<name>`. */
  setDivergentPods(namespace: string, policy: string, n: number): void {
    const labels = { namespace, policy };
    this.#divergentPods.set(labels, n);
    this.#remember(policy, 'divergent_pods', {}, () => this.#divergentPods.remove(labels));
  }

  /** Pods of a policy without a vantage that this replica keeps (ADR 0040). `policy` is `<namespace>/<name>`. */
  setNoVantagePods(namespace: string, policy: string, n: number): void {
    const labels = { namespace, policy };
    this.#noVantagePods.set(labels, n);
    this.#remember(policy, 'pods_without_vantage', {}, () => this.#noVantagePods.remove(labels));
  }

  setPolicies(counts: { readonly valid: number; readonly invalid: number }): void {
    this.#policies.set({ state: 'valid' }, counts.valid);
    this.#policies.set({ state: 'invalid' }, counts.invalid);
  }

  setReplicaImpaired(impaired: boolean): void {
    this.#impaired.set(impaired ? 1 : 0);
  }

  recordImpairment(reason: 'unreachable' | 'failing'): void {
    this.#impairments.inc({ reason });
  }

  setPeers(known: number, reached: number): void {
    this.#peers.set({ state: 'known' }, known);
    this.#peers.set({ state: 'reached' }, reached);
  }

  recordGuardHeld(action: 'gate_false' | 'remediation'): void {
    this.#guardHeld.inc({ action });
  }

  /** One second opinion ended (ADR 0018). */
  recordSecondOpinion(result: 'agreed' | 'disagreed' | 'error', seconds: number): void {
    this.#secondOpinions.inc({ result });
    this.#secondOpinionDuration.observe({ result }, Math.max(0, seconds));
  }

  recordWebhookReview(result: string, seconds: number): void {
    this.#webhookReviews.inc({ result });
    this.#webhookDuration.observe(seconds);
  }

  recordEvent(result: EventResultLabel): void {
    this.#events.inc({ result });
  }

  recordEventDropped(reason: string, cause: EventDropCause): void {
    this.#eventsDropped.inc({ reason, cause });
  }

  recordEventFolded(reason: string): void {
    this.#eventsFolded.inc({ reason });
  }

  /** Deletes every series labelled with `policy` (call when the policy is deleted). */
  forgetPolicy(policy: string): void {
    this.alerts.forgetPolicy(policy);
    const series = this.#policySeries.get(policy);
    if (series === undefined) return;
    for (const remove of series.values()) remove();
    this.#policySeries.delete(policy);
  }

  #remember(policy: string, metric: string, labels: Readonly<Record<string, string>>, remove: () => void): void {
    let series = this.#policySeries.get(policy);
    if (series === undefined) this.#policySeries.set(policy, (series = new Map<string, () => void>()));
    const key = `${metric}\u0000${Object.values(labels).join('\u0000')}`;
    if (!series.has(key)) series.set(key, remove);
  }
}
