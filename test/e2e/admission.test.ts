// Trust boundary at admission (issue #10 findings 3 and 4): the chart's
// ValidatingAdmissionPolicy admits a ProbePolicy only when its author may do
// in that namespace what the policy makes outprobe do with its own identity.
// The chart is installed with helm on a real kube-apiserver (RBAC authorizer);
// requests are made as real users by impersonation (`kubectl --as` with the
// admin kubeconfig, so the API server authorizes the impersonated user, and
// the policy's CEL authorizer checks are evaluated for that user). Every user
// may write ProbePolicies in the namespace; some also hold pods/exec, pods
// delete, pods/eviction or pods/status patch (readiness in Enforce mode,
// issue 27 finding 4).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { startControlPlane } from '../support/cluster/index.ts';
import type { ControlPlane } from '../support/cluster/index.ts';
import { waitFor } from '../integration/support/fake-kubelet.ts';
import { logsOnFailure } from '../support/replicas/index.ts';

const chart = fileURLToPath(new URL('../../charts/outprobe', import.meta.url));
const NS = 'outprobe';
const APP = 'adm-app';
/** Exec-capable users here too, but exec is not in the chart's execProbes.namespaces. */
const OTHER = 'adm-other';
const tcp = { tcpSocket: { port: 8080 }, periodSeconds: 5 };

const policy = (name: string, spec: Record<string, unknown>, namespace = APP): Record<string, unknown> =>
  ({ apiVersion: 'outprobe.io/v1alpha1', kind: 'ProbePolicy', metadata: { name, namespace }, spec: { selector: { matchLabels: { app: name } }, ...spec } });

interface Outcome { readonly ok: boolean; readonly out: string }

