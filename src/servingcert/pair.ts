import { X509Certificate, createHash, createPrivateKey, createPublicKey } from 'node:crypto';

/** A PEM certificate (chain) and its PEM private key, as a kubernetes.io/tls Secret holds them. */
export interface ServingPair {
  readonly cert: string;
  readonly key: string;
}

/** What a pair read from disk is: servable (with what a log line needs), or why not. */
export type PairCheck =
  | { readonly ok: true; readonly fingerprint: string; readonly notAfter: number; readonly subject: string; readonly names: string }
  | { readonly ok: false; readonly reason: string };

/**
 * Whether `pair` can be served: the first certificate parses and the key is
 * its private key (a Secret half-written, or edited by hand, may pair them
 * wrongly). An expired certificate is still servable; the caller says so.
 * Pure: no I/O, no clock.
 */
export function checkPair(pair: ServingPair): PairCheck {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(pair.cert);
  } catch (err: unknown) {
    return { ok: false, reason: `tls.crt is not a PEM certificate (${err instanceof Error ? err.message : String(err)})` };
  }
  let fromKey: Buffer;
  try {
    fromKey = createPublicKey(createPrivateKey(pair.key)).export({ type: 'spki', format: 'der' });
  } catch (err: unknown) {
    return { ok: false, reason: `tls.key is not a PEM private key (${err instanceof Error ? err.message : String(err)})` };
  }
  if (!fromKey.equals(cert.publicKey.export({ type: 'spki', format: 'der' }))) {
    return { ok: false, reason: 'tls.key is not the private key of tls.crt' };
  }
  return { ok: true, fingerprint: cert.fingerprint256, notAfter: Date.parse(cert.validTo), subject: cert.subject, names: cert.subjectAltName ?? '' };
}

/** A digest of both files' bytes: a change to either is a change of the pair. */
export function pairDigest(pair: ServingPair): string {
  return createHash('sha256').update(pair.cert).update('\0').update(pair.key).digest('hex');
}
