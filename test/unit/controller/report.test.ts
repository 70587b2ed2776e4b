import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { reporter } from '../../../src/controller/index.ts';
import { reflectorEvent } from '../../../src/controller/events.ts';
import type { EventRecorder, LogFields, Logger } from '../../../src/observability/index.ts';
import { Metrics } from '../../../src/observability/index.ts';

describe('reporter: reflector signals', () => {
  it('an object the reflector skipped is a warning with its namespace, name and uid, and a count by resource', async () => {
    const warnings: { msg: string; fields: LogFields | undefined }[] = [];
    const log: Logger = {
      error: () => undefined, info: () => undefined, debug: () => undefined,
      warn: (msg, fields) => warnings.push({ msg, fields }),
      child: () => log,
    };
    const metrics = new Metrics({ defaultMetrics: false });
    const events = { record: () => assert.fail('no Kubernetes Event for a skipped object') } as unknown as EventRecorder;
    const report = reporter({ log, metrics, events });
    const object = { namespace: 'shop', name: 'web-1', uid: 'u-1' };
    report(reflectorEvent('pods', { kind: 'skipped', object, error: new TypeError('spec.containers.map is not a function') }));
    report(reflectorEvent('pods', { kind: 'skipped', object, error: new TypeError('x') }));
    assert.deepEqual(warnings[0], {
      msg: 'pods reflector: skipped an object it cannot read',
      fields: { namespace: 'shop', name: 'web-1', uid: 'u-1', error: 'spec.containers.map is not a function' },
    });
    assert.match(await metrics.text(), /^outprobe_watch_objects_skipped_total\{resource="pods"\} 2$/m);
  });
});
