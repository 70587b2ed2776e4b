import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { reporter } from '../../../src/controller/index.ts';
import { reflectorEvent } from '../../../src/controller/events.ts';
import type { ControllerEvent } from '../../../src/controller/events.ts';
import { Metrics } from '../../../src/observability/index.ts';
import type { EventRecorder, LogFields, Logger } from '../../../src/observability/index.ts';
import type { Pod } from '../../../src/kube/index.ts';
import { failure, voided } from '../../../src/probing/index.ts';

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

describe('reporter: transitions', () => {
  it('a verdict is logged at info; a new instance\'s initial value at debug', () => {
    const lines: string[] = [];
    const log: Logger = {
      error: () => undefined, warn: () => undefined,
      info: (msg, f) => lines.push(`info ${msg} ${String(f?.['cause'])} ${String(f?.['to'])}`),
      debug: (msg, f) => lines.push(`debug ${msg} ${String(f?.['cause'])} ${String(f?.['to'])}`),
      child: () => log,
    };
    const report = reporter({ log, metrics: new Metrics({ defaultMetrics: false }), events: { record: () => undefined } as unknown as EventRecorder });
    const target = { policy: 'shop/web', container: 'app', kind: 'readiness' } as unknown as Extract<ControllerEvent, { type: 'transition' }>['target'];
    const pod = { namespace: 'shop', name: 'web-1', uid: 'u-1' } as unknown as Pod;
    const at = (cause: 'initial' | 'probe', from: 'success' | 'failure' | null, to: 'success' | 'failure'): ControllerEvent =>
      ({ type: 'transition', target, pod, observe: false, transition: { key: 'k', kind: 'readiness', from, to, cause, output: '', at: 0, instance: null } } as unknown as ControllerEvent);
    report(at('initial', null, 'failure'));
    report(at('probe', 'failure', 'success'));
    report(at('probe', 'success', 'failure'));
    assert.deepEqual(lines, ['debug transition initial failure', 'info transition probe success', 'info transition probe failure']);
  });
});

