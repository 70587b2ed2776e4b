/**
 * outprobe's entry point: configuration, wiring, signals. Everything with
 * behaviour lives in the stages; this file only builds the real clock,
 * clients and sinks and connects them.
 */
import { loadConfig, peerAddress } from './config/index.ts';
import type { Config } from './config/index.ts';
import { Controller, reporter } from './controller/index.ts';
import type { ControllerOptions, Probers } from './controller/index.ts';
import { systemClock, systemRandom } from './kernel/index.ts';
import { KubeClient, loadConnection, reviewBearerToken, reviewSelf, reviewToken } from './kube/index.ts';
import { WriteQueue } from './writeback/index.ts';
import { EventRecorder, Metrics, MetricsAuth, createLogger, startObservabilityServer } from './observability/index.ts';
import type { AuthDecision, Logger, ObservabilityServerOptions } from './observability/index.ts';
import { EventLoopMonitor, createExecProber, createGrpcProber, createHttpProber, tcpProbe } from './probing/index.ts';
import { SelfCheck, decodeReport, encodeReport, peerAnnotation, selfCheckReporter } from './impairment/index.ts';
import type { PeerView } from './impairment/index.ts';
import { ShardMembership, shardReporter } from './sharding/index.ts';
import { SecondOpinionGuard, allowedUsersReview, httpAskPeer, secondOpinionEndpoint, secondOpinionPath, secondOpinionReporter } from './secondopinion/index.ts';
import type { PeerAddress } from './secondopinion/index.ts';
import { NamespaceLabels, Webhook, WebhookCertStore, cacheView } from './injection/index.ts';
import type { WebhookEvent } from './injection/index.ts';

/** `kube-probe/<major>.<minor>` from the API server's /version, as the kubelet's own version would give. */
async function kubeProbeVersion(client: KubeClient, config: Config, log: Logger): Promise<string> {
  if (config.kubeProbeVersion !== undefined) return config.kubeProbeVersion;
  try {
    const v = await client.request<{ major?: string; minor?: string }>({ method: 'GET', path: '/version' });
    return `${v.major ?? '1'}.${(v.minor ?? '0').replace(/\D+$/, '')}`;
  } catch (err: unknown) {
    log.warn('could not read the server version; using kube-probe/1.37', { error: String(err) });
    return '1.37';
  }
}

/** Exec probes through pods/exec on the API server, with the client's credentials. */
function execVia(client: KubeClient, publishOutput: boolean): NonNullable<Probers['exec']> {
  const exec = createExecProber({ server: client.connection.server, dispatcher: client.dispatcher, headers: () => client.authHeaders(), publishOutput });
  return (pod, container, command, timeoutMs, signal) => exec({ namespace: pod.namespace, pod: pod.name, container, command, timeoutMs }, signal);
}

/**
 * Membership through Leases, on a client of its own (token bucket and
 * connections), as client-go's leader election is usually given: the burst of
 * gate writes and Events of a replica that has just gained hundreds of pods
 * must never delay the renewal that keeps it a member (seen in CI: renewals
 * queued behind them, every Lease expired, and ownership churned for seconds).
 */
function startSharding(config: Config, client: KubeClient, log: Logger, metrics: Metrics): { sharding: ShardMembership; leaseClient: KubeClient } {
  const leaseClient = new KubeClient({
    connection: client.connection,
    clock: systemClock,
    random: systemRandom,
    qps: 5,
    burst: 10,
    http2: config.kubeApiHttp2,
    userAgent: `outprobe/${config.identity}/shard`,
    onRequest: (r) => metrics.recordApiRequest(r),
  });
  const sharding = new ShardMembership({
    client: leaseClient,
    clock: systemClock,
    random: systemRandom,
    namespace: config.leaseNamespace ?? client.connection.namespace,
    identity: config.identity,
    leaseDurationMs: config.leaseDurationMs,
    renewIntervalMs: config.leaseRenewIntervalMs,
    observe: shardReporter({ log, metrics }),
  });
  return { sharding, leaseClient };
}

/**
 * `/metrics` behind a TokenReview and a SubjectAccessReview for `get
 * /metrics` (kube-rbac-proxy's check), on a client of its own with a small
 * rate limit: whoever can reach the port can make the controller ask, and
 * those reviews must never queue the gate writes behind them.
 */
