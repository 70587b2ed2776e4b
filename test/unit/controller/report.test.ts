import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { reporter } from '../../../src/controller/index.ts';
import { Metrics } from '../../../src/observability/index.ts';
import type { EventRecorder, Logger } from '../../../src/observability/index.ts';

describe('reporter', () => {
  it('is a ProbeTimeoutCapped Warning Event on the ProbePolicy and a warning log line', () => {
    const events: string[][] = [];
    const warnings: string[] = [];
    const log: Logger = {
      error: () => undefined,
      warn: (m) => {
        warnings.push(m);
      },
      info: () => undefined,
      debug: () => undefined,
      child: () => log,
    };
    const recorder = { record: (o: { kind: string; name: string }, type: string, reason: string, message: string) => events.push([o.kind, o.name, type, reason, message]) } as unknown as EventRecorder;
    const report = reporter({ log, metrics: new Metrics({ defaultMetrics: false }), events: recorder });
    report({
      type: 'policy-timeout-capped',
      policy: { namespace: 'noisy', name: 'slow', uid: 'u1' },
      capped: [{ kind: 'readiness', requestedSeconds: 3600, appliedSeconds: 60 }],
    });
    const message = "readiness probe timeoutSeconds 3600 runs with 60: above the controller's maximum probe timeout (--max-probe-timeout)";
    assert.deepEqual(events, [['ProbePolicy', 'slow', 'Warning', 'ProbeTimeoutCapped', message]]);
    assert.deepEqual(warnings, [message]);
  });

  it('a pass start feeds the schedule-lag histogram of its namespace and policy', async () => {
    const metrics = new Metrics({ defaultMetrics: false });
    const quiet: Logger = { error: () => undefined, warn: () => undefined, info: () => undefined, debug: () => undefined, child: () => quiet };
    const report = reporter({ log: quiet, metrics, events: { record: () => undefined } as unknown as EventRecorder });
    report({ type: 'pass-start', namespace: 'shop', policy: 'shop/web', lagMs: 1_500 });
    assert.ok((await metrics.text()).includes('outprobe_probe_schedule_lag_seconds_sum{namespace="shop",policy="shop/web"} 1.5'));
  });
});
