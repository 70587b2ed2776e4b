// What a real kube-apiserver answers to a pods/status gate patch whose
// metadata.uid is another pod's (the name now belongs to a recreated pod), and
// that the GateWriter stops writing there instead of retrying for ever.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { systemClock, systemRandom } from '../../src/kernel/index.ts';
import { KubeClient, fromKubeconfig, isKubeError } from '../../src/kube/index.ts';
import { GateWriter, patchGateCondition } from '../../src/writeback/index.ts';
import type { GateCondition, GateWriteResult } from '../../src/writeback/index.ts';
import { startControlPlane } from '../support/cluster/index.ts';
import type { ControlPlane } from '../support/cluster/index.ts';
import { logsOnFailure } from '../support/replicas/index.ts';

const condition: GateCondition = {
  type: 'outprobe.io/web',
  status: 'True',
  reason: 'ProbeSucceeded',
  message: '',
  lastTransitionTime: '2026-11-25T09:00:00Z',
  lastProbeTime: '2026-11-25T09:00:00Z',
};

describe('gate patch with a stale pod UID against a real kube-apiserver', () => {
  const logs = logsOnFailure('gate-uid');
  let cp: ControlPlane;
  let client: KubeClient;
  const ns = `uid-${Date.now().toString(36)}`;
  const podPath = `/api/v1/namespaces/${ns}/pods/web-1`;
  let staleUid = '';
  let currentUid = '';

  const podSpec = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-1', namespace: ns }, spec: { containers: [{ name: 'web', image: 'example.invalid/web' }], readinessGates: [{ conditionType: condition.type }] } };
  const uidOf = (o: Record<string, unknown>): string => (o['metadata'] as { uid: string }).uid;

  logs.setup(async () => {
    cp = await startControlPlane({ log: () => undefined });
    logs.plane(cp);
    client = new KubeClient({ connection: fromKubeconfig(cp.kubeconfigPath), clock: systemClock, random: systemRandom });
    await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    // An unscheduled pod is removed at once on delete; the same name is then another pod.
    staleUid = uidOf(await cp.kube.create(`/api/v1/namespaces/${ns}/pods`, podSpec));
    await cp.kube.delete(podPath, { gracePeriodSeconds: 0 });
    currentUid = uidOf(await cp.kube.create(`/api/v1/namespaces/${ns}/pods`, podSpec));
    assert.notEqual(staleUid, currentUid);
  });
  logs.teardown(async () => {
    await cp.stop();
  });

  it('is refused with 422 Invalid on metadata.uid (field is immutable), never applied to the recreated pod', async () => {
    const r = await cp.kube.call('PATCH', `${podPath}/status`, { metadata: { uid: staleUid }, status: { conditions: [condition] } }, 'application/strategic-merge-patch+json');
    const body = r.body as { reason?: string; message?: string; details?: { causes?: { reason: string; field: string; message: string }[] } };
    assert.equal(r.status, 422, JSON.stringify(r.body));
    assert.equal(body.reason, 'Invalid');
    assert.deepEqual(body.details?.causes?.map((c) => [c.reason, c.field, c.message]), [['FieldValueInvalid', 'metadata.uid', `Invalid value: "${staleUid}": field is immutable`]]);
    const pod = await cp.kube.get(podPath);
    assert.equal(((pod['status'] as { conditions?: unknown[] }).conditions ?? []).length, 0, 'nothing landed on the recreated pod');
  });

  it('with the current UID it lands (the guard is the UID, nothing else)', async () => {
    const result = await patchGateCondition(client, { uid: currentUid, namespace: ns, name: 'web-1' }, condition);
    assert.notEqual(result, 'gone');
    await client.request({ method: 'PATCH', path: `${podPath}/status`, patch: 'json', body: [{ op: 'remove', path: '/status/conditions' }], retry: false });
  });

  it('patchGateCondition says gone, and the GateWriter neither retries nor keeps the entry', async () => {
    assert.equal(await patchGateCondition(client, { uid: staleUid, namespace: ns, name: 'web-1' }, condition), 'gone');
    let calls = 0;
    const results: GateWriteResult[] = [];
    const writer = new GateWriter({
      clock: systemClock,
      patch: (pod, c) => (calls++, patchGateCondition(client, pod, c)),
      onWrite: (_p, _c, result) => results.push(result),
    });
    writer.desire({ uid: staleUid, namespace: ns, name: 'web-1' }, condition, undefined);
    await writer.settled();
    writer.sweep(0);
    await writer.settled();
    assert.deepEqual(results, ['gone']);
    assert.equal(calls, 1);
    assert.equal(writer.pending, 0);
    assert.equal(writer.desired(staleUid, condition.type), undefined);
  });

  it('another 422 (an invalid condition type) is still an error, retried by the sweep, not "gone"', async () => {
    const bad = { ...condition, type: 'not a qualified name' };
    await assert.rejects(patchGateCondition(client, { uid: currentUid, namespace: ns, name: 'web-1' }, bad), (err: unknown) => {
      assert.ok(isKubeError(err, 'Invalid'), String(err));
      assert.ok(!err.causes.some((c) => c.field === 'metadata.uid'), JSON.stringify(err.causes));
      return true;
    });
  });
});
