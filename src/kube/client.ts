import type { Dispatcher } from 'undici';
import type { Clock, Random } from '../kernel/index.ts';
import { AgentPool, CurrentUpgradeAgent } from './agents.ts';
import type { Credentials, KubeConnection } from './config.ts';
import { KubeApiError, codeForStatus, parseRetryAfter, statusCauses } from './errors.ts';
import { TokenBucket, backoffDelay } from './rate-limiter.ts';

export type PatchType = 'strategic' | 'merge' | 'json';
const patchContentType: Readonly<Record<PatchType, string>> = {
  strategic: 'application/strategic-merge-patch+json',
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
};

export interface RequestOptions {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  readonly path: string;
  readonly query?: Readonly<Record<string, string | number | boolean | undefined>> | undefined;
  readonly body?: unknown;
  readonly patch?: PatchType;
  readonly signal?: AbortSignal;
  /**
   * Retry retryable failures (429, 5xx, network) with backoff and jitter,
   * honouring Retry-After. @default true for GET, false otherwise (callers of
   * writes decide: a retried eviction must re-check its preconditions).
   */
  readonly retry?: boolean;
  /**
   * With `retry`: whether a 429 or 503 is retried here too. False hands it to
   * the caller at once (the gate-write queue backs off for all its writes,
   * ADR 0022). @default true
   */
  readonly retryThrottled?: boolean;
}

/** One finished API call, for metrics (verb, resource kind, HTTP status or 0). */
export interface RequestRecord {
  readonly verb: string;
  readonly resource: string;
  readonly status: number;
  readonly durationMs: number;
}

export interface KubeClientOptions {
  readonly connection: KubeConnection;
  readonly clock: Clock;
  readonly random: Random;
  /** Client-side rate limit shared by every call. @default 50 */
  readonly qps?: number;
  /** @default 100 */
  readonly burst?: number;
  /** Attempts for retried calls. @default 5 */
  readonly maxAttempts?: number;
  readonly onRequest?: (record: RequestRecord) => void;
  readonly userAgent?: string;
  /**
   * Speak HTTP/2 to the API server when it offers it (as client-go does):
   * every request of this client is a stream on a few shared connections.
   * false: HTTP/1.1, one connection per concurrent request, at most
   * `connections`. Watches always have an HTTP/1.1 connection each.
   * Off by default: with Node 24.21's http2, a replica stopping while many
   * requests were in flight was seen spinning in native code
   * (Http2Session::SendPendingData) and growing until the OOM killer ended it
   * (ADR 0020, revised 2026-11-28).
   * @default false
   */
  readonly http2?: boolean;
  /**
   * Connections for requests (not watches) to the API server at most. Over
   * HTTP/2 each carries up to `maxConcurrentStreams` requests before the
   * next is opened; over HTTP/1.1 requests beyond it wait for a free
   * connection. @default 4 with HTTP/2, 64 with HTTP/1.1
   */
  readonly connections?: number;
  /** HTTP/2 streams per connection (the server's SETTINGS may lower it). @default 250 */
  readonly maxConcurrentStreams?: number;
}

/** What a client derived with `withRateLimit` changes: its own token bucket (and user agent), same connections. */
export interface RateBudget {
  readonly qps: number;
  readonly burst?: number;
  readonly userAgent?: string;
}

/**
 * The only place that talks HTTP to the API server: JSON over one undici
 * Agent (HTTP/2 when the server offers it, a bounded pool of keep-alive
 * connections; watches on HTTP/1.1 connections of their own) carrying the
 * kubeconfig's TLS material, one token bucket for
 * every call, typed errors, retries for idempotent calls, and line-delimited
 * watch streams. `withRateLimit` derives a client with its own token bucket
 * on the same connections (Events have their own budget, as the kubelet's
 * --event-qps).
 */
export class KubeClient {
  readonly connection: KubeConnection;
  readonly #options: KubeClientOptions;
  /**
   * The Agents (shared with derived clients): requests over HTTP/2 when
   * offered; watches on HTTP/1.1 connections of their own, one each, made on
   * first use (over undici 8.12's HTTP/2 a watch stream that the consumer
   * paused could stay stalled for good while the session carried on, ADR
   * 0020; watches are few, so this stays bounded); exec upgrades on
   * HTTP/1.1. Rebuilt when the credentials bring new TLS material.
   */
  readonly #pool: AgentPool;
  /** Whether close() closes the Agents (false for a client derived with withRateLimit). */
  readonly #ownsAgent: boolean;
  #upgradeDispatcher: CurrentUpgradeAgent | undefined;
  readonly #limiter: TokenBucket;
  readonly #clock: Clock;
  readonly #random: Random;
  readonly #maxAttempts: number;
  readonly #onRequest: (record: RequestRecord) => void;
  readonly #userAgent: string;

