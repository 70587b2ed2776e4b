import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import type { Cluster, Context, User } from '@kubernetes/client-node';
import { withTokenFiles } from './token-file.ts';

/**
 * How to reach and authenticate to the API server. Everything about the
 * kubeconfig (files, merging, contexts, the in-cluster service account, every
 * credential type: client certificates, tokens, token files, exec plugins,
 * OIDC and the other auth-providers) is client-node's `KubeConfig`; this
 * module only picks the source and asks it for the material of each request.
 */
export interface KubeConnection {
  readonly server: string;
  /** Namespace of the current context, or of the in-cluster pod. */
  readonly namespace: string;
  /** `proxy-url` of the cluster (http, https or socks5), if any. */
  readonly proxyUrl: string | undefined;
  /**
   * The TLS material and headers for the next request. Asked before every
   * request: client-node caches and refreshes behind it (an exec credential
   * until its expirationTimestamp, a token file every minute, an OIDC token
   * when its id-token expires). Concurrent callers share one answer.
   */
  credentials(options?: { readonly refresh?: boolean }): Promise<Credentials>;
}

export interface TlsMaterial {
  readonly ca?: string | Buffer;
  readonly cert?: string | Buffer;
  readonly key?: string | Buffer;
  readonly servername?: string;
  readonly rejectUnauthorized: boolean;
}

export interface Credentials {
  readonly tls: TlsMaterial;
  /** A digest of `tls` (never the material itself): a new value needs new connections. */
  readonly tlsId: string;
  /** Authorization (and Impersonate-User) headers; secret, never logged. */
  readonly headers: Readonly<Record<string, string>>;
}

export const serviceAccountDir = '/var/run/secrets/kubernetes.io/serviceaccount';

export interface LoadOptions {
  /** `--kubeconfig`: this one file. */
  readonly kubeconfig?: string | undefined;
  /** `--context`: instead of the current context. */
  readonly context?: string | undefined;
  /** Prefix of the service-account directory (tests mount one elsewhere). @default '' */
  readonly inClusterRoot?: string;
}

/**
 * `--kubeconfig`, else every file of $KUBECONFIG merged as kubectl does, else
 * the in-cluster service account, else ~/.kube/config; then `--context`.
 */
export function loadKubeConfig(options: LoadOptions, env: NodeJS.ProcessEnv = process.env): KubeConfig {
  const kc = new KubeConfig();
  const root = options.inClusterRoot ?? '';
  const fromEnv = (env['KUBECONFIG'] ?? '').split(delimiter).filter((f) => f !== '');
  if (options.kubeconfig !== undefined) loadFile(kc, options.kubeconfig);
  else if (fromEnv.length > 0) mergeFiles(kc, fromEnv);
  else if (env['KUBERNETES_SERVICE_HOST'] !== undefined && existsSync(`${root}${serviceAccountDir}/token`)) withEnv(env, () => kc.loadFromCluster(root));
  else loadFile(kc, join(homedir(), '.kube', 'config'));
  if (options.context !== undefined) {
    if (kc.getContextObject(options.context) === null) throw new Error(`kubeconfig: context ${JSON.stringify(options.context)} not found`);
    kc.setCurrentContext(options.context);
  }
  return kc;
}

/**
 * kubectl's merge of $KUBECONFIG: files that do not exist are skipped; the
 * first file to define a cluster, user or context of a name wins, and so does
 * the first current-context. (client-node's own merge throws on a duplicate
 * name and lets the last current-context win.) Each file is read by
 * client-node, so its relative paths resolve against its own directory.
 */
