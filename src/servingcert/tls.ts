import type { SecureContextOptions, TlsOptions } from 'node:tls';
import type { ServingPair } from './pair.ts';

/** The oldest protocol a serving listener accepts. */
export const minTlsVersion = 'TLSv1.2';

/** A handshake not finished within this is dropped (node's default is 120 s). */
export const handshakeTimeoutMs = 10_000;

/** The secure context of a pair: what a listener serves, and what setSecureContext swaps in. */
export function secureContextOptions(pair: ServingPair): SecureContextOptions {
  return { cert: pair.cert, key: pair.key, minVersion: minTlsVersion };
}

/** Options of an `https.createServer` serving `pair`: TLS 1.2 at least, node's default ciphers, no client certificate asked. */
export function tlsServerOptions(pair: ServingPair): TlsOptions {
  return { ...secureContextOptions(pair), handshakeTimeout: handshakeTimeoutMs };
}