  constructor(options: KubeClientOptions, shareConnectionsOf?: KubeClient) {
    const c = options.connection;
    this.#options = options;
    this.connection = c;
    this.#clock = options.clock;
    this.#random = options.random;
    this.#maxAttempts = options.maxAttempts ?? 5;
    this.#onRequest = options.onRequest ?? (() => undefined);
    this.#userAgent = options.userAgent ?? 'outprobe';
    this.#limiter = new TokenBucket({ clock: options.clock, qps: options.qps ?? 50, burst: options.burst ?? 100 });
    this.#ownsAgent = shareConnectionsOf === undefined;
    this.#pool = shareConnectionsOf === undefined ? new AgentPool(c, options) : shareConnectionsOf.#pool;
  }

  /** A client with its own token bucket (and user agent) on this client's connections; closing it leaves them open. */
  withRateLimit(budget: RateBudget): KubeClient {
    return new KubeClient({ ...this.#options, qps: budget.qps, burst: budget.burst ?? budget.qps * 2, userAgent: budget.userAgent ?? this.#userAgent }, this);
  }

  async close(): Promise<void> {
    if (!this.#ownsAgent) return;
    await this.#pool.close();
  }

  /**
   * HTTP/1.1 connections with this client's current TLS material, for the
   * exec WebSocket: an upgrade needs HTTP/1.1 (the API server does not offer
   * WebSockets over HTTP/2), so these never negotiate h2. Use with
   * `authHeaders()`, which also brings the TLS material up to date.
   */
  get dispatcher(): Dispatcher {
    this.#upgradeDispatcher ??= new CurrentUpgradeAgent(() => {
      const agent = this.#pool.currentUpgrade;
      if (agent === undefined) throw new Error('exec upgrade before authHeaders(): no credentials yet');
      return agent;
    });
    return this.#upgradeDispatcher;
  }

  /**
   * The authentication headers for a request made outside this client (the
   * exec WebSocket), from the current credentials; secret, never logged.
   */
  async authHeaders(): Promise<Readonly<Record<string, string>>> {
    const credentials = await this.connection.credentials();
    this.#pool.upgrade(credentials);
    return credentials.headers;
  }

  /** The bearer token of the current credentials, if they carry one (to present to a peer). */
  async bearerToken(): Promise<string | undefined> {
    const authorization = (await this.connection.credentials()).headers['authorization'];
    return authorization?.startsWith('Bearer ') === true ? authorization.slice('Bearer '.length) : undefined;
  }

  /** A JSON call; throws KubeApiError on failure. */
  async request<T = unknown>(options: RequestOptions): Promise<T> {
    const retry = options.retry ?? options.method === 'GET';
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.#once<T>(options);
      } catch (err: unknown) {
        if (!(err instanceof KubeApiError) || !err.retryable || !retry || attempt + 1 >= this.#maxAttempts || options.signal?.aborted === true) throw err;
        if (options.retryThrottled === false && (err.code === 'TooManyRequests' || err.code === 'Unavailable')) throw err;
        const delay = Math.max(err.retryAfterMs ?? 0, backoffDelay(attempt, this.#random, 200, 10_000));
        await this.#clock.sleepUntil(this.#clock.now() + delay, options.signal);
      }
    }
  }

  /**
   * Opens a streaming GET (a watch) and yields one parsed JSON object per
   * line. Ends when the server closes the stream; throws KubeApiError when
   * the request fails or the connection breaks.
   */
  async *stream(path: string, query: RequestOptions['query'], signal: AbortSignal): AsyncGenerator {
    await this.#limiter.acquire(signal);
    const started = this.#clock.now();
    const response = await this.#authenticated({ method: 'GET', path, query, signal }, 'watch');
    this.#record('WATCH', path, response.statusCode, started);
    if (response.statusCode >= 400) throw await toError(response);
    let pending = '';
    try {
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        pending += chunk.toString('utf8');
        let nl = pending.indexOf('\n');
        while (nl >= 0) {
          const line = pending.slice(0, nl).trim();
          pending = pending.slice(nl + 1);
          if (line !== '') yield JSON.parse(line) as unknown;
          nl = pending.indexOf('\n');
        }
      }
    } catch (err: unknown) {
      if (signal.aborted) return;
      throw new KubeApiError({ code: 'Network', status: 0, reason: 'StreamBroken', message: `watch ${path}: ${String(err)}`, cause: err });
    } finally {
      response.body.destroy();
    }
  }

  async #once<T>(options: RequestOptions): Promise<T> {
    await this.#limiter.acquire(options.signal);
    const started = this.#clock.now();
    let response: Dispatcher.ResponseData;
    try {
      response = await this.#authenticated(options, 'api');
    } catch (err: unknown) {
      this.#record(options.method, options.path, 0, started);
      if (options.signal?.aborted === true) throw err;
      throw new KubeApiError({ code: 'Network', status: 0, reason: 'NetworkError', message: `${options.method} ${options.path}: ${String(err)}`, cause: err });
    }
    this.#record(options.method, options.path, response.statusCode, started);
    if (response.statusCode >= 400) throw await toError(response);
    const text = await response.body.text();
    return (text === '' ? undefined : JSON.parse(text)) as T;
  }

