import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { instanceOf, isNewInstance, sameInstance } from '../../../src/results/index.ts';
import { running } from './support.ts';

void describe('container instance identity', () => {
  const a0 = { containerId: 'containerd://a', restartCount: 0 };

  void it('anything is new after nothing', () => {
    assert.equal(isNewInstance(null, a0), true);
  });

  void it('a new container ID is a new instance, whatever the restart count', () => {
    assert.equal(isNewInstance(a0, { containerId: 'containerd://b', restartCount: 0 }), true);
  });

  void it('a higher restart count under the same ID is a new instance; equal or lower is not', () => {
    assert.equal(isNewInstance(a0, { ...a0, restartCount: 1 }), true);
    assert.equal(isNewInstance(a0, a0), false);
    assert.equal(isNewInstance({ ...a0, restartCount: 2 }, { ...a0, restartCount: 1 }), false);
  });

  void it('sameInstance compares ID and restart count', () => {
    assert.equal(sameInstance(a0, { ...a0 }), true);
    assert.equal(sameInstance(a0, { ...a0, restartCount: 1 }), false);
    assert.equal(sameInstance(null, null), true);
    assert.equal(sameInstance(a0, null), false);
  });

  void it('instanceOf reads the view; no ID means no instance', () => {
    assert.deepEqual(instanceOf(running({ restartCount: 4 })), { containerId: 'containerd://a', restartCount: 4 });
    assert.equal(instanceOf(running({ containerId: '' })), null);
    assert.equal(instanceOf(running({ containerId: undefined })), null);
    assert.equal(instanceOf(undefined), null);
  });
});
