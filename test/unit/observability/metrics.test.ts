import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Metrics } from '../../../src/observability/index.ts';

function populated(): Metrics {
  const m = new Metrics({ defaultMetrics: false });
  m.recordProbe({ policy: 'ns/web', kind: 'readiness', handler: 'httpGet', result: 'failure', durationSeconds: 0.012 });
  m.recordProbe({ policy: 'ns/api', kind: 'liveness', handler: 'tcpSocket', result: 'success', durationSeconds: 0.002 });
  m.recordTransition({ policy: 'ns/web', kind: 'readiness', to: 'failure' });
  m.recordRemediation({ policy: 'ns/web', action: 'Evict', result: 'evicted' });
  m.setProbeErrors('ns/web', 2);
  return m;
}

describe('Metrics', () => {
  it('exposes every series under the outprobe_ prefix', async () => {
    const m = populated();
    m.observeSchedulerLag(0.004);
    m.setTargets({ readiness: 3, liveness: 1 });
    m.setOwnedTargets(4);
    m.setUnownedPods(1);
    m.setShardMembers(2);
    m.recordApiRequest({ verb: 'PATCH', resource: 'pods/status', status: 200, durationMs: 15 });
    m.recordApiRequest({ verb: 'GET', resource: 'pods', status: 0, durationMs: 3 });
    m.recordGateWrite('written');
    m.setPolicies({ valid: 2, invalid: 1 });
    m.recordEvent('bumped');
    m.recordEventDropped('ReadinessGateChanged', 'queue_full');
    m.recordEventFolded('ReadinessGateChanged');
    const text = await m.text();
    for (const line of [
      'outprobe_probes_total{namespace="ns",policy="ns/web",kind="readiness",result="failure"} 1',
      'outprobe_probe_duration_seconds_bucket{le="0.025",kind="readiness",handler="httpGet"} 1',
      'outprobe_probe_duration_seconds_bucket{le="0.01",kind="readiness",handler="httpGet"} 0',
      'outprobe_scheduler_lag_seconds_count 1',
      'outprobe_targets{kind="readiness"} 3',
      'outprobe_targets{kind="startup"} 0',
      'outprobe_owned_targets 4',
      'outprobe_unowned_pods 1',
      'outprobe_shard_members 2',
      'outprobe_api_requests_total{verb="PATCH",resource="pods/status",code="200"} 1',
      'outprobe_api_requests_total{verb="GET",resource="pods",code="<error>"} 1',
      'outprobe_api_request_duration_seconds_sum{verb="PATCH",resource="pods/status"} 0.015',
      'outprobe_gate_writes_total{result="written"} 1',
      'outprobe_remediations_total{namespace="ns",policy="ns/web",action="evict",result="evicted"} 1',
      'outprobe_transitions_total{namespace="ns",policy="ns/web",kind="readiness",to="failure"} 1',
      'outprobe_probe_errors{namespace="ns",policy="ns/web"} 2',
      'outprobe_policies{state="invalid"} 1',
      'outprobe_events_total{result="bumped"} 1',
      'outprobe_events_dropped_total{reason="ReadinessGateChanged",cause="queue_full"} 1',
      'outprobe_events_folded_total{reason="ReadinessGateChanged"} 1',
    ]) assert.ok(text.includes(line), `missing ${line}`);
  });

  it('forgetPolicy deletes that policy’s series and keeps the others', async () => {
    const m = populated();
    m.forgetPolicy('ns/web');
    const text = await m.text();
    assert.ok(!text.includes('ns/web'), text);
    assert.ok(text.includes('outprobe_probes_total{namespace="ns",policy="ns/api",kind="liveness",result="success"} 1'));
    m.forgetPolicy('ns/unknown');
    m.recordProbe({ policy: 'ns/web', kind: 'readiness', handler: 'grpc', result: 'errored', durationSeconds: 1 });
    assert.ok((await m.text()).includes('outprobe_probes_total{namespace="ns",policy="ns/web",kind="readiness",result="errored"} 1'));
  });

  it('a probe series recorded again after forgetPolicy counts from 0 in a new series (the cached series went with the policy)', async () => {
    const m = new Metrics();
    const probe = { policy: 'ns/web', kind: 'readiness', handler: 'httpGet', result: 'success', durationSeconds: 0.01 } as const;
    m.recordProbe(probe);
    m.recordProbe(probe);
    assert.ok((await m.text()).includes('outprobe_probes_total{namespace="ns",policy="ns/web",kind="readiness",result="success"} 2'));
    m.forgetPolicy('ns/web');
    assert.ok(!(await m.text()).includes('outprobe_probes_total{namespace="ns",policy="ns/web"'));
    m.recordProbe(probe);
    const text = await m.text();
    assert.ok(text.includes('outprobe_probes_total{namespace="ns",policy="ns/web",kind="readiness",result="success"} 1'), text);
    assert.ok(text.includes('outprobe_probe_duration_seconds_count{kind="readiness",handler="httpGet"} 3'), text);
  });

  it('uses a registry of its own, with the default process metrics in it', async () => {
    const a = new Metrics();
    const b = new Metrics();
    a.recordGateWrite('failed');
    const [ta, tb] = await Promise.all([a.text(), b.text()]);
    assert.ok(ta.includes('process_cpu_user_seconds_total'));
    assert.ok(ta.includes('outprobe_gate_writes_total{result="failed"} 1'));
    assert.ok(!tb.includes('outprobe_gate_writes_total{result="failed"}'));
    assert.match(a.contentType, /^text\/plain/);
  });

  it('schedule lag by namespace and policy, and probes in flight by namespace', async () => {
    const m = populated();
    m.observeScheduleLag('ns', 'ns/web', 0.003);
    m.observeScheduleLag('ns', 'ns/web', 12);
    m.observeScheduleLag('other', 'other/api', -0.001); // a pass started before its due time counts as 0
    m.setProbesInFlight(new Map([['ns', 7], ['other', 1]]));
    let text = await m.text();
    for (const line of [
      'outprobe_probe_schedule_lag_seconds_bucket{le="0.005",namespace="ns",policy="ns/web"} 1',
      'outprobe_probe_schedule_lag_seconds_bucket{le="30",namespace="ns",policy="ns/web"} 2',
      'outprobe_probe_schedule_lag_seconds_count{namespace="ns",policy="ns/web"} 2',
      'outprobe_probe_schedule_lag_seconds_sum{namespace="other",policy="other/api"} 0',
      'outprobe_probes_in_flight{namespace="ns"} 7',
      'outprobe_probes_in_flight{namespace="other"} 1',
    ]) assert.ok(text.includes(line), `missing ${line}\n${text}`);
    m.setProbesInFlight(new Map([['ns', 2]]));
    m.forgetPolicy('ns/web');
    text = await m.text();
    assert.ok(!text.includes('namespace="other"}') && !text.includes('policy="ns/web"'), 'an idle namespace and a deleted policy lose their series');
    assert.ok(text.includes('outprobe_probes_in_flight{namespace="ns"} 2'));
    m.observeScheduleLag('ns', 'ns/web', 0.5); // a policy of the same name, created again
    assert.ok((await m.text()).includes('outprobe_probe_schedule_lag_seconds_count{namespace="ns",policy="ns/web"} 1'));
  });
});

