import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { reviewPodCreate, validatePolicyForTest } from './fixtures.ts';
import type { InjectionView } from '../../../src/injection/index.ts';
import type { ProbePolicy } from '../../../src/policy/index.ts';

function view(policies: readonly ProbePolicy[], labels: Record<string, Record<string, string>> = {}): InjectionView {
  return {
    namespaceLabels: (ns) => labels[ns],
    policies: (ns) => policies.filter((p) => p.metadata.namespace === ns),
    excluded: new Set(['kube-system', 'outprobe-system']),
  };
}

const enabled = { shop: { 'outprobe.io/inject-readiness-gates': 'enabled' } };
const web = (over: Record<string, unknown> = {}): ProbePolicy => validatePolicyForTest('web', 'shop', { selector: { matchLabels: { app: 'web' } }, readiness: { probe: { tcpSocket: { port: 80 } } }, ...over });

function podReview(opts: { ns?: string; labels?: Record<string, string>; gates?: readonly unknown[] | undefined; operation?: string; uid?: string } = {}): unknown {
  const spec: Record<string, unknown> = { containers: [{ name: 'c', image: 'x' }] };
  if (opts.gates !== undefined) spec['readinessGates'] = opts.gates;
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: opts.uid ?? 'u-1',
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      operation: opts.operation ?? 'CREATE',
      namespace: opts.ns ?? 'shop',
      object: { apiVersion: 'v1', kind: 'Pod', metadata: { generateName: 'web-', labels: opts.labels ?? { app: 'web' } }, spec },
    },
  };
}

function patchOf(a: ReturnType<typeof reviewPodCreate>): unknown {
  const p = a.body.response.patch;
  return p === undefined ? undefined : JSON.parse(Buffer.from(p, 'base64').toString('utf8'));
}

void describe('reviewPodCreate', () => {
  void it('creates spec.readinessGates with the policy conditionType in a labelled namespace', () => {
    const a = reviewPodCreate(podReview(), view([web()], enabled));
    assert.equal(a.result, 'injected');
    assert.equal(a.body.response.uid, 'u-1');
    assert.equal(a.body.response.allowed, true);
    assert.equal(a.body.response.patchType, 'JSONPatch');
    assert.deepEqual(patchOf(a), [{ op: 'add', path: '/spec/readinessGates', value: [{ conditionType: 'outprobe.io/web' }] }]);
  });

  void it('appends to an existing list and never duplicates a gate', () => {
    const two = [web(), validatePolicyForTest('api', 'shop', { selector: {}, readiness: { conditionType: 'example.com/api', probe: { tcpSocket: { port: 80 } } } })];
    const a = reviewPodCreate(podReview({ gates: [{ conditionType: 'outprobe.io/web' }, { conditionType: 'other/x' }] }), view(two, enabled));
    assert.deepEqual(patchOf(a), [{ op: 'add', path: '/spec/readinessGates/-', value: { conditionType: 'example.com/api' } }]);
    const again = reviewPodCreate(podReview({ gates: [{ conditionType: 'outprobe.io/web' }, { conditionType: 'example.com/api' }] }), view(two, enabled));
    assert.equal(again.result, 'already_gated');
    assert.equal(again.body.response.patch, undefined);
  });

  void it('adds one gate when two policies share a conditionType', () => {
    const a = reviewPodCreate(podReview(), view([web(), validatePolicyForTest('web2', 'shop', { selector: {}, readiness: { conditionType: 'outprobe.io/web', probe: { tcpSocket: { port: 81 } } } })], enabled));
    assert.deepEqual(patchOf(a), [{ op: 'add', path: '/spec/readinessGates', value: [{ conditionType: 'outprobe.io/web' }] }]);
  });

  void it('leaves pods the selector does not match, Observe-mode policies and liveness-only policies alone', () => {
    assert.equal(reviewPodCreate(podReview({ labels: { app: 'db' } }), view([web()], enabled)).result, 'no_policy');
    assert.equal(reviewPodCreate(podReview(), view([web({ mode: 'Observe' })], enabled)).result, 'no_policy');
    const liveOnly = validatePolicyForTest('live', 'shop', { selector: {}, liveness: { probe: { tcpSocket: { port: 80 } } } });
    assert.equal(reviewPodCreate(podReview(), view([liveOnly], enabled)).result, 'no_policy');
  });

  void it('needs the namespace label, or readiness.injectGate on the policy', () => {
    assert.equal(reviewPodCreate(podReview(), view([web()])).result, 'no_policy');
    assert.equal(reviewPodCreate(podReview(), view([web()], { shop: { 'outprobe.io/inject-readiness-gates': 'disabled' } })).result, 'no_policy');
    const opted = web({ readiness: { injectGate: true, probe: { tcpSocket: { port: 80 } } } });
    assert.equal(reviewPodCreate(podReview(), view([opted])).result, 'injected');
  });

  void it('never injects in kube-system or outprobe\'s own namespace', () => {
    const sys = validatePolicyForTest('web', 'kube-system', { selector: {}, readiness: { injectGate: true, probe: { tcpSocket: { port: 80 } } } });
    const own = validatePolicyForTest('web', 'outprobe-system', { selector: {}, readiness: { injectGate: true, probe: { tcpSocket: { port: 80 } } } });
    const labels = { 'kube-system': enabled.shop, 'outprobe-system': enabled.shop };
    assert.equal(reviewPodCreate(podReview({ ns: 'kube-system' }), view([sys], labels)).result, 'excluded_namespace');
    assert.equal(reviewPodCreate(podReview({ ns: 'outprobe-system' }), view([own], labels)).result, 'excluded_namespace');
  });

  void it('answers allowed without a patch when the request is malformed or not a pod CREATE', () => {
    for (const bad of [null, 42, {}, { request: 'x' }, { request: { uid: 7 } }]) {
      const a = reviewPodCreate(bad, view([web()], enabled));
      assert.equal(a.result, 'malformed');
      assert.deepEqual(a.body.response, { uid: '', allowed: true });
    }
    const noSpec = podReview() as { request: { object: { spec?: unknown } } };
    delete noSpec.request.object.spec;
    assert.deepEqual(reviewPodCreate(noSpec, view([web()], enabled)).body.response, { uid: 'u-1', allowed: true });
    assert.equal(reviewPodCreate(podReview({ operation: 'UPDATE' }), view([web()], enabled)).result, 'not_pod_create');
  });

  void it('reads labels as own keys only', () => {
    const p = validatePolicyForTest('web', 'shop', { selector: { matchExpressions: [{ key: 'constructor', operator: 'Exists' }] }, readiness: { probe: { tcpSocket: { port: 80 } } } });
    assert.equal(reviewPodCreate(podReview({ labels: {} }), view([p], enabled)).result, 'no_policy');
    assert.equal(reviewPodCreate(podReview({ ns: 'toString' }), view([web()], enabled)).result, 'no_policy');
  });
});
