// Admin kubeconfig with embedded client certificate (control-plane.md §7).
import { readFileSync, writeFileSync } from 'node:fs';

export interface AdminCredentials {
  readonly server: string;
  readonly caPem: string;
  readonly certPem: string;
  readonly keyPem: string;
}

/** Reads the PEM files into memory. */
export function loadCredentials(server: string, caFile: string, certFile: string, keyFile: string): AdminCredentials {
  return {
    server,
    caPem: readFileSync(caFile, 'utf8'),
    certPem: readFileSync(certFile, 'utf8'),
    keyPem: readFileSync(keyFile, 'utf8'),
  };
}

const b64 = (s: string): string => Buffer.from(s).toString('base64');

/** The kubeconfig document (JSON is valid YAML, so kubectl and client libraries read it). */
export function kubeconfigFor(c: AdminCredentials, name = 'outprobe'): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster: { server: c.server, 'certificate-authority-data': b64(c.caPem) } }],
    users: [{ name, user: { 'client-certificate-data': b64(c.certPem), 'client-key-data': b64(c.keyPem) } }],
    contexts: [{ name, context: { cluster: name, user: name } }],
    'current-context': name,
  };
}

/** Writes the kubeconfig with mode 0600. */
export function writeKubeconfig(file: string, c: AdminCredentials): void {
  writeFileSync(file, `${JSON.stringify(kubeconfigFor(c), null, 2)}\n`, { mode: 0o600 });
}