interface MetricsGuard {
  readonly authorize: ((authorization: string | undefined) => Promise<AuthDecision>) | undefined;
  close(): Promise<void>;
}

function metricsAuthVia(client: KubeClient, config: Config, log: Logger, metrics: Metrics): MetricsGuard {
  const reviewClient = new KubeClient({
    connection: client.connection,
    clock: systemClock,
    random: systemRandom,
    qps: 5,
    burst: 20,
    maxAttempts: 2,
    http2: config.kubeApiHttp2,
    userAgent: `outprobe/${config.identity}/metrics-auth`,
    onRequest: (r) => metrics.recordApiRequest(r),
  });
  const auth = new MetricsAuth({
    clock: systemClock,
    review: (token) => reviewBearerToken(reviewClient, token, { path: '/metrics', verb: 'get' }, AbortSignal.timeout(10_000)),
    onError: (err) => log.warn('metrics token review failed', { error: String(err) }),
  });
  return { authorize: (authorization) => auth.authorize(authorization), close: () => reviewClient.close() };
}

function metricsAuthFor(client: KubeClient, config: Config, log: Logger, metrics: Metrics): MetricsGuard {
  if (config.metricsAuth === 'kubernetes') return metricsAuthVia(client, config, log, metrics);
  if (!/^(127\.|::1$|localhost$)/.test(config.metricsHost)) log.warn('/metrics is served without authentication on a non-loopback address', { metricsHost: config.metricsHost });
  return { authorize: undefined, close: () => Promise.resolve() };
}

/** GET /healthz of a peer; any answer but a 2xx, or none in time, is a failed check. */
async function checkPeer(address: string, signal: AbortSignal): Promise<boolean> {
  try {
    const res = await fetch(`http://${address}/healthz`, { signal, redirect: 'manual' });
    await res.body?.cancel();
    return res.ok;
  } catch {
    return false;
  }
}

function peersOf(sharding: ShardMembership): PeerView[] {
  const out: PeerView[] = [];
  for (const l of sharding.peerLeases()) {
    const report = decodeReport(l.peer);
    if (report !== undefined) out.push({ identity: l.holder, report });
  }
  return out;
}

/** Self-partition detection (ADR 0017), built once the listener's port is known. */
function startSelfCheck(deps: { readonly config: Config; readonly port: number; readonly controller: Controller; readonly sharding: ShardMembership | undefined; readonly log: Logger; readonly metrics: Metrics; readonly events: EventRecorder }): SelfCheck | undefined {
  const { config, controller, sharding } = deps;
  if (sharding === undefined || !config.selfCheck) return undefined;
  const podNs = process.env['POD_NAMESPACE'];
  const podName = process.env['POD_NAME'];
  const pod = podNs === undefined || podName === undefined ? undefined : { kind: 'Pod' as const, apiVersion: 'v1', namespace: podNs, name: podName, uid: process.env['POD_UID'] ?? '' };
  const address = peerAddress(config.advertiseAddress, deps.port);
  if (address === undefined) deps.log.warn('no --advertise-address and no $POD_IP: peers cannot check this replica; it still checks them');
  return new SelfCheck({
    clock: systemClock,
    identity: config.identity,
    address,
    peers: () => peersOf(sharding),
    local: () => {
      let failing = 0;
      let targets = 0;
      for (const t of controller.targets.all()) {
        targets++;
        if (t.state.committed === 'failure') failing++;
      }
      return { failing, targets };
    },
    check: checkPeer,
    thresholds: {
      unreachableAfterMs: config.impairedUnreachableAfterMs,
      failingShare: config.impairedFailingShare,
      failingMargin: config.impairedFailingMargin,
      minTargets: config.impairedMinTargets,
      recoverAfterMs: config.impairedRecoverAfterMs,
    },
    intervalMs: config.peerCheckIntervalMs,
    timeoutMs: config.peerCheckTimeoutMs,
    observe: selfCheckReporter({ log: deps.log, metrics: deps.metrics, events: deps.events, ...(pod === undefined ? {} : { pod }) }),
  });
}

