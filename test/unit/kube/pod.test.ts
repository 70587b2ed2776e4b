import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { projectPod, projectionCacheSizes } from '../../../src/kube/index.ts';

describe('projectPod', () => {
  it('carries spec.hostNetwork (false when absent)', () => {
    const raw = (hostNetwork?: boolean): Parameters<typeof projectPod>[0] => ({ metadata: { uid: 'u', name: 'p', namespace: 'n' }, spec: { ...(hostNetwork === undefined ? {} : { hostNetwork }), containers: [{ name: 'c' }] }, status: { podIP: '10.0.0.5' } });
    assert.equal(projectPod(raw(true)).hostNetwork, true);
    assert.equal(projectPod(raw(false)).hostNetwork, false);
    assert.equal(projectPod(raw()).hostNetwork, false);
  });

  it('lists plain init containers apart from sidecars (which may carry probes)', () => {
    const pod = projectPod({
      metadata: { uid: 'u', name: 'p', namespace: 'n' },
      spec: { initContainers: [{ name: 'migrate' }, { name: 'proxy', restartPolicy: 'Always' }], containers: [{ name: 'c' }] },
      status: {},
    });
    assert.deepEqual(pod.plainInitContainers, ['migrate']);
    assert.deepEqual(pod.containers.map((c) => [c.name, c.sidecar]), [['proxy', true], ['c', false]]);
  });
});

