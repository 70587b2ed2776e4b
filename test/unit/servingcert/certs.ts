import { issueCertificate } from '../../../src/injection/index.ts';
import type { ServingPair } from '../../../src/servingcert/index.ts';

const day = 24 * 3600 * 1000;

/** A CA and a serving certificate it signed for `names` (ECDSA P-256, as the webhook's). */
export function caAndServing(names: readonly string[] = ['outprobe-metrics.outprobe.svc', '127.0.0.1'], now = Date.now(), notAfter = now + 30 * day): { ca: ServingPair; serving: ServingPair } {
  const ca = issueCertificate({ commonName: `test metrics CA ${Math.random().toString(36).slice(2, 8)}`, notBefore: now - day, notAfter: now + 60 * day });
  const serving = issueCertificate({ commonName: names[0] ?? 'serving', names, notBefore: now - day, notAfter, issuer: ca });
  return { ca, serving };
}