/** Peer checks every interval; stands down when impaired, rejoins when recovered. */
async function runSelfCheck(selfCheck: SelfCheck | undefined, sharding: ShardMembership | undefined, controller: Controller, signal: AbortSignal): Promise<void> {
  if (selfCheck === undefined || sharding === undefined) return;
  await selfCheck.run(signal, async (change) => {
    controller.gates.sweep(); // held False writes go out as soon as a peer check confirms
    if (change?.type === 'impaired') await sharding.standDown();
    if (change?.type === 'recovered') sharding.rejoin();
  });
}

/** The controller's write guard: every False write and remediation needs a peer check since (ADR 0017). */
function guardOptions(on: boolean, selfCheck: () => SelfCheck | undefined, metrics: Metrics): Pick<ControllerOptions, 'confirmedSince' | 'onHeld'> {
  if (!on) return {};
  return {
    confirmedSince: (since) => selfCheck()?.confirmedSince(since) ?? false,
    onHeld: (action) => metrics.recordGuardHeld(action),
  };
}

/**
 * The second opinion (ADR 0018): the endpoint peers ask (TokenReview, then
 * the allowed users: by default this replica's own, learnt once with a
 * SelfSubjectReview) and the guard that asks them. Reviews go through a
 * client of their own with a small rate limit, as for /metrics.
 */
interface SecondOpinionParts {
  readonly routes: NonNullable<ObservabilityServerOptions['routes']>;
  /** How the log line at start describes it. */
  readonly mode: 'on' | 'answering only' | 'off';
  readonly guard: SecondOpinionGuard | undefined;
  close(): Promise<void>;
}

function secondOpinionParts(deps: { readonly config: Config; readonly client: KubeClient; readonly bearer: boolean; readonly sharding: ShardMembership | undefined; readonly log: Logger; readonly metrics: Metrics; readonly events: EventRecorder; readonly controller: () => Controller }): SecondOpinionParts {
  const { config, client, sharding, log, metrics } = deps;
  if (!config.secondOpinion) return { routes: new Map(), mode: 'off', guard: undefined, close: () => Promise.resolve() };
  const reviewClient = new KubeClient({ connection: client.connection, clock: systemClock, random: systemRandom, qps: 5, burst: 20, maxAttempts: 2, http2: config.kubeApiHttp2, userAgent: `outprobe/${config.identity}/second-opinion`, onRequest: (r) => metrics.recordApiRequest(r) });
  let self: Promise<ReadonlySet<string>> | undefined;
  const allowed = (): Promise<ReadonlySet<string>> => {
    if (config.secondOpinionAllowedUsers.length > 0) return Promise.resolve(new Set(config.secondOpinionAllowedUsers));
    self ??= reviewSelf(reviewClient, AbortSignal.timeout(10_000)).then((name) => new Set([name]), (err: unknown) => {
      self = undefined; // asked again on the next request
      throw err;
    });
    return self;
  };
  const auth = new MetricsAuth({
    clock: systemClock,
    review: allowedUsersReview(async (token) => {
      const who = await reviewToken(reviewClient, token, AbortSignal.timeout(10_000));
      return who.authenticated ? who.user.username : undefined;
    }, allowed),
    onError: (err) => log.warn('second-opinion token review failed', { error: String(err) }),
  });
  const endpoint = secondOpinionEndpoint({ authorize: (a) => auth.authorize(a), answer: (req, signal) => deps.controller().secondOpinion(req, signal) });
  let guard: SecondOpinionGuard | undefined;
  if (sharding !== undefined && deps.bearer) {
    guard = new SecondOpinionGuard({
      clock: systemClock,
      identity: config.identity,
      peers: () => peerAddresses(sharding),
      // Whatever bearer token the credentials carry now (a rotated service-account token, a refreshed exec one).
      ask: httpAskPeer(() => client.bearerToken()),
      observe: secondOpinionReporter({ log, metrics, events: deps.events, identity: config.identity }),
      onSettled: () => {
        const c = deps.controller();
        c.gates.sweep();
        c.remediator.step();
      },
    });
  } else if (sharding !== undefined) {
    log.warn('no bearer token (client-certificate credentials): this replica cannot ask its peers for a second opinion and acts on its own probes');
  }
  return { routes: new Map([[secondOpinionPath, endpoint]]), mode: guard === undefined ? 'answering only' : 'on', guard, close: () => reviewClient.close() };
}

function peerAddresses(sharding: ShardMembership): PeerAddress[] {
  return peersOf(sharding).flatMap((p) => (p.report.address === undefined ? [] : [{ identity: p.identity, address: p.report.address }]));
}

