import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../kernel/index.ts';
import type { KeyPair } from './cert.ts';
import type { WebhookCertStore } from './cert-store.ts';
import type { RotationAction } from './rotation.ts';
import type { InjectionView } from './mutate.ts';
import { startWebhookServer } from './server.ts';
import type { WebhookReviewRecord, WebhookServer } from './server.ts';

/** Where the serving certificate comes from: our own Secret, or files mounted by cert-manager. */
export type CertSource =
  | { readonly kind: 'secret'; readonly store: WebhookCertStore }
  | { readonly kind: 'dir'; readonly dir: string };

/** What the webhook reports (the observability seam). */
export type WebhookEvent =
  | { readonly type: 'webhook-serving'; readonly port: number }
  | { readonly type: 'webhook-certs'; readonly action: RotationAction | 'loaded'; readonly lostRace: boolean; readonly caBundlePatched: number }
  | { readonly type: 'webhook-error'; readonly stage: 'certs' | 'ca-bundle' | 'listen'; readonly error: unknown }
  | ({ readonly type: 'webhook-review' } & WebhookReviewRecord);

export interface WebhookOptions {
  readonly host: string;
  readonly port: number;
  readonly view: InjectionView;
  readonly clock: Clock;
  readonly certs: CertSource;
  readonly observe: (event: WebhookEvent) => void;
  /** Certificates are read (and rotated when due) this often. @default 60000 */
  readonly refreshMs?: number;
  /** After a failure. @default 10000 */
  readonly retryMs?: number;
}

async function fromDir(dir: string): Promise<KeyPair> {
  const [cert, key] = await Promise.all([readFile(join(dir, 'tls.crt'), 'utf8'), readFile(join(dir, 'tls.key'), 'utf8')]);
  return { cert, key };
}

/**
 * The webhook's shell: loads (or creates and rotates) the certificate,
 * starts the listener once one exists, and swaps in a changed certificate
 * without a restart. Failures are logged and retried: with failurePolicy
 * Ignore, pods are still created while the webhook cannot serve.
 */
export class Webhook {
  readonly #o: WebhookOptions;
  #server: WebhookServer | undefined;
  #serving: KeyPair | undefined;

  constructor(options: WebhookOptions) {
    this.#o = options;
  }

  get port(): number | undefined {
    return this.#server?.port;
  }

  async #load(signal: AbortSignal): Promise<KeyPair> {
    const { certs } = this.#o;
    if (certs.kind === 'dir') {
      this.#o.observe({ type: 'webhook-certs', action: 'loaded', lostRace: false, caBundlePatched: 0 });
      return fromDir(certs.dir);
    }
    const r = await certs.store.step(signal);
    if (r.caBundleError !== undefined) this.#o.observe({ type: 'webhook-error', stage: 'ca-bundle', error: r.caBundleError });
    if (r.action !== 'keep' || r.lostRace || r.caBundlePatched > 0) {
      this.#o.observe({ type: 'webhook-certs', action: r.action, lostRace: r.lostRace, caBundlePatched: r.caBundlePatched });
    }
    return r.certs.serving;
  }

  /** One refresh: returns when to run again. */
  async step(signal: AbortSignal): Promise<number> {
    const { clock, observe } = this.#o;
    let pair: KeyPair;
    try {
      pair = await this.#load(signal);
    } catch (err: unknown) {
      observe({ type: 'webhook-error', stage: 'certs', error: err });
      return clock.now() + (this.#o.retryMs ?? 10_000);
    }
    if (this.#server === undefined) {
      try {
        this.#server = await startWebhookServer({ host: this.#o.host, port: this.#o.port, tls: pair, view: this.#o.view, clock, onReview: (r) => observe({ type: 'webhook-review', ...r }) });
        observe({ type: 'webhook-serving', port: this.#server.port });
      } catch (err: unknown) {
        observe({ type: 'webhook-error', stage: 'listen', error: err });
        return clock.now() + (this.#o.retryMs ?? 10_000);
      }
    } else if (this.#serving?.cert !== pair.cert || this.#serving.key !== pair.key) {
      this.#server.setCertificate(pair);
    }
    this.#serving = pair;
    return clock.now() + (this.#o.refreshMs ?? 60_000);
  }

  async run(signal: AbortSignal): Promise<void> {
    const { clock } = this.#o;
    for (let due = clock.now(); !signal.aborted; ) {
      await clock.sleepUntil(due, signal).catch(() => undefined);
      if (signal.aborted as boolean) break; // aborted while asleep
      due = await this.step(signal);
    }
    await this.close();
  }

  async close(): Promise<void> {
    const s = this.#server;
    this.#server = undefined;
    await s?.close();
  }
}
