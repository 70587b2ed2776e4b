import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';

/**
 * How to reach and authenticate to the API server. Client certificates and
 * bearer tokens are supported (kubeconfig data or files, and the in-cluster
 * service account); exec and auth-provider plugins are not.
 */
export interface KubeConnection {
  readonly server: string;
  readonly ca: Buffer | undefined;
  readonly cert: Buffer | undefined;
  readonly key: Buffer | undefined;
  /** Read on every request, so a rotated service-account token is picked up. */
  readonly token: (() => string | undefined) | undefined;
  readonly insecureSkipTlsVerify: boolean;
  /** Namespace of the current context, or of the in-cluster pod. */
  readonly namespace: string;
}

const serviceAccountDir = '/var/run/secrets/kubernetes.io/serviceaccount';

interface NamedCluster {
  readonly name?: string;
  readonly cluster?: {
    readonly server?: string;
    readonly 'certificate-authority'?: string;
    readonly 'certificate-authority-data'?: string;
    readonly 'insecure-skip-tls-verify'?: boolean;
  };
}
interface NamedUser {
  readonly name?: string;
  readonly user?: {
    readonly 'client-certificate'?: string;
    readonly 'client-certificate-data'?: string;
    readonly 'client-key'?: string;
    readonly 'client-key-data'?: string;
    readonly token?: string;
    readonly tokenFile?: string;
  };
}
interface NamedContext {
  readonly name?: string;
  readonly context?: { readonly cluster?: string; readonly user?: string; readonly namespace?: string };
}
interface KubeconfigFile {
  readonly clusters?: readonly NamedCluster[];
  readonly users?: readonly NamedUser[];
  readonly contexts?: readonly NamedContext[];
  readonly 'current-context'?: string;
}

function dataOrFile(data: string | undefined, file: string | undefined, base: string): Buffer | undefined {
  if (data !== undefined) return Buffer.from(data, 'base64');
  if (file !== undefined) return readFileSync(file.startsWith('/') ? file : join(base, file));
  return undefined;
}

/** Loads a kubeconfig file (its current context, or `context`). */
export function fromKubeconfig(path: string, context?: string): KubeConnection {
  const file = parse(readFileSync(path, 'utf8')) as KubeconfigFile;
  const base = join(path, '..');
  const ctxName = context ?? file['current-context'];
  const ctx = file.contexts?.find((c) => c.name === ctxName)?.context;
  if (ctx === undefined) throw new Error(`kubeconfig ${path}: context ${JSON.stringify(ctxName)} not found`);
  const cluster = file.clusters?.find((c) => c.name === ctx.cluster)?.cluster;
  if (cluster?.server === undefined) throw new Error(`kubeconfig ${path}: cluster ${JSON.stringify(ctx.cluster)} has no server`);
  const user = file.users?.find((u) => u.name === ctx.user)?.user ?? {};
  const { token, tokenFile } = user;
  return {
    server: cluster.server.replace(/\/$/, ''),
    ca: dataOrFile(cluster['certificate-authority-data'], cluster['certificate-authority'], base),
    cert: dataOrFile(user['client-certificate-data'], user['client-certificate'], base),
    key: dataOrFile(user['client-key-data'], user['client-key'], base),
    token: token !== undefined ? () => token : tokenFile !== undefined ? () => readFileSync(tokenFile, 'utf8').trim() : undefined,
    insecureSkipTlsVerify: cluster['insecure-skip-tls-verify'] === true,
    namespace: ctx.namespace ?? 'default',
  };
}

/** The in-cluster service account (KUBERNETES_SERVICE_HOST/PORT and the mounted token). */
export function inCluster(env: NodeJS.ProcessEnv = process.env): KubeConnection {
  const host = env['KUBERNETES_SERVICE_HOST'];
  const port = env['KUBERNETES_SERVICE_PORT'];
  if (host === undefined || port === undefined) throw new Error('not running in a cluster: KUBERNETES_SERVICE_HOST/PORT unset');
  return {
    server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
    ca: readFileSync(join(serviceAccountDir, 'ca.crt')),
    cert: undefined,
    key: undefined,
    token: () => readFileSync(join(serviceAccountDir, 'token'), 'utf8').trim(),
    insecureSkipTlsVerify: false,
    namespace: readFileSync(join(serviceAccountDir, 'namespace'), 'utf8').trim(),
  };
}

/** `--kubeconfig`, else $KUBECONFIG, else in-cluster, else ~/.kube/config. */
export function loadConnection(kubeconfig: string | undefined, env: NodeJS.ProcessEnv = process.env): KubeConnection {
  const path = kubeconfig ?? env['KUBECONFIG']?.split(':')[0];
  if (path !== undefined && path !== '') return fromKubeconfig(path);
  if (env['KUBERNETES_SERVICE_HOST'] !== undefined) return inCluster(env);
  return fromKubeconfig(join(homedir(), '.kube', 'config'));
}