/** /readyz: caches synced and not impaired. */
function readiness(controller: Controller, selfCheck: SelfCheck | undefined): true | { ok: false; reason: string } {
  if (!controller.ready) return { ok: false, reason: 'caches not synced yet' };
  if (selfCheck?.impaired === true) return { ok: false, reason: 'replica impaired (see its log and the ReplicaImpaired Event)' };
  return true;
}

function warnNoExecNamespace(config: Config, log: Logger): void {
  if (config.execEnabled && config.execNamespaces !== '*' && config.execNamespaces.length === 0) {
    log.warn('exec probes are enabled but --exec-namespaces is empty: every policy with an exec probe is Invalid');
  }
}

function webhookReporter(log: Logger, metrics: Metrics): (e: WebhookEvent) => void {
  return (e) => {
    if (e.type === 'webhook-review') metrics.recordWebhookReview(e.result, e.durationMs / 1000);
    else if (e.type === 'webhook-serving') log.info('readiness-gate injection webhook serving', { port: e.port });
    else if (e.type === 'webhook-certs') log.info('webhook certificate', { action: e.action, lostRace: e.lostRace, caBundlePatched: e.caBundlePatched });
    else log.warn(`webhook ${e.stage} failed; retrying (pods are still created, without injected gates)`, { error: String(e.error) });
  };
}

/**
 * The readiness-gate injection webhook (ADR 0021): reads the controller's
 * policy cache and a namespace-label cache, never the API per request.
 */
function startWebhook(config: Config, client: KubeClient, controller: Controller, log: Logger, metrics: Metrics): { run(signal: AbortSignal): Promise<unknown> } {
  if (config.webhook === undefined) return { run: () => Promise.resolve() };
  const namespace = process.env['POD_NAMESPACE'] ?? client.connection.namespace;
  const namespaces = new NamespaceLabels({ client, clock: systemClock, random: systemRandom, namespaces: config.namespaces });
  const svc = config.webhookService;
  const webhook = new Webhook({
    host: config.webhook.host,
    port: config.webhook.port,
    clock: systemClock,
    view: cacheView({ policies: controller.policies, namespaceLabels: (ns) => namespaces.labels(ns), ownNamespace: namespace }),
    certs: config.webhookCertDir !== undefined
      ? { kind: 'dir', dir: config.webhookCertDir }
      : {
          kind: 'secret',
          store: new WebhookCertStore({
            client,
            clock: systemClock,
            namespace,
            secretName: config.webhookSecret,
            webhookConfiguration: config.webhookConfiguration,
            rotation: { serviceName: svc, names: [`${svc}.${namespace}.svc`, `${svc}.${namespace}`, svc] },
          }),
        },
    observe: webhookReporter(log, metrics),
  });
  return { run: (signal) => Promise.all([namespaces.run(signal), webhook.run(signal)]) };
}

