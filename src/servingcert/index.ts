/**
 * A TLS serving certificate read from files (a kubernetes.io/tls Secret
 * mounted as a volume) and reloaded when they change, without a restart
 * (ADR 0068): the metrics port's. The pure parts (checkPair, the reloader's
 * decisions) are apart from the file reads and the listener.
 */
export { checkPair, pairDigest } from './pair.ts';
export type { PairCheck, ServingPair } from './pair.ts';
export { CertReloader, defaultReloadIntervalMs } from './reloader.ts';
export type { CertReloaderOptions, ReloadEvent, ReloadStep } from './reloader.ts';
export { readPairFrom } from './files.ts';
export { handshakeTimeoutMs, minTlsVersion, secureContextOptions, servingCiphers, tlsMinVersionFlag, tlsServerOptions } from './tls.ts';
export type { TlsMinVersion } from './tls.ts';
export { loadServingCert, servingCertIf } from './serving.ts';
export type { CertSwappable, OptionalServingCert, ServingCert, ServingCertOptions } from './serving.ts';
