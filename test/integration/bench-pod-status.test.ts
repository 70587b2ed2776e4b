// bench:scale's fast bring-up (issue 31 item 5, bench/scale-live/pod-status.ts):
// a pod whose Running status the driver writes itself is, to outprobe's
// projection and to the API, the pod kwok's stages make, and kwok leaves it
// alone. Fails when kwok-stages.yaml and runningStatus() drift apart, or when
// kwok stops honouring disregardStatusWithLabelSelector.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { bringUpPods } from '../../bench/scale-live/bring-up.ts';
import { namespaceObject, podRef } from '../../bench/scale-live/fixtures.ts';
import { liveBenchOptions } from '../../bench/scale-live/options.ts';
import { statusLabel, statusLabelValue } from '../../bench/scale-live/pod-status.ts';
import { projectPod } from '../../src/kube/index.ts';
import { startControlPlane } from '../support/cluster/index.ts';
import { logsOnFailure } from '../support/replicas/index.ts';

const logs = logsOnFailure('bench-pod-status');

/** Times, addresses, UIDs and the run's own names masked; conditions by type. */
function normalized(value: unknown, uid: string, ip: string, run: string): unknown {
  const text = JSON.stringify(value)
    .replaceAll(/"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"/g, '"<time>"')
    .replaceAll(/"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z"/g, '"<time>"')
    .replaceAll(uid, '<uid>').replaceAll(ip, '<ip>').replaceAll(`bench-${run}-`, 'bench-<run>-');
  const parsed = JSON.parse(text) as unknown;
  const sortConditions = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sortConditions);
    if (typeof v !== 'object' || v === null) return v;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      out[k] = k === 'conditions' && Array.isArray(x) ? [...(x as { type: string }[])].sort((a, b) => a.type.localeCompare(b.type)).map(sortConditions) : sortConditions(x);
    }
    return out;
  };
  return sortConditions(parsed);
}

void test('a pod run by the driver has the status and the projection of a pod run by kwok, and kwok never writes it', async () => {
  const cp = logs.plane(await startControlPlane({ full: true, network: 'loopback', nodes: 1, kwokOptions: { disregardStatusWithLabelSelector: `${statusLabel}=${statusLabelValue}` } }));
  try {
    const prefix = (cp.podNetwork ?? '').replace(/0\.0\/16$/, '');
    const get = async (run: string): Promise<Record<string, unknown>> => {
      const ref = podRef({ namespaces: 1, policies: 1 }, run, 0);
      return cp.kube.get(`/api/v1/namespaces/${ref.namespace}/pods/${ref.name}`);
    };
    // The driver's pod first: kwok sees it before the other and must leave it alone.
    for (const [run, podStatus] of [['drv', 'bench'], ['kwk', 'kwok']] as const) {
      await cp.kube.create('/api/v1/namespaces', namespaceObject(run, 0));
      const up = await bringUpPods(cp.kube, liveBenchOptions(['--pods', '1', '--policies', '1', '--pod-status', podStatus]), run, 8080, [prefix]);
      assert.equal(up.statusWrites, podStatus === 'bench' ? 1 : 0);
    }
    const driverRv = ((await get('drv'))['metadata'] as { resourceVersion: string }).resourceVersion;
    const running = (p: Record<string, unknown>): boolean =>
      ((p['status'] as { containerStatuses?: { state?: { running?: unknown } }[] } | undefined)?.containerStatuses?.[0]?.state?.running) !== undefined;
    let kwokPod = await get('kwk');
    for (let i = 0; i < 100 && !running(kwokPod); i++) {
      await sleep(100);
      kwokPod = await get('kwk');
    }
    assert.ok(running(kwokPod), `kwok did not run its pod: ${JSON.stringify(kwokPod['status'])}`);
    await sleep(1000); // kwok's stages have delays of 100–300 ms
    const driverPod = await get('drv');
    assert.equal((driverPod['metadata'] as { resourceVersion: string }).resourceVersion, driverRv, 'kwok wrote the driver\'s pod');

    const norm = (p: Record<string, unknown>, run: string): unknown => {
      const meta = p['metadata'] as { uid: string };
      return normalized(p['status'], meta.uid, (p['status'] as { podIP: string }).podIP, run);
    };
    assert.deepEqual(norm(driverPod, 'drv'), norm(kwokPod, 'kwk'));

    // What outprobe makes of either pod (src/kube/pod.ts), apart from names, UIDs, addresses and times.
    const projected = (p: Record<string, unknown>, run: string): unknown => {
      const meta = p['metadata'] as { uid: string };
      const view = projectPod(p);
      // The driver's pod carries the label kwok disregards; startedAt is a time (ms) of its own.
      const rest = { ...view, labels: {}, resourceVersion: '', containerStatuses: view.containerStatuses.map((c) => ({ ...c, startedAt: c.startedAt === undefined ? 'none' : 'set' })) };
      return normalized(rest, meta.uid, (p['status'] as { podIP: string }).podIP, run);
    };
    assert.deepEqual(projected(driverPod, 'drv'), projected(kwokPod, 'kwk'));
  } finally {
    await cp.stop();
  }
});
