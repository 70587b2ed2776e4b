import type { Clock } from '../kernel/index.ts';
import { isKubeError } from '../kube/index.ts';
import type { KubeClient } from '../kube/index.ts';
import { applyRotation, rotationAction } from './rotation.ts';
import type { RotationAction, RotationOptions, WebhookCerts } from './rotation.ts';

export interface CertStoreOptions {
  readonly client: KubeClient;
  readonly clock: Clock;
  /** The Secret holding the certificates (created if missing). */
  readonly namespace: string;
  readonly secretName: string;
  /** MutatingWebhookConfiguration whose webhooks get `caBundle`; undefined: none is patched. */
  readonly webhookConfiguration: string | undefined;
  readonly rotation: RotationOptions;
}

/** What one step did, for the log. */
export interface CertStepReport {
  readonly certs: WebhookCerts;
  readonly action: RotationAction;
  /** Another replica wrote the Secret first; its certificates were loaded instead. */
  readonly lostRace: boolean;
  readonly caBundlePatched: number;
  /** Patching caBundle failed (the certificates are still good to serve); retried next step. */
  readonly caBundleError?: unknown;
}

interface SecretObject {
  readonly metadata?: { readonly resourceVersion?: string };
  readonly data?: Readonly<Record<string, string>>;
}

const decode = (data: Readonly<Record<string, string>> | undefined, key: string): string | undefined => {
  const v = data !== undefined && Object.hasOwn(data, key) ? data[key] : undefined;
  return v === undefined ? undefined : Buffer.from(v, 'base64').toString('utf8');
};

function certsOf(secret: SecretObject | undefined): WebhookCerts | undefined {
  const bundle = decode(secret?.data, 'ca.crt');
  const caKey = decode(secret?.data, 'ca.key');
  const cert = decode(secret?.data, 'tls.crt');
  const key = decode(secret?.data, 'tls.key');
  if (bundle === undefined || caKey === undefined || cert === undefined || key === undefined) return undefined;
  const first = /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----\n?/.exec(bundle)?.[0];
  if (first === undefined) return undefined;
  return { caBundle: bundle, ca: { cert: first, key: caKey }, serving: { cert, key } };
}

function secretBody(o: CertStoreOptions, c: WebhookCerts, resourceVersion?: string): unknown {
  const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/tls',
    metadata: { name: o.secretName, namespace: o.namespace, labels: { 'app.kubernetes.io/managed-by': 'outprobe' }, ...(resourceVersion === undefined ? {} : { resourceVersion }) },
    data: { 'ca.crt': b64(c.caBundle), 'ca.key': b64(c.ca.key), 'tls.crt': b64(c.serving.cert), 'tls.key': b64(c.serving.key) },
  };
}

/**
 * The webhook's serving certificate, kept in a Secret that every replica
 * loads (ADR 0021). Any replica may create or rotate it: a create that finds
 * the Secret already there (409), or an update that lost to another
 * replica's (409 on resourceVersion), loads what the winner wrote instead.
 * Then `caBundle` is patched into the webhook configuration when it differs.
 */
export class WebhookCertStore {
  readonly #o: CertStoreOptions;

  constructor(options: CertStoreOptions) {
    this.#o = options;
  }

  get #path(): string {
    return `/api/v1/namespaces/${this.#o.namespace}/secrets`;
  }

  async #read(signal: AbortSignal): Promise<SecretObject | undefined> {
    try {
      return await this.#o.client.request<SecretObject>({ method: 'GET', path: `${this.#path}/${this.#o.secretName}`, signal });
    } catch (err: unknown) {
      if (isKubeError(err, 'NotFound')) return undefined;
      throw err;
    }
  }

  /** Reads the Secret, rotates when due, writes it back, patches caBundle. */
  async step(signal: AbortSignal): Promise<CertStepReport> {
    const now = this.#o.clock.now();
    const secret = await this.#read(signal);
    const stored = certsOf(secret);
    const action = rotationAction(stored, now, this.#o.rotation);
    let certs = applyRotation(action, stored, now, this.#o.rotation) ?? applyRotation('create', undefined, now, this.#o.rotation);
    if (certs === undefined) throw new Error('no webhook certificates after rotation');
    let lostRace = false;
    if (action !== 'keep') {
      try {
        if (secret === undefined) await this.#o.client.request({ method: 'POST', path: this.#path, body: secretBody(this.#o, certs), signal });
        else await this.#o.client.request({ method: 'PUT', path: `${this.#path}/${this.#o.secretName}`, body: secretBody(this.#o, certs, secret.metadata?.resourceVersion), signal });
      } catch (err: unknown) {
        if (!isKubeError(err, 'Conflict')) throw err;
        const winner = certsOf(await this.#read(signal));
        if (winner === undefined) throw err;
        certs = winner;
        lostRace = true;
      }
    }
    try {
      return { certs, action, lostRace, caBundlePatched: await this.#patchCaBundle(certs.caBundle, signal) };
    } catch (err: unknown) {
      return { certs, action, lostRace, caBundlePatched: 0, caBundleError: err };
    }
  }

  /** Sets caBundle on every webhook of the configuration whose bundle differs; returns how many. */
  async #patchCaBundle(bundle: string, signal: AbortSignal): Promise<number> {
    const name = this.#o.webhookConfiguration;
    if (name === undefined) return 0;
    const path = `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${name}`;
    const config = await this.#o.client.request<{ webhooks?: readonly { name?: string; clientConfig?: { caBundle?: string } }[] }>({ method: 'GET', path, signal });
    const want = Buffer.from(bundle, 'utf8').toString('base64');
    const stale = (config.webhooks ?? []).filter((w) => w.name !== undefined && w.clientConfig?.caBundle !== want);
    if (stale.length === 0) return 0;
    // Strategic merge: webhooks merge by name, so only caBundle of each changes.
    const body = { webhooks: stale.map((w) => ({ name: w.name, clientConfig: { caBundle: want } })) };
    await this.#o.client.request({ method: 'PATCH', path, patch: 'strategic', body, signal });
    return stale.length;
  }
}
