import { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { ipBytes, issueCertificate, keyMatches } from './cert.ts';
import type { KeyPair } from './cert.ts';

/** What the webhook Secret holds (its data keys: ca.crt, ca.key, tls.crt, tls.key). */
export interface WebhookCerts {
  /** PEM bundle the API server trusts (caBundle): the current CA first, then older still-valid ones. */
  readonly caBundle: string;
  /** The current CA. */
  readonly ca: KeyPair;
  /** The serving certificate and key. */
  readonly serving: KeyPair;
}

export interface RotationOptions {
  readonly serviceName: string;
  /** Names the serving certificate must carry: `<service>.<namespace>.svc` and friends (IPs allowed). */
  readonly names: readonly string[];
  /** @default 10 years */
  readonly caValidityMs?: number;
  /** @default 1 year */
  readonly servingValidityMs?: number;
  /**
   * After a new CA is added to the bundle, the serving certificate stays on
   * the old CA this long, so every API server has the new caBundle before a
   * certificate it signed is served. @default 10 minutes
   */
  readonly propagationMs?: number;
  /** Certificates are valid from this long before they are issued, for clocks a little behind ours. @default 5 minutes */
  readonly backdateMs?: number;
}

export type RotationAction = 'keep' | 'create' | 'rotate-ca' | 'renew-serving';

const day = 86_400_000;
const backdate = (o: RotationOptions): number => o.backdateMs ?? 5 * 60_000;

function parse(pem: string): X509Certificate | undefined {
  try {
    return new X509Certificate(pem);
  } catch {
    return undefined;
  }
}

function splitBundle(bundle: string): X509Certificate[] {
  return (bundle.match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g) ?? []).flatMap((p) => parse(p) ?? []);
}

/** A name compared by what it means: an IP by its bytes (every spelling of an IPv6 address alike), a DNS name case-insensitively. */
function canonicalName(n: string): string {
  if (isIP(n) === 0) return `DNS:${n.toLowerCase()}`;
  try {
    return `IP:${ipBytes(n).toString('hex')}`;
  } catch {
    return `?:${n}`;
  }
}

/** The serving certificate carries exactly these names (Node prints IPv6 SANs expanded, in capitals). */
const sameNames = (cert: X509Certificate, names: readonly string[]): boolean => {
  const have = [...new Set((cert.subjectAltName ?? '').split(', ').filter((n) => n !== '').map((n) => canonicalName(n.replace(/^(DNS|IP Address):/, ''))))].sort();
  const want = [...new Set(names.map(canonicalName))].sort();
  return have.length === want.length && have.every((n, i) => n === want[i]);
};

/** Renew when less than a third of the validity is left (cert-manager's default). */
const dueForRenewal = (cert: X509Certificate, now: number): boolean => {
  const from = Date.parse(cert.validFrom);
  const to = Date.parse(cert.validTo);
  return to - now < (to - from) / 3;
};

/** Not trusted by a valid CA of the bundle, expired or nearly, or without one of the names. */
function servingUnusable(stored: WebhookCerts, serving: X509Certificate, now: number, names: readonly string[]): boolean {
  const trusted = splitBundle(stored.caBundle).some((c) => Date.parse(c.validTo) > now && serving.verify(c.publicKey));
  return !trusted || Date.parse(serving.validTo) <= now || dueForRenewal(serving, now) || !sameNames(serving, names);
}

/**
 * What to do with the stored certificates at `now` (pure but for parsing):
 * create them when missing or unusable; add a new CA to the bundle when the
 * current one is a third from expiry; re-issue the serving certificate when
 * it nears expiry, lacks a name, or (once the new CA had time to reach every
 * API server) is still signed by an older CA.
 */
export function rotationAction(stored: WebhookCerts | undefined, now: number, o: RotationOptions): RotationAction {
  if (stored === undefined || !keyMatches(stored.ca) || !keyMatches(stored.serving)) return 'create';
  const ca = parse(stored.ca.cert);
  const serving = parse(stored.serving.cert);
  if (ca?.ca !== true || serving === undefined || Date.parse(ca.validTo) <= now) return 'create';
  if (dueForRenewal(ca, now)) return 'rotate-ca';
  if (servingUnusable(stored, serving, now, o.names)) return 'renew-serving';
  const onCurrent = serving.verify(ca.publicKey);
  if (!onCurrent && now >= Date.parse(ca.validFrom) + backdate(o) + (o.propagationMs ?? 10 * 60_000)) return 'renew-serving';
  return 'keep';
}

function newCa(o: RotationOptions, now: number): KeyPair {
  return issueCertificate({ commonName: `${o.serviceName}-ca`, notBefore: now - backdate(o), notAfter: now + (o.caValidityMs ?? 3650 * day) });
}

function newServing(o: RotationOptions, ca: KeyPair, now: number): KeyPair {
  const commonName = o.names[0] ?? o.serviceName;
  return issueCertificate({ commonName, names: o.names, notBefore: now - backdate(o), notAfter: now + (o.servingValidityMs ?? 365 * day), issuer: ca });
}

/** The bundle with `first` in front, keeping older CAs only while they are valid. */
function bundleWith(first: string | undefined, previous: string, now: number): string {
  const older = splitBundle(previous).filter((c) => Date.parse(c.validTo) > now).map((c) => c.toString());
  return [...new Set([...(first === undefined ? [] : [first]), ...older])].join('');
}

/** Applies an action; `keep` returns the stored certificates unchanged. */
export function applyRotation(action: RotationAction, stored: WebhookCerts | undefined, now: number, o: RotationOptions): WebhookCerts | undefined {
  switch (action) {
    case 'keep':
      return stored;
    case 'create': {
      const ca = newCa(o, now);
      return { caBundle: ca.cert, ca, serving: newServing(o, ca, now) };
    }
    case 'rotate-ca': {
      if (stored === undefined) return undefined;
      const ca = newCa(o, now);
      // The serving certificate stays on the old CA until the new one has propagated.
      return { caBundle: bundleWith(ca.cert, stored.caBundle, now), ca, serving: stored.serving };
    }
    case 'renew-serving':
      if (stored === undefined) return undefined;
      return { caBundle: bundleWith(stored.ca.cert, stored.caBundle, now), ca: stored.ca, serving: newServing(o, stored.ca, now) };
  }
}
