// A convergence burst of gate-change Events against a real kube-apiserver
// (issue 18 item 3, ADR 0020): 2,000 pods change their gate at once; the
// recorder writes what its own budget allows and accounts for every other
// one in a ReadinessGateChangesFolded Event on the policy.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { reporter } from '../../src/controller/index.ts';
import { systemClock, systemRandom } from '../../src/kernel/index.ts';
import { KubeClient, fromKubeconfig } from '../../src/kube/index.ts';
import { EventRecorder, Metrics, silentLogger } from '../../src/observability/index.ts';
import { startControlPlane } from '../support/cluster/index.ts';
import type { ControlPlane } from '../support/cluster/index.ts';
import { logsOnFailure } from '../support/replicas/index.ts';

interface CoreEvent {
  readonly reason: string;
  readonly message: string;
  readonly count: number;
  readonly involvedObject: { readonly kind: string; readonly uid: string; readonly name: string };
}

function metricValue(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

describe('a burst of 2,000 gate-change Events against a real kube-apiserver', () => {
  const logs = logsOnFailure('event-burst');
  let cp: ControlPlane;
  let client: KubeClient;
  const ns = `burst-${Date.now().toString(36)}`;
  const pods = 2000;

  logs.setup(async () => {
    cp = await startControlPlane({ log: () => undefined });
    logs.plane(cp);
    client = new KubeClient({ connection: fromKubeconfig(cp.kubeconfigPath), clock: systemClock, random: systemRandom });
    await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  });
  logs.teardown(async () => {
    await client.close();
    await cp.stop();
  });

  it('every pod has its ReadinessGateChanged Event or is counted in the policy\'s ReadinessGateChangesFolded Event, and the dropped counter says how many', async () => {
    const metrics = new Metrics({ defaultMetrics: false });
    const events = new EventRecorder({
      api: client.withRateLimit({ qps: 100, burst: 100 }),
      clock: systemClock, random: systemRandom, logger: silentLogger, metrics, reportingInstance: 'burst-test',
      foldIntervalMs: 3000,
    });
    const report = reporter({ log: silentLogger, metrics, events });
    const policy = { namespace: ns, name: 'web', uid: 'policy-uid-1' };
    const condition = { type: 'outprobe.io/web', status: 'True' as const, reason: 'ProbeSucceeded', message: '', lastTransitionTime: '2026-11-25T09:00:00Z', lastProbeTime: '2026-11-25T09:00:00Z' };
    const started = Date.now();
    for (let i = 0; i < pods; i++) report({ type: 'gate-write', pod: { namespace: ns, name: `web-${i}`, uid: `pod-uid-${i}` }, condition, result: 'written', policy });
    await new Promise((r) => setTimeout(r, 3500)); // the summary falls due while the backlog is still being sent
    await events.flush();
    const drainedMs = Date.now() - started;

    const list = await client.request<{ items: CoreEvent[] }>({ method: 'GET', path: `/api/v1/namespaces/${ns}/events` });
    const podUids = new Set(list.items.filter((e) => e.reason === 'ReadinessGateChanged' && e.involvedObject.kind === 'Pod').map((e) => e.involvedObject.uid));
    const summaries = list.items.filter((e) => e.reason === 'ReadinessGateChangesFolded');
    assert.equal(summaries.length, 1, JSON.stringify(summaries));
    const summary = summaries[0] as CoreEvent;
    assert.deepEqual([summary.involvedObject.kind, summary.involvedObject.name, summary.involvedObject.uid], ['ProbePolicy', 'web', 'policy-uid-1']);
    const m = /^(\d+) gate changes on (\d+) pods were not sent as Events in the last (\d+)s/.exec(summary.message);
    assert.ok(m !== null, summary.message);
    const folded = Number(m[1]);
    const foldedPods = Number(m[2]);
    console.log(`${podUids.size} pods got their Event, ${folded} changes on ${foldedPods} pods folded into "${summary.message}" (all sent ${drainedMs} ms after the burst)`);

    assert.equal(podUids.size + foldedPods, pods, 'every pod accounted for exactly once');
    assert.equal(folded, foldedPods, 'one change per pod in this burst');
    assert.ok(podUids.size >= 1000, `the queue's worth was written: ${podUids.size}`);
    const text = await metrics.text();
    assert.equal(metricValue(text, 'outprobe_events_dropped_total{reason="ReadinessGateChanged",cause="queue_full"}'), folded);
    assert.equal(metricValue(text, 'outprobe_events_folded_total{reason="ReadinessGateChanged"}'), folded);
    assert.equal(metricValue(text, 'outprobe_events_total{result="created"}'), podUids.size + 1);
    assert.equal(metricValue(text, 'outprobe_events_total{result="failed"}'), 0);
    await events.close();
  });
});
