import { Counter, Gauge } from 'prom-client';
import type { Registry } from 'prom-client';

const prefix = 'outprobe_';

/** The outcome of one look at a serving certificate's files that changed something or failed. */
export type CertReloadResult = 'loaded' | 'rejected' | 'unreadable';

/** What one TLS listener's certificate reports (ADR 0068). */
export interface ListenerCertMetrics {
  /** The end of validity of the certificate now served, in ms since the epoch. */
  setNotAfter(notAfterMs: number): void;
  recordReload(result: CertReloadResult): void;
}

/**
 * Serving certificates read from files: when the one in service ends, and how
 * its reloads went, by listener (`metrics`). A certificate nobody renews shows
 * here before scrapes fail on it.
 */
export class CertMetrics {
  readonly #notAfter: Gauge<'listener'>;
  readonly #reloads: Counter<'listener' | 'result'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.#notAfter = new Gauge({
      name: `${prefix}serving_certificate_expiry_timestamp_seconds`,
      help: 'End of validity (Unix seconds) of the certificate a TLS listener serves now, by listener (metrics: --metrics-cert-dir).',
      labelNames: ['listener'],
      registers,
    });
    this.#reloads = new Counter({
      name: `${prefix}serving_certificate_reloads_total`,
      help: 'Changes of a TLS listener\'s certificate files, by listener and result (loaded: served from now on; rejected: key not the certificate\'s, or not PEM, the previous one kept; unreadable: the files could not be read, the previous one kept).',
      labelNames: ['listener', 'result'],
      registers,
    });
  }

  /** The metrics of one listener. */
  listener(listener: string): ListenerCertMetrics {
    return {
      setNotAfter: (ms) => this.#notAfter.set({ listener }, Math.floor(ms / 1000)),
      recordReload: (result) => this.#reloads.inc({ listener, result }),
    };
  }
}
