/**
 * outprobe's entry point: configuration, wiring, signals. Everything with
 * behaviour lives in the stages; this file only builds the real clock,
 * clients and sinks and connects them.
 */
import { loadConfig } from './config/index.ts';
import type { Config } from './config/index.ts';
import { Controller, reporter } from './controller/index.ts';
import type { Probers } from './controller/index.ts';
import { systemClock, systemRandom } from './kernel/index.ts';
import { KubeClient, loadConnection } from './kube/index.ts';
import { WriteQueue } from './writeback/index.ts';
import { EventRecorder, Metrics, createLogger, startObservabilityServer, watchHeadBudget } from './observability/index.ts';
import type { Logger } from './observability/index.ts';
import { ShutdownStages, watchShutdown } from './observability/index.ts';
import { EventLoopMonitor, createExecProber, createGrpcProber, createHttpProber, sharedHeadBudget, tcpProbe } from './probing/index.ts';
import { encodeReport, peerAnnotation } from './impairment/index.ts';
import type { SelfCheck } from './impairment/index.ts';
import { fleetSummary, guardOptions, metricsAuthFor, runSelfCheck, shardingHooks, startDebugEndpoint, startPeerChannel, startSelfCheck, startSharding } from './fleet/index.ts';
import { ResultJournal } from './explain/index.ts';
import type { Sharding } from './fleet/index.ts';
import { NamespaceLabels, Webhook, WebhookCertStore, cacheView } from './injection/index.ts';
import { servingCertIf } from './servingcert/index.ts';
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
  // The metrics port's certificate (ADR 0068): loaded before anything else, so a missing one stops the start.
  const metricsCert = await servingCertIf({ dir: config.metricsCertDir, what: '--metrics-cert-dir', clock: systemClock, log, metrics: metrics.certs.listener('metrics') });
  watchHeadBudget(metrics.registry, sharedHeadBudget);
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
  // Built once the listener's port is known; the guard below reads it lazily.
  const guard: { check: SelfCheck | undefined } = { check: undefined };
  const late: { controller: Controller | undefined; shard: Sharding | undefined } = { controller: undefined, shard: undefined };
  // The peer listener first: membership publishes its port (ADR 0036, 0037).
  const peer = await startPeerChannel({ config, client, log, metrics, events, sharding: () => late.shard, controller: () => {
    if (late.controller === undefined) throw new Error('second opinion asked before the controller was built');
    return late.controller;
  } });
  late.shard = config.sharding ? startSharding({ config, client, log, metrics, events, peerPort: peer.port ?? config.peerPort, policies: () => late.controller?.policies.values() ?? [] }) : undefined;
  const sharding = late.shard?.sharding;
  // Each target's last results, for `kubectl outprobe explain` (ADR 0067).
  const journal = new ResultJournal({ clock: systemClock });
  const report = reporter({ log, metrics, events });
  const controller = new Controller({
    client,
    clock: systemClock,
    random: systemRandom,
    observe: (e) => {
      report(e);
      journal.observe(e);
    },
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
    ...shardingHooks(late.shard, config, { client, log, stall: loopMonitor }),
    ...guardOptions(sharding !== undefined && config.selfCheck, () => guard.check, metrics),
    ...(peer.guard === undefined ? {} : { secondOpinion: peer.guard }),
  });
  late.controller = controller;
  const metricsAuth = metricsAuthFor(client, config, log, metrics);
  const server = await startObservabilityServer({
    host: config.metricsHost,
    port: config.metricsPort,
    metrics,
    ready: () => readiness(controller, guard.check),
    authorizeMetrics: metricsAuth.authorize,
    tls: metricsCert.pair,
    tlsMinVersion: config.metricsTlsMinVersion,
  });
  const debug = await startDebugEndpoint({ config, controller, shard: late.shard, journal, clock: systemClock, log });
  log.info('outprobe started', {
    identity: config.identity,
    namespaces: config.namespaces.length === 0 ? '(all)' : config.namespaces.join(','),
    metricsPort: server.port,
    metricsAuth: config.metricsAuth,
    metricsTls: server.tls,
    userAgent,
    server: client.connection.server,
    stallBoundSeconds: config.stallBoundMs / 1000,
    ...fleetSummary(config, late.shard, peer),
  });
  warnNoExecNamespace(config, log);
  guard.check = startSelfCheck({ config, controller, sharding, log, metrics, events });
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
    selected: (p) => controller.selected(p),
    localCounts: () => controller.localCounts(),
    // In slices (ADR 0072) with membership's own pass (ADR 0073): the owned-targets gauge once it is applied.
    resync: (pass) => void controller.resync(pass).then(() => metrics.setOwnedTargets(controller.targets.size)),
    annotations: () => (guard.check === undefined ? {} : { [peerAnnotation]: encodeReport(guard.check.report()) }),
  })));
  const selfCheckDone = stages.track('self-check', runSelfCheck(guard.check, sharding, controller, stop.signal));
  const certDone = stages.track('metrics certificate reload', metricsCert.run(server, stop.signal));
  const webhookDone = stages.track('webhook', startWebhook(config, client, controller, log, metrics).run(stop.signal));
  await stages.track('controller (probes, reflectors, gate writes in flight)', controller.run(stop.signal));
  await webhookDone;
  await shardDone;
  await selfCheckDone;
  await certDone;
  clearInterval(gauges);
  loopMonitor.stop();
  await stages.track('metrics server', Promise.all([server.close(), debug.close()]));
  await stages.track('Events', events.close()); // open ReadinessGateChangesFolded summaries are written before the connections close
  await stages.track('peer listener', peer.close());
  await stages.track('API connections', Promise.all([client.close(), late.shard?.leaseClient.close(), metricsAuth.close()]));
  log.info('outprobe stopped');
  return 0;
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
