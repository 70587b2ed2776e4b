// The series the chart's alerts need (docs/adr/0061-alerts.md): outprobe_remediation_halted and
// outprobe_watch_restarts_total, fed by the reporter from the controller's halt and reflector events.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { reporter } from '../../../src/controller/index.ts';
import { reflectorEvent } from '../../../src/controller/events.ts';
import { Metrics } from '../../../src/observability/index.ts';
import type { EventRecorder, Logger } from '../../../src/observability/index.ts';

const quiet: Logger = { error: () => undefined, warn: () => undefined, info: () => undefined, debug: () => undefined, child: () => quiet };
const setup = (): { metrics: Metrics; report: ReturnType<typeof reporter> } => {
  const metrics = new Metrics({ defaultMetrics: false });
  return { metrics, report: reporter({ log: quiet, metrics, events: { record: () => undefined } as unknown as EventRecorder }) };
};
const sample = (text: string, series: string): number | undefined => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

describe('outprobe_remediation_halted', () => {
  it('is 1 while a policy\'s remediation is halted, 0 once it resumes, and gone with the policy', async () => {
    const { metrics, report } = setup();
    const policy = { namespace: 'shop', name: 'web', uid: 'u1' };
    const series = 'outprobe_remediation_halted{namespace="shop",policy="shop/web"}';
    assert.match(await metrics.text(), /^# TYPE outprobe_remediation_halted gauge$/m, 'declared before any halt');
    report({ type: 'halt', policy, halted: true, message: 'Too many pods fail at once: remediation halted' });
    assert.equal(sample(await metrics.text(), series), 1);
    report({ type: 'halt', policy, halted: false, message: 'Remediation resumed' });
    assert.equal(sample(await metrics.text(), series), 0);
    report({ type: 'halt', policy, halted: true, message: 'Too many pods fail at once: remediation halted' });
    report({ type: 'policy-removed', policy });
    assert.equal(sample(await metrics.text(), series), undefined, 'forgotten with the policy');
  });
});

describe('outprobe_watch_restarts_total', () => {
  it('counts each watch restart by resource and reason; a LIST or a watch start is no restart', async () => {
    const { metrics, report } = setup();
    report(reflectorEvent('pods', { kind: 'listed', items: 3, pages: 1, resourceVersion: '1' }));
    report(reflectorEvent('pods', { kind: 'watch-started', resourceVersion: '1' }));
    report(reflectorEvent('pods', { kind: 'watch-ended', reason: 'timeout' }));
    report(reflectorEvent('pods', { kind: 'watch-ended', reason: 'inactive' }));
    report(reflectorEvent('pods', { kind: 'expired', resourceVersion: '1' }));
    report(reflectorEvent('pods', { kind: 'expired', resourceVersion: '2' }));
    report(reflectorEvent('probepolicies', { kind: 'error', error: new Error('connection reset'), retryInMs: 800 }));
    report(reflectorEvent('pods', { kind: 'skipped', object: { namespace: 'a', name: 'b', uid: 'c' }, error: new Error('bad') }));
    const text = await metrics.text();
    const restarts = text.split('\n').filter((l) => l.startsWith('outprobe_watch_restarts_total{')).sort();
    assert.deepEqual(restarts, [
      'outprobe_watch_restarts_total{resource="pods",reason="expired"} 2',
      'outprobe_watch_restarts_total{resource="pods",reason="inactive"} 1',
      'outprobe_watch_restarts_total{resource="pods",reason="timeout"} 1',
      'outprobe_watch_restarts_total{resource="probepolicies",reason="error"} 1',
    ]);
  });
});
