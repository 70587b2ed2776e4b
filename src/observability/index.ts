/**
 * The observability sink: every stage reports here (style rule 10). JSON
 * logs, Prometheus metrics, the health/metrics HTTP endpoints and Kubernetes
 * Events. Domain code sees the small interfaces (Logger, the Metrics
 * methods, EventRecorder.record), never winston or prom-client.
 */
export { boundFields, createLogger, logLevels, silentLogger } from './logger.ts';
export type { LogFields, LogLevel, Logger, LoggerOptions } from './logger.ts';
export { Metrics } from './metrics.ts';
export { watchHeadBudget } from './head-budget-metrics.ts';
export type { HeadBudgetSource } from './head-budget-metrics.ts';
export { AlertMetrics } from './alert-metrics.ts';
export { CertMetrics } from './cert-metrics.ts';
export type { CertReloadResult, ListenerCertMetrics } from './cert-metrics.ts';
export { PeerMetrics } from './peer-metrics.ts';
export type { AdmissionLane, AdmissionResult, GuardedEndpoint, SecondOpinionErrorReason } from './peer-metrics.ts';
export type {
  EventDropCause, EventResultLabel, GateWriteResult, MetricsOptions, ProbeHandlerLabel, ProbeResultLabel,
  RemediationAction, RemediationResultLabel, TransitionToLabel,
} from './metrics.ts';
export { startObservabilityServer } from './server.ts';
export type { MetricsSource, ObservabilityServer, ObservabilityServerOptions, ReadinessCheck } from './server.ts';
export { EventRecorder, eventBody, eventName, eventReportingComponent, eventSourceComponent, rfc3339, truncateMessage } from './events.ts';
export type { EventApi, EventMetrics, EventRecorderOptions, EventType, InvolvedObject } from './events.ts';
export { EventAggregator, combinedPrefix, defaultAggregatorConfig } from './event-aggregator.ts';
export type { Aggregated, AggregatorConfig, SimilarEvent } from './event-aggregator.ts';
export { FoldLedger, foldMessage } from './event-fold.ts';
export type { EventFold, FoldSummary } from './event-fold.ts';
export { EventCorrelator, correlationKey, decideEvent, defaultCorrelatorConfig, refill } from './event-correlator.ts';
export type { Correlation, CorrelatorConfig, EventDecision, SeenEvent, SpamBucket } from './event-correlator.ts';
export { MetricsAuth, bearerToken } from './metrics-auth.ts';
export { TokenGate } from './token-gate.ts';
export type { GateOutcome, ReviewLane, TokenGateOptions } from './token-gate.ts';
export type { AuthDecision, MetricsAccess, MetricsAccessReview, MetricsAuthOptions } from './metrics-auth.ts';
export { ShutdownStages, watchShutdown } from './shutdown.ts';
