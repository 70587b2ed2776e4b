import type { Clock } from '../kernel/index.ts';
import { checkPair, pairDigest } from './pair.ts';
import type { ServingPair } from './pair.ts';

/** What the reloader reports (the observability seam). */
export type ReloadEvent =
  | { readonly type: 'cert-loaded'; readonly fingerprint: string; readonly notAfter: number; readonly subject: string; readonly names: string; readonly expired: boolean }
  | { readonly type: 'cert-rejected'; readonly reason: string }
  | { readonly type: 'cert-unreadable'; readonly error: unknown };

/** The outcome of one look at the files. */
export type ReloadStep = 'unchanged' | 'loaded' | 'rejected' | 'unreadable';

export interface CertReloaderOptions {
  /** Reads the pair (from the files). */
  readonly read: () => Promise<ServingPair>;
  /** Serves a new pair to new connections (the listener's setSecureContext). */
  readonly apply: (pair: ServingPair) => void;
  readonly clock: Clock;
  /** The pair being served when the reloader starts (loaded at startup). */
  readonly serving: ServingPair;
  readonly observe?: (event: ReloadEvent) => void;
  /** How often the files are read. @default 10000 */
  readonly intervalMs?: number;
}

/** The files are read this often: a Secret volume's update is seen within this after the kubelet writes it. */
export const defaultReloadIntervalMs = 10_000;

/**
 * Serves a certificate pair that may change on disk (a Secret volume the
 * kubelet updates, cert-manager renewing) without a restart: the files are
 * read every `intervalMs`, and a pair whose bytes changed is served to new
 * connections once it checks out (parses, key matches). A pair that does not
 * (half written, wrongly paired) or files that cannot be read leave the
 * current pair in service; the reason is reported once per distinct reason,
 * not every interval. Polling rather than inotify: the kubelet swaps a
 * `..data` symlink, which file watches on `tls.crt` miss.
 */
export class CertReloader {
  readonly #o: CertReloaderOptions;
  #served: string;
  #seenBad: string | undefined;

  constructor(options: CertReloaderOptions) {
    this.#o = options;
    this.#served = pairDigest(options.serving);
  }

  /** One look at the files. */
  async step(): Promise<ReloadStep> {
    let pair: ServingPair;
    try {
      pair = await this.#o.read();
    } catch (err: unknown) {
      const key = `unreadable:${err instanceof Error ? err.message : String(err)}`;
      if (this.#seenBad !== key) this.#o.observe?.({ type: 'cert-unreadable', error: err });
      this.#seenBad = key;
      return 'unreadable';
    }
    const digest = pairDigest(pair);
    if (digest === this.#served) {
      this.#seenBad = undefined;
      return 'unchanged';
    }
    const check = checkPair(pair);
    if (!check.ok) {
      const key = `rejected:${digest}`;
      if (this.#seenBad !== key) this.#o.observe?.({ type: 'cert-rejected', reason: check.reason });
      this.#seenBad = key;
      return 'rejected';
    }
    try {
      this.#o.apply(pair);
    } catch (err: unknown) {
      // TLS refused what checkPair let through (a key too weak for the security level, say)
      const key = `rejected:${digest}`;
      if (this.#seenBad !== key) this.#o.observe?.({ type: 'cert-rejected', reason: `not accepted by TLS: ${err instanceof Error ? err.message : String(err)}` });
      this.#seenBad = key;
      return 'rejected';
    }
    this.#served = digest;
    this.#seenBad = undefined;
    const { fingerprint, notAfter, subject, names } = check;
    this.#o.observe?.({ type: 'cert-loaded', fingerprint, notAfter, subject, names, expired: notAfter <= this.#o.clock.now() });
    return 'loaded';
  }

  /** Looks every interval until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const { clock } = this.#o;
    const every = this.#o.intervalMs ?? defaultReloadIntervalMs;
    while (!signal.aborted) {
      const slept = await clock.sleepUntil(clock.now() + every, signal).then(() => true, () => false);
      if (!slept) break;
      await this.step();
    }
  }
}
