// Issue 27 finding 8: with cert-manager issuing the webhook certificate, the Secret volume that
// carries its private key is mounted owner- and group-read only (0440: root, and the pod's
// fsGroup the controller runs as), not the default 0644 that every user in the container reads.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { REPO_ROOT, findBinaries } from '../support/cluster/bins.ts';

interface Volume { readonly name: string; readonly secret?: { readonly secretName?: string; readonly defaultMode?: number } }

describe('chart: the cert-manager webhook Secret volume', () => {
  it('is mounted with defaultMode 0440', () => {
    const { helm } = findBinaries();
    const out = execFileSync(helm, ['template', 'outprobe', path.join(REPO_ROOT, 'charts/outprobe'), '--namespace', 'outprobe', '--set', 'webhook.certManager.enabled=true'], { encoding: 'utf8' });
    const deployment = parseAllDocuments(out).map((d) => d.toJS() as { kind?: string; spec?: { template?: { spec?: { volumes?: Volume[] } } } }).find((o) => o.kind === 'Deployment');
    const volume = deployment?.spec?.template?.spec?.volumes?.find((v) => v.name === 'webhook-tls');
    assert.equal(volume?.secret?.secretName, 'outprobe-webhook-tls');
    assert.equal(volume.secret.defaultMode, 0o440);
  });
});
