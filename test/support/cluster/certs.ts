// Per-run PKI (control-plane.md §7): serving CA + apiserver certificate, client CA +
// admin client certificate (O=system:masters), service-account key pair. ECDSA P-256.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { ensureOpenssl, openssl } from './openssl.ts';

export interface Pki {
  readonly dir: string;
  readonly servingCa: string;
  readonly servingCert: string;
  readonly servingKey: string;
  readonly clientCa: string;
  readonly clientCaKey: string;
  readonly adminCert: string;
  readonly adminKey: string;
  readonly saKey: string;
  readonly saPub: string;
}

const DAYS = '7';

function key(dir: string, name: string): void {
  openssl(dir, ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', name]);
}

function ca(dir: string, name: string, cn: string): void {
  key(dir, `${name}.key`);
  openssl(dir, ['req', '-x509', '-new', '-key', `${name}.key`, '-subj', `/CN=${cn}`, '-days', DAYS,
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
    '-out', `${name}.crt`]);
}

function signed(dir: string, name: string, caName: string, subj: string, ext: string): void {
  key(dir, `${name}.key`);
  openssl(dir, ['req', '-new', '-key', `${name}.key`, '-subj', subj, '-out', `${name}.csr`]);
  writeFileSync(path.join(dir, `${name}.ext`), ext);
  openssl(dir, ['x509', '-req', '-in', `${name}.csr`, '-CA', `${caName}.crt`, '-CAkey', `${caName}.key`,
    '-CAcreateserial', '-days', DAYS, '-extfile', `${name}.ext`, '-out', `${name}.crt`]);
}

/** The serving certificate's subjectAltName value: 127.0.0.1 first, then `ips` (deduplicated). */
export function servingSans(ips: readonly string[]): string {
  const all = [...new Set(['127.0.0.1', ...ips])];
  return ['DNS:localhost', ...all.map((ip) => `IP:${ip}`),
    'DNS:kubernetes', 'DNS:kubernetes.default', 'DNS:kubernetes.default.svc'].join(',');
}

/**
 * Generates every key and certificate into `dir` (which must exist). The serving
 * certificate names 127.0.0.1 and `servingIps` (the bind address, the `kubernetes`
 * Service's ClusterIP).
 */
export function generatePki(dir: string, servingIps: readonly string[] = []): Pki {
  ensureOpenssl();
  ca(dir, 'serving-ca', 'outprobe-serving-ca');
  signed(dir, 'apiserver', 'serving-ca', '/CN=kube-apiserver',
    'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n' +
    `extendedKeyUsage=serverAuth\nsubjectAltName=${servingSans(servingIps)}\n`);
  ca(dir, 'client-ca', 'outprobe-client-ca');
  signed(dir, 'admin', 'client-ca', '/O=system:masters/CN=outprobe-admin',
    'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n');
  key(dir, 'sa.key');
  openssl(dir, ['pkey', '-in', 'sa.key', '-pubout', '-out', 'sa.pub']);
  const p = (f: string): string => path.join(dir, f);
  return {
    dir, servingCa: p('serving-ca.crt'), servingCert: p('apiserver.crt'), servingKey: p('apiserver.key'),
    clientCa: p('client-ca.crt'), clientCaKey: p('client-ca.key'), adminCert: p('admin.crt'),
    adminKey: p('admin.key'), saKey: p('sa.key'), saPub: p('sa.pub'),
  };
}

/**
 * A kubelet's client certificate (CN system:node:<name>, O system:nodes: the Node
 * authorizer's identity) signed by the plane's client CA in `pki.dir`; returns its files.
 */
export function nodeClientCert(pki: Pki, nodeName: string): { cert: string; key: string } {
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(nodeName)) throw new Error(`node name ${nodeName} is not a DNS label`);
  const name = `node-${nodeName}`;
  signed(pki.dir, name, 'client-ca', `/O=system:nodes/CN=system:node:${nodeName}`,
    'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n');
  return { cert: path.join(pki.dir, `${name}.crt`), key: path.join(pki.dir, `${name}.key`) };
}
