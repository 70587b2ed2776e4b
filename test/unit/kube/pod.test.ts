import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { projectPod } from '../../../src/kube/index.ts';

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
