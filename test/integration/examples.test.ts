// examples/ (issue 6): every manifest is server-side applied to a real API server
// with the CRD from crds/ installed (so the CRD's OpenAPI schema and CEL rules
// accept it), and every ProbePolicy also passes the controller's validatePolicy,
// both as written and as the API server returns it (defaults applied).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { validatePolicy } from '../../src/policy/index.ts';
import { startControlPlane } from '../support/cluster/index.ts';
import type { ControlPlane } from '../support/cluster/index.ts';
import { installCrd } from './support/controller.ts';
import { logsOnFailure } from '../support/replicas/index.ts';

const dir = fileURLToPath(new URL('../../examples/', import.meta.url));
const files = readdirSync(dir).filter((f) => f.endsWith('.yaml')).sort();

interface Manifest {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace: string };
  readonly spec: Record<string, unknown>;
}

function manifests(file: string): Manifest[] {
  return parseAllDocuments(readFileSync(path.join(dir, file), 'utf8')).map((d) => d.toJS() as Manifest);
}

const all = files.flatMap((f) => manifests(f).map((m) => ({ file: f, m })));

void describe('examples/', () => {
  const logs = logsOnFailure('examples');
  let cp: ControlPlane;
  logs.setup(async () => {
    cp = await startControlPlane();
    logs.plane(cp);
    await installCrd(cp.kube);
    for (const ns of new Set(all.map((x) => x.m.metadata.namespace))) {
      await cp.kube.must('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }, [409]);
    }
  });
  logs.teardown(async () => {
    await cp.stop();
  });

  it('covers HTTP readiness, TCP liveness with Evict, gRPC, Observe mode, fromContainer and a gated Deployment', () => {
    const policies = all.filter((x) => x.m.kind === 'ProbePolicy').map((x) => x.m.spec);
    const probe = (s: Record<string, unknown>, kind: string): Record<string, unknown> | undefined =>
      (s[kind] as { probe?: Record<string, unknown> } | undefined)?.probe;
    assert.ok(policies.some((s) => probe(s, 'readiness')?.['httpGet'] !== undefined));
    assert.ok(policies.some((s) => probe(s, 'liveness')?.['tcpSocket'] !== undefined && (s['liveness'] as { action?: string }).action === 'Evict'));
    assert.ok(policies.some((s) => probe(s, 'readiness')?.['grpc'] !== undefined));
    assert.ok(policies.some((s) => s['mode'] === 'Observe'));
    assert.ok(policies.some((s) => s['mode'] === 'Observe' && probe(s, 'readiness')?.['fromContainer'] === 'readinessProbe'));
    const deployment = all.find((x) => x.m.kind === 'Deployment')?.m;
    const gates = (deployment?.spec['template'] as { spec: { readinessGates?: { conditionType: string }[] } } | undefined)?.spec.readinessGates ?? [];
    const conditionTypes = policies.map((s) => (s['readiness'] as { conditionType?: string } | undefined)?.conditionType);
    assert.ok(gates.length > 0 && gates.every((g) => conditionTypes.includes(g.conditionType)), 'the Deployment is gated on an example policy');
  });

  for (const file of files) {
    it(`${file}: validatePolicy accepts it and the API server applies it`, () => {
      for (const m of manifests(file)) {
        if (m.kind === 'ProbePolicy') {
          const v = validatePolicy(m, { execEnabled: false });
          assert.ok(v.ok, `${file}: ${JSON.stringify(v.ok ? [] : v.issues)}`);
        }
      }
      const out = execFileSync(cp.binaries.kubectl, ['--kubeconfig', cp.kubeconfigPath, 'apply', '--server-side', '--field-manager=examples-test', '-f', path.join(dir, file)], { encoding: 'utf8' });
      assert.match(out, /serverside-applied/);
    });
  }

  it('the stored policies (with API-server defaults) still validate and list with the printer columns', async () => {
    for (const { m } of all.filter((x) => x.m.kind === 'ProbePolicy')) {
      const stored = await cp.kube.get(`/apis/outprobe.io/v1alpha1/namespaces/${m.metadata.namespace}/probepolicies/${m.metadata.name}`);
      const v = validatePolicy(stored, { execEnabled: false });
      assert.ok(v.ok, `${m.metadata.name}: ${JSON.stringify(v.ok ? [] : v.issues)}`);
      assert.equal(v.policy.spec.mode, m.spec['mode'] ?? 'Enforce');
    }
    const table = execFileSync(cp.binaries.kubectl, ['--kubeconfig', cp.kubeconfigPath, 'get', 'probepolicies', '-A'], { encoding: 'utf8' });
    assert.match(table.split('\n')[0] ?? '', /^NAMESPACE\s+NAME\s+STATUS\s+MODE\s+PODS\s+PODS-READY\s+PODS-FAILING\s+DIVERGED\s+NOVANTAGE\s+REMEDIATED\s+AGE\s+MESSAGE$/);
    assert.match(table, /api-dry-run\s+(\S+\s+)?Observe/);
  });
});