void describe('the chart\'s admission policy: a ProbePolicy author gets no more than their own RBAC', () => {
  const logs = logsOnFailure('admission');
  let cp: ControlPlane;
  let tmp: string;
  const kubectl = (args: readonly string[], input?: string): Outcome => {
    const r = spawnSync(cp.binaries.kubectl, ['--kubeconfig', cp.kubeconfigPath, ...args], { encoding: 'utf8', timeout: 30_000, ...(input === undefined ? {} : { input }) });
    return { ok: r.status === 0, out: `${r.stdout}${r.stderr}` };
  };
  const as = (user: string, obj: Record<string, unknown>): Outcome => kubectl(['create', '--as', user, '-f', '-'], JSON.stringify(obj));
  const helm = (...args: string[]): void => {
    const env = { ...process.env, HELM_CACHE_HOME: `${tmp}/cache`, HELM_CONFIG_HOME: `${tmp}/config`, HELM_DATA_HOME: `${tmp}/data` };
    const r = spawnSync(cp.binaries.helm, ['--kubeconfig', cp.kubeconfigPath, ...args], { encoding: 'utf8', env, timeout: 60_000 });
    assert.equal(r.status, 0, `helm ${args.join(' ')}: ${r.stderr}`);
  };
  const rejected = (o: Outcome, message: RegExp): void => {
    assert.equal(o.ok, false, `expected a denial, got: ${o.out}`);
    assert.match(o.out, /ValidatingAdmissionPolicy 'outprobe-probepolicy-author'/);
    assert.match(o.out, message);
  };
  const accepted = (o: Outcome): void => {
    assert.equal(o.ok, true, o.out);
  };

  logs.setup(async () => {
    tmp = mkdtempSync(path.join(tmpdir(), 'outprobe-admission-'));
    cp = await startControlPlane();
    logs.plane(cp);
    for (const name of [APP, OTHER]) await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    // Exec on, for APP only; no controller pods (nothing would run them here).
    helm('install', 'outprobe', chart, '-n', NS, '--create-namespace', '--set', 'replicaCount=0', '--set', 'execProbes.enabled=true', '--set', `execProbes.namespaces={${APP}}`);
    await waitFor('CRD served', async () => (await cp.kube.call('GET', '/apis/outprobe.io/v1alpha1/probepolicies')).status === 200, 30_000);
    const role = (name: string, rules: unknown[]): Promise<unknown> =>
      cp.kube.create('/apis/rbac.authorization.k8s.io/v1/clusterroles', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name }, rules });
    await role('adm-author', [{ apiGroups: ['outprobe.io'], resources: ['probepolicies'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] }]);
    await role('adm-exec', [{ apiGroups: [''], resources: ['pods/exec'], verbs: ['create'] }]);
    await role('adm-delete', [{ apiGroups: [''], resources: ['pods'], verbs: ['delete'] }]);
    await role('adm-evict', [{ apiGroups: [''], resources: ['pods/eviction'], verbs: ['create'] }]);
    await role('adm-status', [{ apiGroups: [''], resources: ['pods/status'], verbs: ['patch'] }]);
    // A readiness probe in Enforce mode needs pods/status patch: the exec and fromContainer users hold it
    // so that their readiness policies test the exec rule alone; `gater` holds it and nothing else.
    const grants: [string, string[]][] = [
      ['author', ['adm-author']], ['execer', ['adm-author', 'adm-exec', 'adm-status']], ['deleter', ['adm-author', 'adm-delete']], ['evicter', ['adm-author', 'adm-evict']],
      ['gater', ['adm-author', 'adm-status']],
      // The built-in aggregated `edit` ClusterRole (pods create/update/delete, exec): no pods/status patch.
      ['editor', ['adm-author', 'edit']],
    ];
    for (const ns of [APP, OTHER]) {
      for (const [user, roles] of grants) {
        for (const r of roles) {
          await cp.kube.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, {
            apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: `${user}-${r}`, namespace: ns },
            roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: r }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
          });
        }
      }
    }
    // The policy takes effect once the API server has compiled it: probe with server-side dry runs.
    await waitFor('admission policy in effect', () => Promise.resolve(!kubectl(['create', '--dry-run=server', '--as', 'author', '-f', '-'],
      JSON.stringify(policy('probe', { readiness: { probe: { exec: { command: ['true'] } } } }))).ok), 60_000, 500);
  });
  logs.teardown(async () => {
    await cp.stop();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('the plane serves admissionregistration.k8s.io/v1 and the chart installed the policy and its binding', async () => {
    const vap = await cp.kube.get('/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/outprobe-probepolicy-author');
    const status = vap['status'] as { typeChecking?: { expressionWarnings?: unknown[] } } | undefined;
    assert.deepEqual(status?.typeChecking?.expressionWarnings ?? [], [], 'every CEL expression type-checks against the CRD schema');
    const binding = await cp.kube.get('/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/outprobe-probepolicy-author');
    assert.deepEqual((binding['spec'] as { validationActions?: string[] }).validationActions, ['Deny']);
  });

  it('Observe mode needs no pod rights: readiness (even with injectGate) and liveness are accepted from a user with only ProbePolicy rights', () => {
    // Observe mode writes nothing to pods and injects no gate, and remediates nothing.
    accepted(as('author', policy('observe-ready', { mode: 'Observe', readiness: { probe: { httpGet: { path: '/healthz', port: 8080 } } } })));
    accepted(as('author', policy('observe-inject', { mode: 'Observe', readiness: { injectGate: true, probe: tcp } })));
    accepted(as('author', policy('observe-liveness', { mode: 'Observe', liveness: { action: 'Delete', probe: tcp } })));
  });

  it('readiness in Enforce mode (issue 27 finding 4): rejected without patch pods/status, with injectGate too; accepted with it', () => {
    // The reproduction: every new pod of the namespace gated, a closed port, nothing ever unready-capped.
    const hold = { selector: {}, readiness: { injectGate: true, maxUnreadyPercent: 100, probe: { tcpSocket: { port: 1 } } } };
    rejected(as('author', { ...policy('hold-all', {}), spec: hold }),
      /readiness with injectGate in Enforce mode adds a readiness gate to every new pod the policy selects.*author may not patch pods\/status in namespace adm-app/);
    rejected(as('author', policy('ready-author', { readiness: { probe: { httpGet: { path: '/healthz', port: 8080 } } } })),
      /readiness in Enforce mode writes pod conditions \(readiness gates\) as outprobe: author may not patch pods\/status in namespace adm-app/);
    rejected(as('author', policy('ready-enforce', { mode: 'Enforce', readiness: { probe: tcp } })), /author may not patch pods\/status/);
    // Eviction or delete rights are no substitute, nor is the built-in `edit` role.
    rejected(as('evicter', policy('ready-evicter', { readiness: { probe: tcp } })), /evicter may not patch pods\/status/);
    rejected(as('editor', policy('ready-editor', { readiness: { probe: tcp } })), /editor may not patch pods\/status/);
    accepted(as('gater', policy('ready-only', { readiness: { probe: { httpGet: { path: '/healthz', port: 8080 } } } })));
    accepted(as('gater', { ...policy('hold-gater', {}), spec: hold }));
  });

  it('exec: rejected without pods/exec, accepted with it, and only in execProbes.namespaces', () => {
    const exec = (name: string, ns = APP): Record<string, unknown> => policy(name, { readiness: { probe: { exec: { command: ['cat', '/tmp/ready'] } } } }, ns);
    rejected(as('author', exec('exec-author')), /author may not create pods\/exec in namespace adm-app/);
    rejected(as('deleter', exec('exec-deleter')), /may not create pods\/exec/);
    accepted(as('execer', exec('exec-execer')));
    // The reproduction: a liveness exec probe that prints the controller's token.
    rejected(as('evicter', policy('token', { liveness: { probe: { exec: { command: ['sh', '-c', 'cat /var/run/secrets/kubernetes.io/serviceaccount/token; exit 1'] } } } })), /may not create pods\/exec/);
    // The installer allowed exec in adm-app only: rejected in adm-other even for a user with pods/exec there.
    rejected(as('execer', exec('exec-other', OTHER)), /exec probes are not allowed in namespace adm-other by this outprobe installation/);
  });

  it('fromContainer: needs pods/exec where the installation allows exec (the container may declare an exec probe), not elsewhere', () => {
    const own = (name: string, ns = APP): Record<string, unknown> => policy(name, { readiness: { probe: { fromContainer: 'readinessProbe' } } }, ns);
    rejected(as('author', own('own-author')), /a fromContainer probe makes outprobe run the probe a container declares.*author may not create pods\/exec in namespace adm-app/);
    accepted(as('execer', own('own-execer')));
    // Exec is not allowed in adm-other: a container's exec probe is reported there, never run, so no exec right is
    // needed (only the readiness rule's pods/status patch).
    accepted(as('gater', own('own-other', OTHER)));
  });

  it('liveness with action Delete: rejected without delete pods (eviction rights are not enough), accepted with it', () => {
    const del = (name: string): Record<string, unknown> => policy(name, { liveness: { action: 'Delete', probe: tcp } });
    rejected(as('author', del('delete-author')), /author may not delete pods in namespace adm-app/);
    rejected(as('evicter', del('delete-evicter')), /evicter may not delete pods/);
    accepted(as('deleter', del('delete-deleter')));
  });

  it('liveness or startup with action Evict (the default): rejected without create pods/eviction, accepted with it', () => {
    rejected(as('author', policy('evict-author', { liveness: { action: 'Evict', probe: tcp } })), /author may not create pods\/eviction in namespace adm-app/);
    rejected(as('deleter', policy('evict-default', { liveness: { probe: tcp } })), /deleter may not create pods\/eviction/);
    rejected(as('author', policy('startup-author', { startup: { probe: tcp } })), /may not create pods\/eviction/);
    accepted(as('evicter', policy('evict-evicter', { liveness: { probe: tcp }, startup: { probe: tcp } })));
  });

  it('UPDATE is checked too: adding liveness or exec to an accepted policy, or switching Observe readiness to Enforce, is rejected for a user without the rights', () => {
    const patch = (user: string, name: string, body: unknown): Outcome => kubectl(['patch', '--as', user, '-n', APP, 'probepolicies.outprobe.io', name, '--type', 'merge', '-p', JSON.stringify(body)]);
    rejected(patch('gater', 'ready-only', { spec: { liveness: { probe: tcp } } }), /may not create pods\/eviction/);
    rejected(patch('gater', 'ready-only', { spec: { readiness: { probe: { httpGet: null, exec: { command: ['true'] } } } } }), /may not create pods\/exec/);
    accepted(patch('gater', 'ready-only', { spec: { readiness: { probe: { httpGet: null, tcpSocket: { port: 8080 } } } } }));
    // An Observe-mode policy its author may write cannot be turned to Enforce (or given injectGate) without pods/status.
    rejected(patch('author', 'observe-inject', { spec: { mode: 'Enforce' } }), /author may not patch pods\/status/);
    accepted(patch('author', 'observe-ready', { spec: { readiness: { injectGate: true } } }));
    accepted(patch('gater', 'observe-inject', { spec: { mode: 'Enforce' } }));
  });
});
