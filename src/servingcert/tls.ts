import type { SecureContextOptions, TlsOptions } from 'node:tls';
import type { ServingPair } from './pair.ts';

/** The oldest protocol a serving listener accepts: TLS 1.2 (the default) or 1.3. */
export type TlsMinVersion = 'TLSv1.2' | 'TLSv1.3';

/** The default oldest protocol. */
export const minTlsVersion: TlsMinVersion = 'TLSv1.2';

/** Flag values, spelt as Kubernetes components spell `--tls-min-version`, to node's names. */
export const tlsMinVersionFlag: Readonly<Record<'VersionTLS12' | 'VersionTLS13', TlsMinVersion>> = { VersionTLS12: 'TLSv1.2', VersionTLS13: 'TLSv1.3' };

/**
 * Cipher suites: the TLS 1.3 suites, and for TLS 1.2 only ECDHE key exchange with an
 * AEAD cipher (Mozilla's "intermediate" list): no CBC, no static RSA, no DHE. Every
 * scraper and kubelet of the last years offers these. The TLS 1.3 names must be
 * listed too: a list without any would turn TLS 1.3 off in node.
 */
export const servingCiphers = [
  'TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256',
  'ECDHE-ECDSA-AES128-GCM-SHA256', 'ECDHE-RSA-AES128-GCM-SHA256', 'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384', 'ECDHE-ECDSA-CHACHA20-POLY1305', 'ECDHE-RSA-CHACHA20-POLY1305',
].join(':');

/** A handshake not finished within this is dropped (node's default is 120 s). */
export const handshakeTimeoutMs = 10_000;

/** The secure context of a pair: what a listener serves, and what setSecureContext swaps in. */
export function secureContextOptions(pair: ServingPair, minVersion: TlsMinVersion = minTlsVersion): SecureContextOptions {
  return { cert: pair.cert, key: pair.key, minVersion, ciphers: servingCiphers, honorCipherOrder: true };
}

/** Options of an `https.createServer` serving `pair`: TLS 1.2 (or 1.3) at least, AEAD ciphers only, no client certificate asked. */
export function tlsServerOptions(pair: ServingPair, minVersion: TlsMinVersion = minTlsVersion): TlsOptions {
  return { ...secureContextOptions(pair, minVersion), handshakeTimeout: handshakeTimeoutMs };
}