describe('Metrics: one labelling convention (ADR 0062)', () => {
  it('every series labelled with a policy also carries its namespace, and policy is <namespace>/<name>', async () => {
    const m = populated();
    m.observeScheduleLag('shop', 'shop/web', 0.1);
    m.recordProbeVoided({ namespace: 'shop', policy: 'shop/web', kind: 'readiness' });
    m.setReadinessPanic({ namespace: 'shop', policy: 'shop/web', panic: true, held: 1, failedOpen: 2 });
    m.setDivergentPods('shop', 'shop/web', 1);
    m.setNoVantagePods('shop', 'shop/web', 1);
    m.alerts.setRemediationHalted('shop', 'shop/web', true);
    const text = await m.text();
    const labelled = text.split('\n').filter((l) => !l.startsWith('#') && l.includes('policy="'));
    const families = new Set(labelled.map((l) => l.slice(0, l.indexOf('{')).replace(/_(bucket|sum|count)$/, '')));
    assert.ok(families.size >= 11, [...families].join(' '));
    const wrong = labelled.filter((l) => {
      const ns = /[{,]namespace="([^"]*)"/.exec(l)?.[1];
      const policy = /[{,]policy="([^"]*)"/.exec(l)?.[1];
      return ns === undefined || policy === undefined || !policy.startsWith(`${ns}/`) || ns === '';
    });
    assert.deepEqual(wrong, []);
  });
});