describe('reporter: gate changes', () => {
  it('a written gate is a ReadinessGateChanged Event on the pod, folded into a ReadinessGateChangesFolded summary on its policy when it cannot be sent', () => {
    const calls: unknown[][] = [];
    const quiet: Logger = { error: () => undefined, warn: () => undefined, info: () => undefined, debug: () => undefined, child: () => quiet };
    const recorder = { record: (...args: unknown[]) => calls.push(args) } as unknown as EventRecorder;
    const report = reporter({ log: quiet, metrics: new Metrics({ defaultMetrics: false }), events: recorder });
    const condition = { type: 'outprobe.io/web', status: 'True' as const, reason: 'ProbeSucceeded', message: '', lastTransitionTime: '2026-11-25T09:00:00Z', lastProbeTime: '2026-11-25T09:00:00Z' };
    report({ type: 'gate-write', pod: { namespace: 'shop', name: 'web-1', uid: 'u-1' }, condition, result: 'written', policy: { namespace: 'shop', name: 'web', uid: 'p-1' } });
    assert.deepEqual(calls, [[
      { kind: 'Pod', apiVersion: 'v1', namespace: 'shop', name: 'web-1', uid: 'u-1' }, 'Normal', 'ReadinessGateChanged', 'Set condition outprobe.io/web to True: ',
      { into: { kind: 'ProbePolicy', apiVersion: 'outprobe.io/v1alpha1', namespace: 'shop', name: 'web', uid: 'p-1' }, reason: 'ReadinessGateChangesFolded', what: 'gate changes' },
    ]]);
  });

  it('a written False is logged at info with its delay from the verdict and fills the delay histogram by status; a True stays at debug', async () => {
    const lines: { level: string; msg: string; fields: LogFields | undefined }[] = [];
    const log: Logger = {
      error: () => undefined, warn: () => undefined,
      info: (msg, fields) => lines.push({ level: 'info', msg, fields }),
      debug: (msg, fields) => lines.push({ level: 'debug', msg, fields }),
      child: () => log,
    };
    const metrics = new Metrics({ defaultMetrics: false });
    const report = reporter({ log, metrics, events: { record: () => undefined } as unknown as EventRecorder });
    const pod = { namespace: 'shop', name: 'web-1', uid: 'u-1' };
    const base = { type: 'outprobe.io/web', lastTransitionTime: '2026-11-25T09:00:00Z', lastProbeTime: '2026-11-25T09:00:00Z' };
    report({ type: 'gate-write', pod, condition: { ...base, status: 'False', reason: 'ProbeFailed', message: 'HTTP probe failed with statuscode: 503' }, result: 'written', timing: { sinceDesiredMs: 700, requestMs: 300 } });
    report({ type: 'gate-write', pod, condition: { ...base, status: 'True', reason: 'ProbeSucceeded', message: '' }, result: 'written', timing: { sinceDesiredMs: 40_000, requestMs: 200 } });
    report({ type: 'gate-write', pod, condition: { ...base, status: 'True', reason: 'ProbeSucceeded', message: '' }, result: 'failed', error: new Error('boom'), timing: { sinceDesiredMs: 5, requestMs: 5 } });
    assert.deepEqual(lines.filter((l) => l.msg === 'gate written').map((l) => [l.level, l.fields?.['status'], l.fields?.['sinceDesiredSeconds'], l.fields?.['requestSeconds']]), [
      ['info', 'False', 0.7, 0.3],
      ['debug', 'True', 40, 0.2],
    ]);
    const text = await metrics.text();
    assert.ok(text.includes('outprobe_gate_write_delay_seconds_bucket{le="0.75",status="False"} 1'), text);
    assert.ok(text.includes('outprobe_gate_write_delay_seconds_bucket{le="0.5",status="False"} 0'));
    assert.ok(text.includes('outprobe_gate_write_delay_seconds_sum{status="True"} 40'), 'a failed write is not a delay');
    assert.ok(text.includes('outprobe_gate_write_delay_seconds_count{status="True"} 1'));
  });
});

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

  it('a voided attempt counts in outprobe_probes_voided_total and a debug line, and a voided pass raises no Event', async () => {
    const metrics = new Metrics({ defaultMetrics: false });
    const debug: string[] = [];
    const events: string[] = [];
    const log: Logger = { error: () => undefined, warn: () => undefined, info: () => undefined, debug: (m) => debug.push(m), child: () => log };
    const report = reporter({ log, metrics, events: { record: (_o: unknown, _t: string, reason: string) => events.push(reason) } as unknown as EventRecorder });
    const target = {
      key: 'shop/web/u1/web/readiness', policy: 'shop/web', podKey: 'shop/web-1', podUid: 'u1', kind: 'readiness' as const, container: 'web', conditionType: 'outprobe.io/web',
      probe: { handler: { type: 'tcpSocket' as const, port: 8080 }, initialDelaySeconds: 0, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3, terminationGracePeriodSeconds: null },
    };
    const pod = { namespace: 'shop', name: 'web-1', uid: 'u1' } as unknown as Pod;
    const note = { cause: 'loop-stall' as const, stallMs: 3_000, boundMs: 500, failure: 'dial tcp 10.0.0.5:8080: i/o timeout' };
    report({ type: 'probe-voided', target, pod, note });
    report({ type: 'probe-voided', target, pod, note });
    report({ type: 'probe', target, pod, outcome: voided(note), durationMs: 3_000, observe: false });
    const text = await metrics.text();
    assert.ok(text.includes('outprobe_probes_voided_total{namespace="shop",policy="shop/web",kind="readiness"} 2'));
    assert.ok(text.includes('outprobe_probes_total{namespace="shop",policy="shop/web",kind="readiness",result="voided"} 1'));
    assert.equal(debug.length, 2);
    assert.deepEqual(events, []);
    report({ type: 'probe', target, pod, outcome: failure('dial tcp 10.0.0.5:8080: i/o timeout'), durationMs: 1_000, observe: false });
    assert.deepEqual(events, ['Unhealthy']);
    metrics.forgetPolicy('shop/web');
    assert.ok(!(await metrics.text()).includes('outprobe_probes_voided_total{'));
  });
});
