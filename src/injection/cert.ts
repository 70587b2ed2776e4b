import { X509Certificate, createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { isIP } from 'node:net';
import { bitString, boolean, explicit, implicitPrimitive, namedBits, octetString, oid, sequence, set, smallInteger, time, unsignedInteger, utf8String } from './der.ts';

/** A PEM certificate and its PKCS#8 PEM private key. */
export interface KeyPair {
  readonly cert: string;
  readonly key: string;
}

export interface IssueOptions {
  readonly commonName: string;
  /** DNS names and IP addresses for subjectAltName (serving certificates). @default [] */
  readonly names?: readonly string[];
  readonly notBefore: number;
  readonly notAfter: number;
  /** Sign with this CA; absent: a self-signed CA. */
  readonly issuer?: KeyPair;
}

const ecdsaWithSha256 = sequence(oid('1.2.840.10045.4.3.2'));

const name = (cn: string): Buffer => sequence(set(sequence(oid('2.5.4.3'), utf8String(cn))));

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return critical ? sequence(oid(id), boolean(true), octetString(value)) : sequence(oid(id), octetString(value));
}

/**
 * An IP address as subjectAltName carries it: 4 bytes for IPv4, 16 for IPv6,
 * an embedded IPv4 tail (`::ffff:10.1.2.3`, `64:ff9b::10.1.2.3`) included as
 * its last 4 bytes. Throws for anything else (a zone, `fe80::1%eth0`, has no
 * place in a certificate).
 */
export function ipBytes(ip: string): Buffer {
  const kind = isIP(ip);
  if (kind === 4) return Buffer.from(ip.split('.').map(Number));
  if (kind !== 6 || ip.includes('%')) throw new Error(`not an IP address for a certificate: ${ip}`);
  let text = ip;
  const tail: number[] = [];
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4 !== null) {
    tail.push(...v4.slice(1).map(Number));
    text = text.slice(0, v4.index);
    if (text.endsWith(':') && !text.endsWith('::')) text = text.slice(0, -1);
  }
  // Expand "::" and write the 16-bit groups (six of them before an IPv4 tail, else eight).
  const want = tail.length === 0 ? 8 : 6;
  const [head = '', rest] = text.split('::');
  const h = head === '' ? [] : head.split(':');
  const t = rest === undefined || rest === '' ? [] : rest.split(':');
  const groups = rest === undefined ? h : [...h, ...Array<string>(want - h.length - t.length).fill('0'), ...t];
  return Buffer.from([
    ...groups.flatMap((g) => {
      const v = parseInt(g, 16);
      return [v >> 8, v & 0xff];
    }),
    ...tail,
  ]);
}

function subjectAltName(names: readonly string[]): Buffer {
  return sequence(...names.map((n) => (isIP(n) === 0 ? implicitPrimitive(2, Buffer.from(n, 'ascii')) : implicitPrimitive(7, ipBytes(n)))));
}

function extensions(isCa: boolean, names: readonly string[]): Buffer {
  if (isCa) {
    return sequence(
      extension('2.5.29.19', true, sequence(boolean(true))), // basicConstraints: CA
      extension('2.5.29.15', true, namedBits(0x86)), // keyUsage: digitalSignature, keyCertSign, cRLSign
    );
  }
  return sequence(
    extension('2.5.29.19', true, sequence()), // basicConstraints: not a CA
    extension('2.5.29.15', true, namedBits(0x80)), // keyUsage: digitalSignature
    extension('2.5.29.37', false, sequence(oid('1.3.6.1.5.5.7.3.1'))), // extKeyUsage: serverAuth
    extension('2.5.29.17', false, subjectAltName(names)),
  );
}

function pem(der: Buffer): string {
  const b64 = der.toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '');
  return `-----BEGIN CERTIFICATE-----\n${b64}\n-----END CERTIFICATE-----\n`;
}

/**
 * An X.509 v3 certificate with a new ECDSA P-256 key: a self-signed CA, or
 * a serving certificate (serverAuth, subjectAltName) signed by `issuer`.
 */
export function issueCertificate(o: IssueOptions): KeyPair {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const serial = randomBytes(16);
  serial[0] = (serial[0] ?? 0) & 0x7f; // positive, and never all zero in practice
  const issuerName = o.issuer === undefined ? name(o.commonName) : name(new X509Certificate(o.issuer.cert).subject.replace(/^CN=/, ''));
  const tbs = sequence(
    explicit(0, smallInteger(2)),
    unsignedInteger(serial),
    ecdsaWithSha256,
    issuerName,
    sequence(time(o.notBefore), time(o.notAfter)),
    name(o.commonName),
    publicKey.export({ type: 'spki', format: 'der' }),
    explicit(3, extensions(o.issuer === undefined, o.names ?? [])),
  );
  const signingKey = o.issuer === undefined ? privateKey : createPrivateKey(o.issuer.key);
  const signature = sign('sha256', tbs, { key: signingKey, dsaEncoding: 'der' });
  const der = sequence(tbs, ecdsaWithSha256, bitString(signature));
  return { cert: pem(der), key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}

/** Whether `key` is the private key of `cert` (a Secret edited by hand may pair them wrongly). */
export function keyMatches(pair: KeyPair): boolean {
  try {
    const fromKey = createPublicKey(createPrivateKey(pair.key)).export({ type: 'spki', format: 'der' });
    const fromCert = new X509Certificate(pair.cert).publicKey.export({ type: 'spki', format: 'der' });
    return fromKey.equals(fromCert);
  } catch {
    return false;
  }
}