function mergeFiles(kc: KubeConfig, files: readonly string[]): void {
  const present = files.filter((f) => existsSync(f));
  if (present.length === 0) throw new Error(`KUBECONFIG: none of ${files.join(', ')} exists`);
  const clusters = new Map<string, Cluster>();
  const users = new Map<string, User>();
  const contexts = new Map<string, Context>();
  let current: string | undefined;
  for (const file of present) {
    const one = new KubeConfig();
    loadFile(one, file);
    for (const c of one.getClusters()) if (!clusters.has(c.name)) clusters.set(c.name, c);
    for (const u of one.getUsers()) if (!users.has(u.name)) users.set(u.name, u);
    for (const c of one.getContexts()) if (!contexts.has(c.name)) contexts.set(c.name, c);
    const cc = one.getCurrentContext() as string | undefined;
    if (current === undefined && cc !== undefined && cc !== '') current = cc;
  }
  kc.loadFromOptions({ clusters: [...clusters.values()], users: [...users.values()], contexts: [...contexts.values()], currentContext: current });
}

function loadFile(kc: KubeConfig, file: string): void {
  kc.loadFromFile(file);
  withTokenFiles(kc, file);
}

/** The current context and its cluster, checked: what the transport cannot honour is a startup error, never ignored. */
function currentTarget(kc: KubeConfig): { context: Context; cluster: Cluster; proxyUrl: string | undefined } {
  const contextName = kc.getCurrentContext() as string | undefined;
  const context = contextName === undefined ? null : kc.getContextObject(contextName);
  if (context === null) throw new Error(`kubeconfig: current context ${JSON.stringify(contextName)} not found`);
  const cluster = kc.getCurrentCluster();
  if (cluster === null || cluster.server === '') throw new Error(`kubeconfig: context ${JSON.stringify(context.name)} names no cluster with a server`);
  if (cluster.server.startsWith('http:') && !cluster.skipTLSVerify) {
    // client-node refuses plain HTTP to the API server unless the kubeconfig opts out of TLS verification.
    throw new Error(`kubeconfig: cluster ${JSON.stringify(cluster.name)} has an http:// server; that needs insecure-skip-tls-verify: true`);
  }
  const proxyUrl = cluster.proxyUrl === '' ? undefined : cluster.proxyUrl;
  if (proxyUrl !== undefined && !/^(https?|socks5h?):\/\//.test(proxyUrl)) {
    throw new Error(`kubeconfig: proxy-url ${JSON.stringify(proxyUrl)} is not supported (http, https and socks5 proxies are)`);
  }
  if (kc.getCurrentUser() === null && (context.user as string | undefined ?? '') !== '') {
    throw new Error(`kubeconfig: context ${JSON.stringify(context.name)} names user ${JSON.stringify(context.user)}, which is not defined`);
  }
  return { context, cluster, proxyUrl };
}

/** A connection on a loaded KubeConfig (its current context). */
export function connectionOf(kc: KubeConfig): KubeConnection {
  const { context, cluster, proxyUrl } = currentTarget(kc);
  let inFlight: Promise<Credentials> | undefined;
  const ask = (): Promise<Credentials> => {
    inFlight ??= credentialsOf(kc).finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  };
  return {
    server: cluster.server.replace(/\/$/, ''),
    namespace: context.namespace?.trim() || 'default',
    proxyUrl,
    credentials: async (options) => {
      // A refresh starts after any call in flight, so it sees what a failed request had not.
      if (options?.refresh === true && inFlight !== undefined) await inFlight.catch(() => undefined);
      return ask();
    },
  };
}

interface HttpsOptions {
  ca?: string | Buffer;
  cert?: string | Buffer;
  key?: string | Buffer;
  servername?: string;
  rejectUnauthorized?: boolean;
  auth?: string;
  headers?: Record<string, string | number | string[]>;
}

