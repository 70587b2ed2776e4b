import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Pod, PodContainer } from '../../../src/kube/index.ts';
import type { ProbePolicy, ProbeSpec } from '../../../src/policy/index.ts';
import { AddressGuard, buildRequest, expandCommand, matchesSelector, planTargets, resolvePort } from '../../../src/targets/index.ts';

const web: PodContainer = { name: 'web', ports: [{ name: 'http', containerPort: 8080 }, { name: 'http', containerPort: 9090 }, { name: undefined, containerPort: 7000 }], env: { GREETING: 'hi' }, sidecar: false };
const side: PodContainer = { name: 'proxy', ports: [{ name: 'admin', containerPort: 15000 }], env: {}, sidecar: true };

function pod(over: Partial<Pod> = {}): Pod {
  return {
    uid: 'uid-1', namespace: 'shop', name: 'web-1', resourceVersion: '1', labels: { app: 'web', tier: 'front' }, nodeName: 'n1', phase: 'Running',
    podIP: '127.0.10.1', deletionTimestamp: undefined, hostNetwork: false, restartPolicy: 'Always', terminationGracePeriodSeconds: 30, readinessGates: ['outprobe.io/web'],
    containers: [side, web], containerStatuses: [], conditions: [], ...over,
  };
}

const probe = (handler: ProbeSpec['handler']): ProbeSpec => ({ handler, initialDelaySeconds: 0, timeoutSeconds: 2, periodSeconds: 10, successThreshold: 1, failureThreshold: 3, terminationGracePeriodSeconds: null });

function policy(spec: Partial<ProbePolicy['spec']> = {}): ProbePolicy {
  return {
    metadata: { name: 'web', namespace: 'shop' },
    spec: {
      selector: { matchLabels: { app: 'web' }, matchExpressions: [] },
      mode: 'Enforce',
      readiness: { conditionType: 'outprobe.io/web', container: null, probe: probe({ type: 'httpGet', path: '/healthz', port: 'http', scheme: 'HTTP', httpHeaders: [] }), maxUnreadyPercent: 50 },
      liveness: null,
      startup: null,
      remediation: { maxUnavailable: 1, haltAbovePercentFailing: 50 },
      ...spec,
    },
  };
}

describe('resolvePort (probe.ResolveContainerPort)', () => {
  it('uses numbers as they are and rejects out-of-range ones', () => {
    assert.deepEqual(resolvePort(8080, web), { ok: true, port: 8080 });
    assert.deepEqual(resolvePort(0, web), { ok: false, error: 'invalid port number: 0' });
    assert.deepEqual(resolvePort(70000, web), { ok: false, error: 'invalid port number: 70000' });
  });
  it('resolves a name to the first matching container port', () => {
    assert.deepEqual(resolvePort('http', web), { ok: true, port: 8080 });
  });
  it('parses a decimal string when no port has that name', () => {
    assert.deepEqual(resolvePort('8081', web), { ok: true, port: 8081 });
  });
  it('errors with Go strconv text when nothing matches', () => {
    assert.deepEqual(resolvePort('metrics', web), { ok: false, error: 'strconv.Atoi: parsing "metrics": invalid syntax' });
  });
});

describe('matchesSelector', () => {
  const labels = { app: 'web', tier: 'front' };
  it('matchLabels and every operator', () => {
    assert.equal(matchesSelector(labels, { matchLabels: {}, matchExpressions: [] }), true);
    assert.equal(matchesSelector(labels, { matchLabels: { app: 'web' }, matchExpressions: [] }), true);
    assert.equal(matchesSelector(labels, { matchLabels: { app: 'db' }, matchExpressions: [] }), false);
    assert.equal(matchesSelector(labels, { matchLabels: {}, matchExpressions: [{ key: 'tier', operator: 'In', values: ['front', 'edge'] }] }), true);
    assert.equal(matchesSelector(labels, { matchLabels: {}, matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['front'] }] }), false);
    assert.equal(matchesSelector(labels, { matchLabels: {}, matchExpressions: [{ key: 'canary', operator: 'NotIn', values: ['yes'] }] }), true);
    assert.equal(matchesSelector(labels, { matchLabels: {}, matchExpressions: [{ key: 'app', operator: 'Exists', values: [] }] }), true);
    assert.equal(matchesSelector(labels, { matchLabels: {}, matchExpressions: [{ key: 'app', operator: 'DoesNotExist', values: [] }] }), false);
  });
});