async function main(): Promise<number> {
  const loaded = loadConfig(process.argv.slice(2), process.env);
  if (!loaded.ok) {
    (loaded.help ? process.stdout : process.stderr).write(`${loaded.message}\n`);
    return loaded.help ? 0 : 2;
  }
  const config = loaded.config;
  const log = createLogger({ level: config.logLevel });
  const metrics = new Metrics();
  const client = new KubeClient({
    connection: loadConnection({ kubeconfig: config.kubeconfig, context: config.context }),
    clock: systemClock,
    random: systemRandom,
    qps: config.qps,
    burst: config.burst,
    http2: config.kubeApiHttp2,
    userAgent: `outprobe/${config.identity}`,
    onRequest: (r) => metrics.recordApiRequest(r),
  });
  const userAgent = `kube-probe/${await kubeProbeVersion(client, config, log)}`;
  // Events have their own token bucket on the same connections (as the kubelet's --event-qps), so a burst of
  // gate-change Events never delays gate writes, and gate writes never starve the Events.
  const eventClient = client.withRateLimit({ qps: config.eventQps, burst: config.eventBurst, userAgent: `outprobe/${config.identity}/events` });
  // Gate writes have their own path (ADR 0022): a rate cap of their own, and as many in flight as the API server
  // accepts (AIMD, Retry-After honoured), most urgent first.
  const gateWrites = gateWritePath(config, client, metrics, log);
  const events = new EventRecorder({ api: eventClient, clock: systemClock, random: systemRandom, logger: log, metrics, reportingInstance: config.identity });
  // Event-loop delay for the metric, and stalls for the guard that voids the failures they cause (ADR 0016).
  const loopMonitor = new EventLoopMonitor({ boundMs: config.stallBoundMs, onDelay: (ms) => metrics.observeEventLoopDelay(ms / 1000) });
  loopMonitor.start();
  const { sharding, leaseClient } = config.sharding ? startSharding(config, client, log, metrics) : { sharding: undefined, leaseClient: undefined };
  // Built once the listener's port is known; the guard below reads it lazily.
  const guard: { check: SelfCheck | undefined } = { check: undefined };
  const late: { controller: Controller | undefined } = { controller: undefined };
  const secondOpinion = secondOpinionParts({ config, client, bearer: (await client.bearerToken()) !== undefined, sharding, log, metrics, events, controller: () => {
    if (late.controller === undefined) throw new Error('second opinion asked before the controller was built');
    return late.controller;
  } });
  const controller = new Controller({
    client,
    clock: systemClock,
    random: systemRandom,
    observe: reporter({ log, metrics, events }),
    gateWrites,
    probers: {
      httpGet: createHttpProber({ userAgent }),
      tcpSocket: tcpProbe,
      grpc: createGrpcProber({ userAgent }),
      ...(config.execEnabled ? { exec: execVia(client, config.publishExecOutput) } : {}),
    },
    stallGuard: loopMonitor,
    execEnabled: config.execEnabled,
    execNamespaces: config.execNamespaces,
    limits: { perMinute: config.maxRemediationsPerMinute, maxHaltAbovePercentFailing: config.maxHaltAbovePercentFailing, allowDelete: config.allowDeleteAction },
    concurrency: config.concurrency,
    maxProbeTimeoutSeconds: config.maxProbeTimeoutSeconds,
    allowedCidrs: config.allowedCidrs,
    namespaces: config.namespaces,
    statusIntervalMs: config.statusIntervalMs,
    identity: config.identity,
    ...(sharding === undefined
      ? {}
      : {
          owns: (pod) => sharding.owns(pod),
          gainedAt: (pod) => sharding.gainedAt(pod),
          mayRemediate: (pod) => sharding.mayRemediate(pod),
          writesStatus: (uid) => sharding.writesStatus(uid),
          aggregate: (key, local) => sharding.aggregate(key, local),
        }),
    ...guardOptions(sharding !== undefined && config.selfCheck, () => guard.check, metrics),
    ...(secondOpinion.guard === undefined ? {} : { secondOpinion: secondOpinion.guard }),
  });
  late.controller = controller;
  const metricsAuth = metricsAuthFor(client, config, log, metrics);
  const server = await startObservabilityServer({
    host: config.metricsHost,
    port: config.metricsPort,
    metrics,
    ready: () => readiness(controller, guard.check),
    authorizeMetrics: metricsAuth.authorize,
    routes: secondOpinion.routes,
  });
  log.info('outprobe started', {
    identity: config.identity,
    namespaces: config.namespaces.length === 0 ? '(all)' : config.namespaces.join(','),
    metricsPort: server.port,
    metricsAuth: config.metricsAuth,
    userAgent,
    server: client.connection.server,
    sharding: sharding === undefined ? 'off' : `Leases in ${config.leaseNamespace ?? client.connection.namespace}`,
    stallBoundSeconds: config.stallBoundMs / 1000,
    secondOpinion: secondOpinion.mode,
  });
  warnNoExecNamespace(config, log);
  guard.check = startSelfCheck({ config, port: server.port, controller, sharding, log, metrics, events });
  metrics.setReplicaImpaired(false);
  const stop = new AbortController();
  const stages = new ShutdownStages();
  for (const sig of ['SIGTERM', 'SIGINT'] as const) {
    process.once(sig, () => {
      log.info(`${sig}: shutting down`);
      stop.abort();
      watchShutdown(stages, config.shutdownTimeoutMs, log);
    });
  }
  const gauges = setInterval(() => {
    const counts = { readiness: 0, liveness: 0, startup: 0 };
    for (const t of controller.targets.all()) counts[t.plan.kind]++;
    metrics.setTargets(counts);
    metrics.setOwnedTargets(controller.targets.size);
    if (sharding !== undefined) {
      metrics.setShardMembers(sharding.members?.length ?? 0);
      metrics.setUnownedPods(sharding.unownedPods());
    }
    const stats = controller.scheduler.stats();
    metrics.observeSchedulerLag(Math.max(0, stats.lastLagMs) / 1000);
    metrics.setProbesInFlight(controller.scheduler.inFlightByNamespace());
  }, 5000);
  // Sharding joins once the controller's caches are synced and releases its Lease on stop.
  const shardDone = stages.track('shard Lease release', Promise.resolve(sharding?.run(stop.signal, {
    get ready() {
      return controller.ready;
    },
    pods: () => controller.pods.store.values(),
    localCounts: () => controller.localCounts(),
    resync: () => {
      controller.resync();
      metrics.setOwnedTargets(controller.targets.size);
    },
    annotations: () => (guard.check === undefined ? {} : { [peerAnnotation]: encodeReport(guard.check.report()) }),
  })));
  const selfCheckDone = stages.track('self-check', runSelfCheck(guard.check, sharding, controller, stop.signal));
  const webhookDone = stages.track('webhook', startWebhook(config, client, controller, log, metrics).run(stop.signal));
  await stages.track('controller (probes, reflectors, gate writes in flight)', controller.run(stop.signal));
  await webhookDone;
  await shardDone;
  await selfCheckDone;
  clearInterval(gauges);
  loopMonitor.stop();
  await stages.track('metrics server', server.close());
  await stages.track('Events', events.close()); // open ReadinessGateChangesFolded summaries are written before the connections close
  await stages.track('API connections', Promise.all([client.close(), leaseClient?.close(), metricsAuth.close(), secondOpinion.close()]));
  log.info('outprobe stopped');
  return 0;
}

