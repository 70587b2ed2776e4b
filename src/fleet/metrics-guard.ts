import type { Config } from '../config/index.ts';
import { systemClock, systemRandom } from '../kernel/index.ts';
import { KubeClient, reviewBearerToken } from '../kube/index.ts';
import { MetricsAuth } from '../observability/index.ts';
import type { AuthDecision, Logger, Metrics } from '../observability/index.ts';

/**
 * `/metrics` behind a TokenReview and a SubjectAccessReview for `get
 * /metrics` (kube-rbac-proxy's check), on a client of its own with a small
 * rate limit: whoever can reach the port can make the controller ask, and
 * those reviews must never queue the gate writes behind them. A scraper
 * whose token was allowed is answered from the cache before any bound, so a
 * flood of made-up tokens cannot lock it out (ADR 0037).
 */
export interface MetricsGuard {
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
    onAdmission: (lane, result) => metrics.peer.recordAdmission('metrics', lane, result),
  });
  return { authorize: (authorization) => auth.authorize(authorization), close: () => reviewClient.close() };
}

export function metricsAuthFor(client: KubeClient, config: Config, log: Logger, metrics: Metrics): MetricsGuard {
  if (config.metricsAuth === 'kubernetes') return metricsAuthVia(client, config, log, metrics);
  if (!/^(127\.|::1$|localhost$)/.test(config.metricsHost)) log.warn('/metrics is served without authentication on a non-loopback address', { metricsHost: config.metricsHost });
  return { authorize: undefined, close: () => Promise.resolve() };
}