async function credentialsOf(kc: KubeConfig): Promise<Credentials> {
  const opts: HttpsOptions = {};
  // client-node's own hook for a request: CA, client certificate and key, tls-server-name,
  // insecure-skip-tls-verify, and the headers of whichever authenticator the user needs.
  await kc.applyToHTTPSOptions(opts);
  const headers: Record<string, string> = {};
  // Trimmed: client-node's token-file reader keeps a file's trailing newline, which no header may carry.
  for (const [k, v] of Object.entries(opts.headers ?? {})) headers[k.toLowerCase()] = (Array.isArray(v) ? v.join(', ') : String(v)).trim();
  if (opts.auth !== undefined && headers['authorization'] === undefined) headers['authorization'] = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
  const tls: TlsMaterial = {
    ...(opts.ca === undefined ? {} : { ca: opts.ca }),
    ...(opts.cert === undefined ? {} : { cert: opts.cert }),
    ...(opts.key === undefined ? {} : { key: opts.key }),
    ...(opts.servername === undefined ? {} : { servername: opts.servername }),
    rejectUnauthorized: opts.rejectUnauthorized !== false,
  };
  const digest = createHash('sha256');
  for (const part of [tls.ca, tls.cert, tls.key, tls.servername, String(tls.rejectUnauthorized)]) digest.update(part ?? '').update('\0');
  return { tls, tlsId: digest.digest('hex'), headers };
}

/** `--kubeconfig`/$KUBECONFIG/in-cluster/~/.kube/config and `--context`, as a connection. */
export function loadConnection(options: LoadOptions | string | undefined, env: NodeJS.ProcessEnv = process.env): KubeConnection {
  const o = typeof options === 'string' || options === undefined ? { kubeconfig: options } : options;
  return connectionOf(loadKubeConfig(o, env));
}

/** One kubeconfig file (its current context, or `context`). */
export function fromKubeconfig(path: string, context?: string): KubeConnection {
  return loadConnection({ kubeconfig: path, context }, {});
}

/** The in-cluster service account (KUBERNETES_SERVICE_HOST/PORT and the mounted token, re-read every minute). */
export function inCluster(env: NodeJS.ProcessEnv = process.env, root = ''): KubeConnection {
  if (env['KUBERNETES_SERVICE_HOST'] === undefined || env['KUBERNETES_SERVICE_PORT'] === undefined) throw new Error('not running in a cluster: KUBERNETES_SERVICE_HOST/PORT unset');
  const kc = new KubeConfig();
  withEnv(env, () => kc.loadFromCluster(root));
  return connectionOf(kc);
}

/** client-node reads the service host and port from process.env. */
function withEnv(env: NodeJS.ProcessEnv, fn: () => void): void {
  if (env === process.env) {
    fn();
    return;
  }
  const names = ['KUBERNETES_SERVICE_HOST', 'KUBERNETES_SERVICE_PORT'] as const;
  const saved = names.map((n) => process.env[n]);
  const set = (name: string, value: string | undefined): void => {
    if (value === undefined) Reflect.deleteProperty(process.env, name);
    else process.env[name] = value;
  };
  for (const n of names) set(n, env[n]);
  try {
    fn();
  } finally {
    names.forEach((n, i) => set(n, saved[i]));
  }
}

/** The parts of a connection made in code (a test's fake server, a token of its own). */
export interface ConnectionParts {
  readonly server: string;
  readonly namespace?: string;
  /** PEM, as in a kubeconfig's `certificate-authority-data` once decoded. */
  readonly caPem?: string;
  readonly token?: string;
  /** @default true for an http:// server (nothing to verify), else false */
  readonly insecureSkipTlsVerify?: boolean;
}

/** A connection from parts, through client-node's KubeConfig like every other. */
export function connectionFor(parts: ConnectionParts): KubeConnection {
  const kc = new KubeConfig();
  const b64 = (s: string | undefined): string | undefined => (s === undefined ? undefined : Buffer.from(s).toString('base64'));
  kc.loadFromOptions({
    clusters: [{ name: 'cluster', server: parts.server, caData: b64(parts.caPem), skipTLSVerify: parts.insecureSkipTlsVerify ?? parts.server.startsWith('http:') }],
    users: [{ name: 'user', token: parts.token }],
    contexts: [{ name: 'context', cluster: 'cluster', user: 'user', namespace: parts.namespace }],
    currentContext: 'context',
  });
  return connectionOf(kc);
}
