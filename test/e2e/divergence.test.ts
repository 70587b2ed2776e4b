// The divergence view (issue 15, ADR 0023) end to end on the pod network: a pod
// its own node still reaches (the node agent keeps ContainersReady True) but
// outprobe, on another node, cannot. An Observe-mode fromContainer policy
// writes nothing to the pods, yet counts the pod as diverged in its status and
// says so in a ReachabilityDiverged Event on the pod; healed, the count goes
// back to 0. (The world's own Enforce policy gates the pods as in partition.test.ts.)
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { podNetSupport } from '../support/podnet/index.ts';
import { logsOnFailure } from '../support/replicas/index.ts';
import { startPartitionWorld } from '../support/partition/index.ts';
import type { World } from '../support/partition/index.ts';

const support = podNetSupport();
const skip = support.ok ? false : `needs the pod network: ${support.why}`;
const OBSERVE_TYPE = 'outprobe.io/observe';

interface Ev { reason: string; message: string; type: string; involvedObject: { kind: string; name: string } }

describe('divergence: a cut-off pod the node calls ready is counted and reported by an Observe-mode fromContainer policy', { skip, timeout: 300_000 }, () => {
  const logs = logsOnFailure('divergence');
  let world: World;
  const policyPath = (): string => `/apis/outprobe.io/v1alpha1/namespaces/${world.namespace}/probepolicies/observe`;
  const status = async (): Promise<Record<string, unknown>> => ((await world.cp.kube.get(policyPath()))['status'] ?? {}) as Record<string, unknown>;
  const until = async <T>(what: string, fn: () => Promise<T | undefined>, ms = 30_000): Promise<T> => {
    const deadline = Date.now() + ms;
    for (;;) {
      const v = await fn();
      if (v !== undefined) return v;
      if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
      await sleep(200);
    }
  };
  const events = async (): Promise<Ev[]> => (await world.cp.kube.get(`/api/v1/namespaces/${world.namespace}/events`))['items'] as Ev[];

  logs.setup(async () => {
    world = await startPartitionWorld({ log: (m) => { process.stderr.write(`# ${m}\n`); }, record: logs.record });
    logs.plane(world.cp);
    logs.subjects(...world.pods.map((p) => p.name), 'web');
    // The pods' own readinessProbe (httpGet /healthz, period 1 s, failureThreshold 3), run from outprobe's node.
    await world.cp.kube.create(`/apis/outprobe.io/v1alpha1/namespaces/${world.namespace}/probepolicies`, {
      apiVersion: 'outprobe.io/v1alpha1', kind: 'ProbePolicy', metadata: { name: 'observe', namespace: world.namespace },
      spec: { selector: { matchLabels: { app: 'web' } }, mode: 'Observe', readiness: { conditionType: OBSERVE_TYPE, probe: { fromContainer: 'readinessProbe' } } },
    });
    await until('the Observe policy sees 3 pods, none diverged', async () => {
      const s = await status();
      return s['pods'] === 3 && s['diverged'] === 0 ? true : undefined;
    });
  });

  logs.teardown(async () => {
    await world.stop();
  });

  it('cut: diverged 1 and a ReachabilityDiverged Event with both views; healed: 0', async () => {
    const victim = world.pods[1];
    assert.ok(victim !== undefined);
    const cutAt = Date.now();
    const { result, heal } = await world.cut(victim);
    assert.equal(result.containersReadyDuringCut, 'True', 'the pod\'s own node still calls its container ready');
    await until('status.diverged 1', async () => ((await status())['diverged'] === 1 ? true : undefined));
    const took = Date.now() - cutAt;
    process.stderr.write(`# diverged counted ${took} ms after the cut began\n`);
    const ev = await until('ReachabilityDiverged Event on the victim', async () => (await events()).find((e) => e.reason === 'ReachabilityDiverged' && e.involvedObject.name === victim.name && e.message.startsWith('ProbePolicy observe')));
    assert.equal(ev.type, 'Warning');
    assert.match(ev.message, /^ProbePolicy observe, container web: node says ready \(ContainersReady=True\), outprobe's readiness probe fails from replica outprobe-0: /);
    // Observe mode: nothing written to the pods.
    const pod = await world.cp.kube.get(`/api/v1/namespaces/${world.namespace}/pods/${victim.name}`);
    const conds = ((pod['status'] as { conditions?: { type: string }[] }).conditions ?? []).map((c) => c.type);
    assert.ok(!conds.includes(OBSERVE_TYPE), 'the Observe policy wrote no condition');

    await heal();
    await until('status.diverged 0 after the heal', async () => ((await status())['diverged'] === 0 ? true : undefined));
    const diverged = (await events()).filter((e) => e.reason === 'ReachabilityDiverged' && e.involvedObject.name === victim.name && e.message.startsWith('ProbePolicy observe'));
    assert.equal(diverged.length, 1, 'one Event for the one transition into divergence');
  });
});