  /**
   * `bodyTimeoutMs`: the longest silence while a response body is read. A
   * watch waits for ever (0); a JSON call gets the API server's own limit on
   * a non-long-running request (60 s), so a stalled stream cannot hold a
   * caller, a shutdown among them, for ever.
   */
  #dispatch(options: RequestOptions, credentials: Credentials, kind: 'api' | 'watch'): Promise<Dispatcher.ResponseData> {
    const agent = kind === 'api' ? this.#pool.api(credentials) : this.#pool.watch(credentials);
    const bodyTimeoutMs = kind === 'api' ? 60_000 : 0;
    const headers: Record<string, string> = { ...credentials.headers, accept: 'application/json', 'user-agent': this.#userAgent };
    let body: string | null = null;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] = options.patch === undefined ? 'application/json' : patchContentType[options.patch];
    }
    return agent.request({
      origin: this.connection.server,
      path: withQuery(options.path, options.query),
      method: options.method,
      headers,
      body,
      signal: options.signal ?? null,
      headersTimeout: 60_000,
      bodyTimeout: bodyTimeoutMs,
    });
  }

  /**
   * One request with the current credentials. A 401 is answered once more
   * with fresh credentials, as client-go does for exec plugins: a token that
   * expired (or was rotated) between the cache's check and the server's is
   * the usual cause, and an unauthenticated request changed nothing.
   */
  async #authenticated(options: RequestOptions, kind: 'api' | 'watch'): Promise<Dispatcher.ResponseData> {
    const response = await this.#dispatch(options, await this.connection.credentials(), kind);
    if (response.statusCode !== 401 || options.signal?.aborted === true) return response;
    await response.body.dump().catch(() => undefined);
    return this.#dispatch(options, await this.connection.credentials({ refresh: true }), kind);
  }

  #record(verb: string, path: string, status: number, started: number): void {
    this.#onRequest({ verb, resource: resourceOf(path), status, durationMs: this.#clock.now() - started });
  }
}

function withQuery(path: string, query: RequestOptions['query']): string {
  if (query === undefined) return path;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
  const qs = params.toString();
  return qs === '' ? path : `${path}?${qs}`;
}

/** `/api/v1/namespaces/x/pods/y/status` → `pods/status` (bounded label values for metrics). */
export function resourceOf(path: string): string {
  const parts = path.split('?')[0]?.split('/').filter((p) => p !== '') ?? [];
  if (parts[0] !== 'api' && parts[0] !== 'apis') return parts[0] ?? 'unknown';
  const start = parts[0] === 'api' ? 2 : 3;
  const rest = parts.slice(start);
  if (rest[0] === 'namespaces' && rest.length > 2) rest.splice(0, 2);
  const resource = rest[0] ?? 'unknown';
  return rest.length > 2 ? `${resource}/${rest[2] ?? ''}` : resource;
}

async function toError(response: Dispatcher.ResponseData): Promise<KubeApiError> {
  const text = await response.body.text().catch(() => '');
  let status: { reason?: string; message?: string; details?: unknown } = {};
  try {
    status = JSON.parse(text) as typeof status;
  } catch {
    // not a Status object
  }
  return new KubeApiError({
    code: codeForStatus(response.statusCode),
    status: response.statusCode,
    reason: status.reason ?? '',
    message: status.message ?? (text.slice(0, 500) || `HTTP ${response.statusCode}`),
    causes: statusCauses(status.details),
    priorityLevelUid: headerText(response.headers['x-kubernetes-pf-prioritylevel-uid']),
    flowSchemaUid: headerText(response.headers['x-kubernetes-pf-flowschema-uid']),
    ...(() => {
      const ms = parseRetryAfter(response.headers['retry-after']);
      return ms === undefined ? {} : { retryAfterMs: ms };
    })(),
  });
}

function headerText(value: string | string[] | undefined): string {
  return (Array.isArray(value) ? value[0] : value) ?? '';
}
