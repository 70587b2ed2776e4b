import { Agent, Dispatcher, ProxyAgent } from 'undici';
import type { Credentials, KubeConnection } from './config.ts';

export interface PoolOptions {
  /** @see KubeClientOptions.http2 */
  readonly http2?: boolean | undefined;
  /** @see KubeClientOptions.connections */
  readonly connections?: number | undefined;
  /** @see KubeClientOptions.maxConcurrentStreams */
  readonly maxConcurrentStreams?: number | undefined;
}

interface AgentSet {
  readonly tlsId: string;
  readonly api: Dispatcher;
  watch: Dispatcher | undefined;
  upgrade: Dispatcher | undefined;
}

/**
 * The undici Agents of a client and the clients derived from it: requests
 * (HTTP/2 when offered), watches (HTTP/1.1, one connection each) and exec
 * upgrades (HTTP/1.1), all with the TLS material of the current credentials.
 * A connection's TLS material is fixed when it is opened, so when the
 * credentials bring new material (a rotated client certificate from an exec
 * plugin, a new CA file) the next request gets a new set of Agents and the
 * old set is closed gracefully: requests in flight finish, a watch on it ends
 * at its timeout (at most 10 minutes) or break and reopens on the new set.
 */
export class AgentPool {
  readonly #connection: KubeConnection;
  readonly #options: PoolOptions;
  #current: AgentSet | undefined;
  #closed = false;

  constructor(connection: KubeConnection, options: PoolOptions) {
    this.#connection = connection;
    this.#options = options;
  }

  /** The Agents for these credentials (new ones if their TLS material changed). */
  agentsFor(credentials: Credentials): AgentSet {
    if (this.#closed) throw new Error('the API client is closed');
    const current = this.#current;
    if (current !== undefined && current.tlsId === credentials.tlsId) return current;
    const next: AgentSet = { tlsId: credentials.tlsId, api: this.#agent(credentials, this.#options), watch: undefined, upgrade: undefined };
    this.#current = next;
    if (current !== undefined) void closeSet(current);
    return next;
  }

  api(credentials: Credentials): Dispatcher {
    return this.agentsFor(credentials).api;
  }

  watch(credentials: Credentials): Dispatcher {
    const set = this.agentsFor(credentials);
    set.watch ??= this.#agent(credentials, { http2: false, connections: 0 });
    return set.watch;
  }

  upgrade(credentials: Credentials): Dispatcher {
    const set = this.agentsFor(credentials);
    set.upgrade ??= this.#agent(credentials, { http2: false });
    return set.upgrade;
  }

  /** The exec upgrade Agent of the last credentials seen, if one was made. */
  get currentUpgrade(): Dispatcher | undefined {
    return this.#current?.upgrade;
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#current !== undefined) await closeSet(this.#current);
  }

  #agent(credentials: Credentials, options: PoolOptions): Dispatcher {
    const http2 = options.http2 ?? false;
    const tls = { ...credentials.tls, allowH2: http2 };
    const agentOptions = {
      allowH2: http2,
      // 0: unbounded (undici's null), for the watch Agent whose connections are bounded by the number of watches.
      connections: options.connections === 0 ? null : (options.connections ?? (http2 ? 4 : 64)),
      maxConcurrentStreams: options.maxConcurrentStreams ?? 250,
      // Idle connections stay 30 s (undici's default is 4 s), so a quiet spell does not cost a new TLS handshake.
      keepAliveTimeout: 30_000,
    };
    const proxy = this.#connection.proxyUrl;
    // The kubeconfig's proxy-url: an HTTP CONNECT tunnel (http/https proxy) or SOCKS5, as kubectl does.
    if (proxy !== undefined) return new ProxyAgent({ ...agentOptions, uri: proxy, requestTls: tls });
    return new Agent({ ...agentOptions, connect: tls });
  }
}

async function closeSet(set: AgentSet): Promise<void> {
  await Promise.all([set.api.close(), set.watch?.close(), set.upgrade?.close()]);
}

/**
 * A Dispatcher that always forwards to the pool's current upgrade Agent, for
 * code that keeps a Dispatcher (the exec prober): after a change of TLS
 * material its next connection uses the new one.
 */
export class CurrentUpgradeAgent extends Dispatcher {
  readonly #current: () => Dispatcher;

  constructor(current: () => Dispatcher) {
    super();
    this.#current = current;
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    return this.#current().dispatch(options, handler);
  }

  // The pool owns the Agents and closes them.
  override close(): Promise<void> {
    return Promise.resolve();
  }

  override destroy(): Promise<void> {
    return Promise.resolve();
  }
}
