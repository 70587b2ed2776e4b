/**
 * Several vantages in the bench (`--vantage-count` > 1, ADR 0058): the
 * replicas are host processes with declared membership, so the bench gives
 * them what a pod would have: a peer token (a TokenRequest of the peer
 * audience for a ServiceAccount of its own, allowed as the fleet's user) and
 * a loopback address to be reached at.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ControlPlane } from '../../test/support/cluster/index.ts';

const sa = 'outprobe-bench';

export async function vantageArgs(cp: ControlPlane, dir: string, count: number): Promise<string[]> {
  if (count <= 1) return [];
  await cp.kube.call('POST', '/api/v1/namespaces/default/serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: sa } });
  const res = await cp.kube.call('POST', `/api/v1/namespaces/default/serviceaccounts/${sa}/token`, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences: ['outprobe.io/peer'], expirationSeconds: 7200 } });
  const token = (res.body as { status?: { token?: string } }).status?.token;
  if (token === undefined) throw new Error(`no peer token for the bench (HTTP ${res.status})`);
  const file = path.join(dir, 'peer-token');
  writeFileSync(file, token, { mode: 0o600 });
  return ['--advertise-address', '127.0.0.1', '--peer-token-file', file, '--second-opinion-allowed-users', `system:serviceaccount:default:${sa}`];
}
