import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eventBody, eventName, rfc3339, truncateMessage } from '../../../src/observability/index.ts';

// The recorder's HTTP path (create, merge-patch bump, 404 → create) is covered
// by the integration tests against a real kube-apiserver; these cover the
// pure pieces it is built from.
describe('eventName', () => {
  it('is the object name, a dot and 16 hex chars from the random source', () => {
    const values = [0, 0.5, 0.999999999];
    let i = 0;
    const random = (): number => values[i++ % values.length] ?? 0;
    assert.equal(eventName('web-7d9c', random), 'web-7d9c.0000000080000000');
    assert.match(eventName('web-7d9c', random), /^web-7d9c\.[0-9a-f]{16}$/);
  });

  it('stays a valid DNS subdomain for a 253-character object name', () => {
    const name = eventName(`${'a'.repeat(235)}-${'b'.repeat(17)}`, () => 0.25);
    assert.ok(name.length <= 253, String(name.length));
    assert.match(name, /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/);
    assert.ok(!name.includes('-.'));
  });
});

describe('rfc3339', () => {
  it('writes seconds precision in UTC, as metav1.Time does', () => {
    assert.equal(rfc3339(Date.UTC(2025, 5, 1, 12, 30, 45, 999)), '2025-06-01T12:30:45Z');
  });
});

describe('truncateMessage', () => {
  it('keeps messages up to 1024 characters and cuts longer ones to 1024', () => {
    assert.equal(truncateMessage('x'.repeat(1024)).length, 1024);
    const cut = truncateMessage('y'.repeat(5000));
    assert.equal(cut.length, 1024);
    assert.ok(cut.endsWith('...'));
  });
});

describe('eventBody', () => {
  it('is a core/v1 Event naming outprobe as source and reporting component', () => {
    const object = { kind: 'Pod', apiVersion: 'v1', namespace: 'shop', name: 'web-1', uid: 'u-1' } as const;
    const body = eventBody({ name: 'web-1.00000000000000ff', object, type: 'Warning', reason: 'Unhealthy', message: 'Readiness probe failed: HTTP probe failed with statuscode: 503', count: 2, firstMs: Date.UTC(2025, 0, 1), lastMs: Date.UTC(2025, 0, 1, 0, 0, 10) }, 'outprobe-0');
    assert.deepEqual(body, {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'web-1.00000000000000ff', namespace: 'shop' },
      involvedObject: { kind: 'Pod', apiVersion: 'v1', namespace: 'shop', name: 'web-1', uid: 'u-1' },
      type: 'Warning',
      reason: 'Unhealthy',
      message: 'Readiness probe failed: HTTP probe failed with statuscode: 503',
      source: { component: 'outprobe' },
      reportingComponent: 'outprobe.io/controller',
      reportingInstance: 'outprobe-0',
      firstTimestamp: '2025-01-01T00:00:00Z',
      lastTimestamp: '2025-01-01T00:00:10Z',
      count: 2,
    });
  });
});
