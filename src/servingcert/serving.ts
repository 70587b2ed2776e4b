import type { Clock } from '../kernel/index.ts';
import type { ListenerCertMetrics, Logger } from '../observability/index.ts';
import { readPairFrom } from './files.ts';
import { checkPair } from './pair.ts';
import type { ServingPair } from './pair.ts';
import { CertReloader } from './reloader.ts';
import type { ReloadEvent } from './reloader.ts';

/** A listener whose certificate can be swapped (the metrics server with TLS). */
export interface CertSwappable {
  setCertificate(pair: ServingPair): void;
}

/** A certificate directory loaded once and watched afterwards, or none (plain HTTP). */
export interface OptionalServingCert {
  /** The pair to start the listener with; undefined: serve plain HTTP. */
  readonly pair: ServingPair | undefined;
  run(listener: CertSwappable, signal: AbortSignal): Promise<void>;
}

/** `loadServingCert` when a directory is configured; otherwise nothing to serve or watch. */
export async function servingCertIf(o: Omit<ServingCertOptions, 'dir'> & { readonly dir: string | undefined }): Promise<OptionalServingCert> {
  if (o.dir === undefined) return { pair: undefined, run: () => Promise.resolve() };
  return loadServingCert({ ...o, dir: o.dir });
}

/** A certificate directory loaded once and watched afterwards. */
export interface ServingCert {
  /** The pair to start the listener with. */
  readonly pair: ServingPair;
  /** Serves changed files to `listener` until `signal` aborts. */
  run(listener: CertSwappable, signal: AbortSignal): Promise<void>;
}

export interface ServingCertOptions {
  /** Holds `tls.crt` and `tls.key`. */
  readonly dir: string;
  /** What the certificate is for, in log lines and errors (e.g. `--metrics-cert-dir`). */
  readonly what: string;
  readonly clock: Clock;
  readonly log: Logger;
  /** The certificate's end, and its reloads. @default none */
  readonly metrics?: ListenerCertMetrics;
  /** @default 10000 */
  readonly intervalMs?: number;
}

/**
 * Loads `tls.crt`/`tls.key` from `dir`, refusing to start without a servable
 * pair (serving in clear text instead would send scrapers' tokens in the
 * clear), then reloads them as they change on disk (CertReloader).
 */
export async function loadServingCert(o: ServingCertOptions): Promise<ServingCert> {
  let pair: ServingPair;
  try {
    pair = await readPairFrom(o.dir);
  } catch (err: unknown) {
    throw new Error(`${o.what} ${o.dir}: cannot read tls.crt and tls.key: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  const check = checkPair(pair);
  if (!check.ok) throw new Error(`${o.what} ${o.dir}: ${check.reason}`);
  o.log.info('serving certificate loaded', { for: o.what, fingerprint: check.fingerprint, notAfter: new Date(check.notAfter).toISOString(), names: check.names });
  o.metrics?.setNotAfter(check.notAfter);
  if (check.notAfter <= o.clock.now()) o.log.warn('serving certificate expired', { for: o.what, notAfter: new Date(check.notAfter).toISOString() });
  const logReload = reloadLogger(o.what, o.log);
  return {
    pair,
    run: (listener, signal) => new CertReloader({
      read: () => readPairFrom(o.dir),
      apply: (p) => listener.setCertificate(p),
      clock: o.clock,
      serving: pair,
      observe: (e) => {
        logReload(e);
        reloadMetrics(o.metrics, e);
      },
      ...(o.intervalMs === undefined ? {} : { intervalMs: o.intervalMs }),
    }).run(signal),
  };
}

function reloadLogger(what: string, log: Logger): (e: ReloadEvent) => void {
  return (e) => {
    if (e.type === 'cert-loaded') {
      const fields = { for: what, fingerprint: e.fingerprint, notAfter: new Date(e.notAfter).toISOString(), names: e.names };
      if (e.expired) log.warn('serving certificate reloaded, and it has expired', fields);
      else log.info('serving certificate reloaded', fields);
    } else if (e.type === 'cert-rejected') {
      log.warn('serving certificate changed on disk but cannot be served; the previous one stays in service', { for: what, reason: e.reason });
    } else {
      log.warn('serving certificate files cannot be read; the previous certificate stays in service', { for: what, error: String(e.error) });
    }
  };
}

function reloadMetrics(metrics: ListenerCertMetrics | undefined, e: ReloadEvent): void {
  if (metrics === undefined) return;
  if (e.type === 'cert-loaded') {
    metrics.setNotAfter(e.notAfter);
    metrics.recordReload('loaded');
  } else {
    metrics.recordReload(e.type === 'cert-rejected' ? 'rejected' : 'unreadable');
  }
}