describe('planTargets', () => {
  it('targets the first regular container by default, one target per probe block', () => {
    const p = policy({
      liveness: { action: 'Evict', container: null, probe: probe({ type: 'tcpSocket', port: 7000 }) },
      startup: { container: 'proxy', probe: probe({ type: 'tcpSocket', port: 'admin' }) },
    });
    const { targets, issues } = planTargets(p, pod());
    assert.deepEqual(issues, []);
    assert.deepEqual(targets.map((t) => [t.kind, t.container, t.key]), [
      ['startup', 'proxy', 'shop/web/uid-1/proxy/startup'],
      ['liveness', 'web', 'shop/web/uid-1/web/liveness'],
      ['readiness', 'web', 'shop/web/uid-1/web/readiness'],
    ]);
    assert.equal(targets[2]?.conditionType, 'outprobe.io/web');
  });
  it('reports a named container the pod lacks instead of targeting it', () => {
    const p = policy({ readiness: { conditionType: 'outprobe.io/web', container: 'missing', probe: probe({ type: 'tcpSocket', port: 1 }), maxUnreadyPercent: 50 } });
    const { targets, issues } = planTargets(p, pod());
    assert.equal(targets.length, 0);
    assert.match(issues[0]?.message ?? '', /container "missing" not found in pod shop\/web-1/);
  });
  it("says what the API server says for a probe on a plain init container, not 'not found'", () => {
    const p = policy({ readiness: { conditionType: 'outprobe.io/web', container: 'migrate', probe: probe({ type: 'tcpSocket', port: 1 }), maxUnreadyPercent: 50 } });
    const { targets, issues } = planTargets(p, pod({ plainInitContainers: ['migrate'] }));
    assert.equal(targets.length, 0);
    assert.equal(issues[0]?.message, 'readiness probe: container "migrate" of pod shop/web-1: may not be set for init containers without restartPolicy=Always');
  });
});

describe('buildRequest', () => {
  const guard = new AddressGuard(['127.0.0.0/8']);
  it('builds an HTTP request to the pod IP with the resolved port', () => {
    const r = buildRequest(probe({ type: 'httpGet', path: '/healthz', port: 'http', scheme: 'HTTPS', httpHeaders: [{ name: 'X', value: 'y' }] }), pod(), 'web', guard);
    assert.equal(r.type, 'httpGet');
    const { checkHop, ...request } = (r).request;
    assert.deepEqual(request, { scheme: 'HTTPS', ip: '127.0.10.1', port: 8080, path: '/healthz', headers: [{ name: 'X', value: 'y' }], timeoutMs: 2000 });
    assert.equal(typeof checkHop, 'function');
  });
  it('gives HTTP requests a per-hop check that runs the address guard on every redirect hop', () => {
    const r = buildRequest(probe({ type: 'httpGet', path: '/', port: 8080, scheme: 'HTTP', httpHeaders: [] }), pod(), 'web', guard);
    const checkHop = r.type === 'httpGet' ? r.request.checkHop : undefined;
    assert.ok(checkHop !== undefined);
    assert.equal(checkHop('127.0.10.1', 8080), undefined);
    assert.equal(checkHop('10.1.2.3', 8080), 'pod IP 10.1.2.3 is outside the allowed probe ranges');
    assert.match(checkHop('169.254.169.254', 80) ?? '', /not probed/);
  });
  it('a port that cannot be resolved is a prober error', () => {
    assert.deepEqual(buildRequest(probe({ type: 'tcpSocket', port: 'nope' }), pod(), 'web', guard), { type: 'error', error: 'strconv.Atoi: parsing "nope": invalid syntax' });
  });
  it('refuses link-local, metadata and out-of-range addresses', () => {
    const open = new AddressGuard();
    assert.equal(buildRequest(probe({ type: 'tcpSocket', port: 80 }), pod({ podIP: '169.254.169.254' }), 'web', open).type, 'error');
    assert.equal(buildRequest(probe({ type: 'tcpSocket', port: 80 }), pod({ podIP: 'fe80::1' }), 'web', open).type, 'error');
    assert.equal(buildRequest(probe({ type: 'tcpSocket', port: 80 }), pod({ podIP: '10.1.2.3' }), 'web', open).type, 'tcpSocket');
    assert.deepEqual(buildRequest(probe({ type: 'tcpSocket', port: 80 }), pod({ podIP: '10.1.2.3' }), 'web', guard), { type: 'error', error: 'pod IP 10.1.2.3 is outside the allowed probe ranges' });
  });
  it('a pod without an IP is a prober error', () => {
    assert.deepEqual(buildRequest(probe({ type: 'grpc', port: 9000, service: '' }), pod({ podIP: undefined }), 'web', guard), { type: 'error', error: 'pod has no IP address yet' });
  });
  it('expands $(VAR) in exec commands from literal env, $$ escapes', () => {
    assert.deepEqual(expandCommand(['echo', '$(GREETING)', '$(MISSING)', '$$(GREETING)'], { GREETING: 'hi' }), ['echo', 'hi', '$(MISSING)', '$(GREETING)']);
  });
});