/** The parts of a stop still under way, by name: what a stop that overran its time is waiting for. */
class ShutdownStages {
  readonly #pending = new Set<string>();

  track<T>(name: string, work: Promise<T>): Promise<T> {
    this.#pending.add(name);
    return work.finally(() => this.#pending.delete(name));
  }

  get pending(): string[] {
    return [...this.#pending];
  }
}

/**
 * Bounds a stop: a quarter of the way in, says what it still waits for; at
 * the timeout, says it again as an error and exits 1 (the shard Lease, the
 * first thing released, is bounded on its own at 5 s and otherwise expires).
 * The timers never keep a finished process alive.
 */
function watchShutdown(stages: ShutdownStages, timeoutMs: number, log: Logger): void {
  setTimeout(() => {
    if (stages.pending.length > 0) log.warn('shutdown is taking long', { waitingFor: stages.pending, afterMs: Math.round(timeoutMs / 4) });
  }, timeoutMs / 4).unref();
  setTimeout(() => {
    log.error('shutdown did not finish in time: exiting', { waitingFor: stages.pending, timeoutMs });
    process.exit(1);
  }, timeoutMs).unref();
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`outprobe: fatal: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);

/** The gate-write client and queue (ADR 0022); its metrics, and a debug log line per throttled write with the APF UIDs. */
function gateWritePath(config: Config, client: KubeClient, metrics: Metrics, log: Logger): { client: KubeClient; queue: WriteQueue } {
  const gateClient = client.withRateLimit({ qps: config.gateWriteQps, burst: Math.max(1, Math.ceil(config.gateWriteQps)), userAgent: `outprobe/${config.identity}/gates` });
  const queue: WriteQueue = new WriteQueue({
    clock: systemClock,
    maxInflight: config.gateWriteMaxInflight,
    onOutcome: (o, urgency) => {
      if (o.kind === 'throttled') {
        metrics.recordGateWriteThrottled(o.priorityLevelUid);
        log.debug('gate write throttled by the API server', { urgency, retryAfterMs: o.retryAfterMs, pauseMs: o.pauseMs, limit: queue.limit, priorityLevelUid: o.priorityLevelUid, flowSchemaUid: o.flowSchemaUid });
      }
      metrics.setGateWriteQueue({ waiting: queue.waitingBy(), limit: queue.limit, inflight: queue.inflight });
    },
  });
  metrics.setGateWriteQueue({ waiting: queue.waitingBy(), limit: queue.limit, inflight: queue.inflight });
  return { client: gateClient, queue };
}