describe('projectPod: shared, compact projections (ADR 0030)', () => {
  type Raw = Parameters<typeof projectPod>[0];
  const raw = (i: number, over: { labels?: unknown; env?: unknown; node?: string; containerID?: string; ready?: boolean; message?: string } = {}): Raw => ({
    metadata: { uid: `uid-${i}`, name: `pod-${i}`, namespace: 'shop', resourceVersion: String(100 + i), labels: 'labels' in over ? over.labels : { app: 'web', 'pod-template-hash': 'abc' } },
    spec: {
      nodeName: over.node ?? 'n1',
      readinessGates: [{ conditionType: 'outprobe.io/web' }],
      containers: [{ name: 'web', ports: [{ name: 'http', containerPort: 8080 }], env: over.env ?? [{ name: 'MODE', value: 'prod' }] }],
    },
    status: {
      phase: 'Running', podIP: `10.0.0.${i}`,
      conditions: [{ type: 'ContainersReady', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z' }, { type: 'outprobe.io/web', status: 'True', reason: 'ProbeSucceeded', message: over.message ?? 'Readiness probe of container web succeeded' }],
      containerStatuses: [{ name: 'web', containerID: over.containerID ?? `containerd://c${i}`, restartCount: 0, started: true, ready: over.ready ?? true, state: { running: { startedAt: '2026-01-01T00:00:00Z' } } }],
    },
  } as unknown as Raw);

  it('pods of one template share their labels, containers and gates, on any node', () => {
    const a = projectPod(raw(1));
    const b = projectPod(raw(2, { node: 'n2' }));
    assert.equal(a.labels, b.labels);
    assert.equal(a.containers, b.containers);
    assert.equal(a.readinessGates, b.readinessGates);
    assert.equal(a.conditions[0], b.conditions[0]);
    assert.equal(b.nodeName, 'n2');
    assert.deepEqual({ ...a.labels }, { app: 'web', 'pod-template-hash': 'abc' });
    assert.equal(a.key, 'shop/pod-1');
  });

  it('a different spec or label set is not shared', () => {
    const a = projectPod(raw(1));
    const b = projectPod(raw(2, { env: [{ name: 'MODE', value: 'dev' }], labels: { app: 'web', 'pod-template-hash': 'xyz' } }));
    assert.notEqual(a.containers, b.containers);
    assert.equal(b.containers[0]?.env['MODE'], 'dev');
    assert.notEqual(a.labels, b.labels);
    assert.equal(b.labels['pod-template-hash'], 'xyz');
  });

  it('keeps what did not change from the previous projection of the same pod, and takes what changed', () => {
    const v1 = projectPod(raw(1));
    const v2 = projectPod(raw(1), v1);
    assert.equal(v2.containerStatuses, v1.containerStatuses);
    assert.equal(v2.conditions, v1.conditions);
    assert.equal(v2.key, v1.key);
    const v3 = projectPod(raw(1, { containerID: 'containerd://new', ready: false }), v2);
    assert.notEqual(v3.containerStatuses, v2.containerStatuses);
    assert.equal(v3.containerStatuses[0]?.containerId, 'containerd://new');
    assert.equal(v3.containerStatuses[0].ready, false);
    assert.equal(v2.containerStatuses[0]?.ready, true);
  });

  it('lends nothing from another pod given as previous', () => {
    const other = projectPod(raw(7));
    const p = projectPod(raw(1), other);
    assert.equal(p.key, 'shop/pod-1');
    assert.equal(p.uid, 'uid-1');
    assert.equal(p.podIP, '10.0.0.1');
    assert.equal(p.containerStatuses[0]?.containerId, 'containerd://c1');
  });

  it('reads hostile labels and env as data: prototype keys are plain keys, wrong types are dropped, shared objects cannot be changed', () => {
    const labels = JSON.parse('{"__proto__":"x","constructor":"y","n":1,"ok":"z","nil":null}') as unknown;
    const env = [{ name: '__proto__', value: 'p' }, { name: 'N', value: 3 }, 'junk', { value: 'no name' }, { name: 'toString', value: 't' }];
    const p = projectPod(raw(1, { labels, env }));
    assert.deepEqual(Object.keys(p.labels).sort(), ['__proto__', 'constructor', 'ok']);
    assert.equal(p.labels['__proto__'], 'x');
    assert.equal(Object.getPrototypeOf(p.labels), null);
    assert.deepEqual(Object.keys(p.containers[0]?.env ?? {}).sort(), ['__proto__', 'toString']);
    assert.equal(Object.getPrototypeOf(p.containers[0]?.env), null);
    assert.throws(() => {
      (p.labels as Record<string, string>)['ok'] = 'changed';
    }, TypeError);
    // Labels given as an array, a string or null are no labels.
    for (const bad of [['a'], 'app=web', null, 5]) assert.deepEqual({ ...projectPod(raw(2, { labels: bad })).labels }, {});
    assert.deepEqual({ ...projectPod(raw(3, { env: 'MODE=prod' })).containers[0]?.env }, {});
  });

  it('reads wrong types in status as absent, as before', () => {
    const p = projectPod({ metadata: { uid: 5, name: ['x'], namespace: 'n' }, spec: { containers: 'web', readinessGates: [{ conditionType: 3 }, null] }, status: { conditions: [null, { type: 1, status: 'yes' }], containerStatuses: [{ name: 'c', restartCount: 'many', state: [] }], podIP: 7 } } as unknown as Raw);
    assert.equal(p.uid, '');
    assert.equal(p.name, '');
    assert.deepEqual(p.containers, []);
    assert.deepEqual(p.readinessGates, []);
    assert.deepEqual(p.conditions.map((c) => [c.type, c.status]), [['', 'Unknown'], ['', 'Unknown']]);
    assert.equal(p.containerStatuses[0]?.restartCount, 0);
    assert.equal(p.podIP, undefined);
  });

  it('keeps its caches bounded whatever the pods carry', () => {
    for (let i = 0; i < 20_000; i++) projectPod(raw(i, { labels: { app: `a-${i}` }, env: [{ name: 'ID', value: `v-${i}` }], message: `m-${i}` }));
    const sizes = projectionCacheSizes();
    assert.ok(sizes.labelSets <= 8192, JSON.stringify(sizes));
    assert.ok(sizes.specParts <= 4096, JSON.stringify(sizes));
    assert.ok(sizes.conditions <= 16_384, JSON.stringify(sizes));
    assert.ok(sizes.strings <= 32_768, JSON.stringify(sizes));
  });
});
