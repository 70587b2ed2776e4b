// The panic threshold on the pod network (issue 13): when outprobe itself is cut off
// from every pod, or when every pod of a policy fails at once (a shared dependency),
// outprobe never holds more than readiness.maxUnreadyPercent (default 50) of the
// policy's gated pods False: with 3 pods, at most 1. The policy shows ReadinessPanic;
// healed, every gate returns to True and the panic ends.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { podNetSupport } from '../support/podnet/index.ts';
import { logsOnFailure } from '../support/replicas/index.ts';
import { startPartitionWorld } from '../support/partition/index.ts';
import type { World } from '../support/partition/index.ts';

const support = podNetSupport();
const skip = support.ok ? false : `needs the pod network: ${support.why}`;

interface Cond { type: string; status: string; reason?: string; message?: string }

describe('panic threshold: outprobe fails open when it, or a shared dependency, fails every pod at once', { skip, timeout: 300_000 }, () => {
  const logs = logsOnFailure('panic');
  let world: World;
  const panic = async (): Promise<Cond | undefined> => {
    const p = await world.cp.kube.get(`/apis/outprobe.io/v1alpha1/namespaces/${world.namespace}/probepolicies/web`);
    return ((p['status'] as { conditions?: Cond[] } | undefined)?.conditions ?? []).find((c) => c.type === 'ReadinessPanic');
  };
  const falseGates = (): number => world.pods.filter((p) => world.timeline.value(p.ip, 'gate') === 'False').length;
  /** Samples the gates every 50 ms for `ms`; returns the most seen False at once. */
  const watchMaxFalse = async (ms: number): Promise<number> => {
    let most = 0;
    const end = Date.now() + ms;
    while (Date.now() < end) {
      most = Math.max(most, falseGates());
      await sleep(50);
    }
    return most;
  };
  const waitFor = async <T>(what: string, fn: () => Promise<T | undefined>, ms: number): Promise<T> => {
    const end = Date.now() + ms;
    for (;;) {
      const v = await fn();
      if (v !== undefined) return v;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await sleep(100);
    }
  };
  const allTrueAgain = async (): Promise<void> => {
    await waitFor('every gate True and the panic over', async () => {
      const c = await panic();
      return world.pods.every((p) => world.timeline.value(p.ip, 'gate') === 'True') && c?.status === 'False' ? true : undefined;
    }, 30_000);
  };

  logs.setup(async () => {
    world = await startPartitionWorld({ log: (m) => { process.stderr.write(`# ${m}\n`); }, record: logs.record });
    logs.plane(world.cp);
    logs.subjects(...world.pods.map((p) => p.name), 'web');
  });
  logs.teardown(async () => {
    await world.stop();
  });

  it('outprobe cut off from every pod (not from the API server): at most 1 of 3 gates False, ReadinessPanic True; healed, all True', async () => {
    const fault = await world.net.faults.isolateFromPods(world.outprobe.sandbox.ip);
    try {
      // Panic starts as soon as the second pod fails (2 > 1); wait until the third has failed too.
      const c = await waitFor('ReadinessPanic True with every pod failing', async () => {
        const x = await panic();
        return x?.status === 'True' && /^3 of 3 /.test(x.message ?? '') ? x : undefined;
      }, 20_000);
      process.stderr.write(`# ReadinessPanic: ${c.message ?? ''}\n`);
      assert.equal(c.reason, 'FailingOpen');
      assert.match(c.message ?? '', /3 of 3 gated pods fail readiness; at most 50% \(1\) may be held unready/);
      const most = await watchMaxFalse(5000);
      assert.ok(most <= 1, `${most} gates False at once`);
      assert.ok(world.pods.filter((p) => world.timeline.value(p.ip, 'gate') === 'True').length >= 2, 'two pods kept ready');
      // The Service keeps serving: the client (on node 0, not cut) still reaches at least two pods.
      const recent = world.client.since(Date.now() - 2000);
      assert.ok(new Set(recent.filter((h) => h.err === undefined).map((h) => h.pod)).size >= 2, 'the Service still answers from two pods');
    } finally {
      await fault.heal(); // a failed assertion must not leave the next test cut off
    }
    await allTrueAgain();
  });

  it('every pod failing at once (a shared dependency down): at most 1 of 3 gates False; recovered, all True', async () => {
    const t0 = Date.now();
    for (const p of world.pods) await world.workloads.setHealthy(p.name, false);
    await waitFor('ReadinessPanic True', async () => ((await panic())?.status === 'True' ? true : undefined), 20_000);
    const most = await watchMaxFalse(5000);
    assert.ok(most <= 1, `${most} gates False at once`);
    assert.ok(world.timeline.changes.filter((ch) => ch.signal === 'gate' && ch.t >= t0 && ch.value === 'False').length >= 1, 'the oldest failure is held unready');
    for (const p of world.pods) await world.workloads.setHealthy(p.name, true);
    await allTrueAgain();
  });
});
