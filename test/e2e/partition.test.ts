// The situation outprobe exists for (issue 12), end to end on the pod network: a pod
// its own node can reach but the other nodes cannot. Its node still calls it healthy
// (the node agent's own readinessProbe keeps ContainersReady True), outprobe on
// another node turns its gate False, the node agent folds that into Ready=False, the
// EndpointSlice marks it not ready, kube-proxy on the client's node stops routing to
// it, and the client's requests to the ClusterIP all land on the other pods. Healed,
// it comes back the same way.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { podNetSupport } from '../support/podnet/index.ts';
import { logsOnFailure } from '../support/replicas/index.ts';
import { breakdown, GATE, startPartitionWorld } from '../support/partition/index.ts';
import type { World } from '../support/partition/index.ts';

const support = podNetSupport();
const skip = support.ok ? false : `needs the pod network: ${support.why}`;

interface Cond { type: string; status: string; reason?: string; message?: string }

describe('partition: a pod cut off from every other node leaves the Service, and returns when healed', { skip, timeout: 300_000 }, () => {
  const logs = logsOnFailure('partition');
  let world: World;
  const conditions = async (name: string): Promise<Map<string, Cond>> => {
    const pod = await world.cp.kube.get(`/api/v1/namespaces/${world.namespace}/pods/${name}`);
    const list = ((pod['status'] as { conditions?: Cond[] } | undefined)?.conditions) ?? [];
    return new Map(list.map((c) => [c.type, c]));
  };

  logs.setup(async () => {
    world = await startPartitionWorld({ log: (m) => { process.stderr.write(`# ${m}\n`); }, record: logs.record });
    logs.plane(world.cp);
    logs.subjects(...world.pods.map((p) => p.name), 'web');
  });

  logs.teardown(async () => {
    await world.stop();
  });

  it('the cut pod stops receiving Service traffic; its own node still calls it ready', async () => {
    const victim = world.pods[1];
    assert.ok(victim !== undefined);
    const others = world.pods.filter((p) => p !== victim).map((p) => `${world.namespace}/${p.name}`);
    const { result, heal } = await world.cut(victim);
    const b = breakdown(result);
    process.stderr.write(`# cut ${victim.name} on ${victim.node}: ${JSON.stringify(b)}\n`);

    // The node-local view and outprobe's view disagree, as in a cluster.
    assert.equal(result.containersReadyDuringCut, 'True', 'the pod\'s own node still calls its container ready');
    const c = await conditions(victim.name);
    assert.equal(c.get('ContainersReady')?.status, 'True');
    assert.equal(c.get(GATE)?.status, 'False');
    assert.equal(c.get(GATE)?.reason, 'ProbeFailed');
    assert.equal(c.get('Ready')?.status, 'False');
    assert.equal(c.get('Ready')?.reason, 'ReadinessGatesNotReady');
    assert.equal(c.get('Ready')?.message, `the status of pod readiness gate "${GATE}" is not "True", but False`);
    // The chain happened in order: detection, gate, Ready, EndpointSlice, kube-proxy.
    assert.ok(Number.isFinite(result.detected), 'outprobe logged the readiness transition to failure');
    assert.ok(result.detected <= result.gate + 50 && result.gate <= result.ready && result.ready <= result.slice + 50, JSON.stringify(result));
    // Detection needs failureThreshold (3) probes at period 1 s, each timing out at 1 s.
    assert.ok(b.detection >= 2000, `detected ${b.detection} ms after the cut: too early for 3 failures at period 1 s`);

    // From kube-proxy's update (plus the client's 500 ms timeout) on, every request lands on another pod.
    const from = result.proxy + 600;
    await sleep(3000);
    const window = world.client.since(from).filter((h) => h.t < from + 2500);
    assert.ok(window.length >= 30, `client made ${window.length} requests in 2.5 s`);
    assert.deepEqual(window.filter((h) => h.err !== undefined || !others.includes(h.pod)), [], 'no request failed or reached the cut pod');
    for (const pod of others) assert.ok(window.some((h) => h.pod === pod), `${pod} still answers`);
    // And while the pod was still in the rules, requests to it did fail: the cut was real.
    assert.ok(result.lastFailedRequest !== undefined, 'requests routed to the cut pod failed before it left the rules');

    const h = await heal();
    process.stderr.write(`# healed: gate True ${h.gate - h.healStart} ms, first answer ${h.firstAnswer - h.healStart} ms after the heal\n`);
    const back = await conditions(victim.name);
    assert.equal(back.get(GATE)?.status, 'True');
    assert.equal(back.get('Ready')?.status, 'True');
    await sleep(1500);
    const after = world.client.since(h.firstAnswer);
    assert.deepEqual(after.filter((x) => x.err !== undefined), [], 'no request failed after the heal');
    assert.ok(after.some((x) => x.pod === `${world.namespace}/${victim.name}`), 'the healed pod answers again');
  });

  it('the cut pod\'s own node never changes its ContainersReady during a cut (the kubelet alone would keep it in the Service)', async () => {
    // The node agent's view of the cut pod: probes from its own node keep passing for the whole cut,
    // which is why the kubelet alone leaves a partitioned pod in the Service.
    const victim = world.pods[2];
    assert.ok(victim !== undefined);
    const { result, heal } = await world.cut(victim);
    const during = world.timeline.changes.filter((ch) => ch.ip === victim.ip && ch.signal === 'containersReady' && ch.t >= result.cutStart);
    assert.deepEqual(during, [], 'ContainersReady never changed during the cut');
    await heal();
  });
});
