import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Controller } from '../../../src/controller/index.ts';
import { systemClock, systemRandom } from '../../../src/kernel/index.ts';
import { connectionFor, KubeClient } from '../../../src/kube/index.ts';
import type { Question } from '../../../src/secondopinion/index.ts';

/**
 * The controller's wiring of the second opinion (ADR 0018) against a
 * loopback fake API server: a gated pod whose condition is True and whose
 * probe fails. The first False is asked about with the policy, pod UID and
 * probe kind; while refused nothing is patched, and the hold is counted as
 * the peer guard's only when the peer guard refused it.
 */
const gate = 'outprobe.io/web';

function fakeApi(patches: string[], secondOpinion: boolean): Server {
  const startedAt = new Date(Date.now() - 60_000).toISOString().replace(/\.\d+Z$/, 'Z');
  const pod = {
    metadata: { name: 'p1', namespace: 'a', uid: 'uid-p1', resourceVersion: '5', labels: { app: 'web' } },
    spec: { nodeName: 'n1', readinessGates: [{ conditionType: gate }], containers: [{ name: 'web', ports: [{ name: 'http', containerPort: 8080 }] }] },
    status: {
      phase: 'Running', podIP: '127.0.0.1', podIPs: [{ ip: '127.0.0.1' }],
      conditions: [{ type: gate, status: 'True', reason: 'ProbeSucceeded', message: '', lastTransitionTime: startedAt }, { type: 'Ready', status: 'True' }],
      containerStatuses: [{ name: 'web', containerID: 'containerd://c1', restartCount: 0, started: true, ready: true, state: { running: { startedAt } } }],
    },
  };
  const policy = {
    apiVersion: 'outprobe.io/v1alpha1', kind: 'ProbePolicy',
    metadata: { name: 'web', namespace: 'a', uid: 'pol-a', generation: 1, resourceVersion: '5' },
    spec: { selector: {}, secondOpinion, readiness: { conditionType: gate, maxUnreadyPercent: 100, probe: { httpGet: { path: '/', port: 8080 }, periodSeconds: 1, failureThreshold: 1 } } },
  };
  const json = (res: ServerResponse, status: number, body: unknown): void => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
  return createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    req.resume();
    const m = /^\/(?:api\/v1|apis\/outprobe\.io\/v1alpha1)\/namespaces\/a\/(pods|probepolicies)$/.exec(url.pathname);
    if (req.method === 'GET' && m !== null) {
      if (url.searchParams.get('watch') !== '1') json(res, 200, { metadata: { resourceVersion: '10' }, items: [m[1] === 'pods' ? pod : policy] });
      else res.writeHead(200, { 'content-type': 'application/json' });
      return;
    }
    if (req.method === 'PATCH' && /\/pods\/[^/]+\/status$/.test(url.pathname)) {
      patches.push(url.pathname);
      json(res, 200, { metadata: { resourceVersion: '11' } });
      return;
    }
    json(res, req.method === 'POST' ? 201 : 404, {});
  });
}

async function run(o: { readonly secondOpinion: boolean; readonly peerGuard: boolean; readonly agree: () => boolean }) {
  const patches: string[] = [];
  const api = fakeApi(patches, o.secondOpinion);
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  const client = new KubeClient({ connection: connectionFor({ server: `http://127.0.0.1:${(api.address() as AddressInfo).port}`, namespace: 'outprobe' }), clock: systemClock, random: systemRandom });
  const questions: Question[] = [];
  const held: string[] = [];
  const controller = new Controller({
    client, clock: systemClock, random: systemRandom, observe: () => undefined, namespaces: ['a'], allowedCidrs: ['127.0.0.0/8'],
    probers: {
      httpGet: () => Promise.resolve({ kind: 'failure', output: 'HTTP probe failed with statuscode: 503' }),
      tcpSocket: () => Promise.resolve({ kind: 'failure', output: '' }),
      grpc: () => Promise.resolve({ kind: 'failure', output: '' }),
    },
    statusIntervalMs: 60_000,
    confirmedSince: () => o.peerGuard,
    onHeld: (action) => held.push(action),
    secondOpinion: {
      confirm: (q) => {
        questions.push(q);
        return o.agree();
      },
    },
  });
  const stop = new AbortController();
  const done = controller.run(stop.signal);
  return {
    patches, questions, held, controller,
    stop: async (): Promise<void> => {
      stop.abort();
      await done;
      api.closeAllConnections();
      await client.close();
      await new Promise((resolve) => api.close(resolve));
    },
  };
}

describe('controller: the second opinion before the first False', () => {
  let agree = false;
  let r: Awaited<ReturnType<typeof run>>;
  before(async () => {
    r = await run({ secondOpinion: true, peerGuard: true, agree: () => agree });
  });
  after(async () => r.stop());

  it('asks with the policy, pod UID and probe kind; writes nothing until the peer agrees, then the False', async () => {
    for (let i = 0; i < 100 && r.questions.length < 2; i++) await sleep(50);
    assert.ok(r.questions.length >= 2, 'asked again on the sweeps');
    const q = r.questions[0];
    assert.deepEqual([q?.policy, q?.podUid, q?.probe, q?.periodMs, q?.timeoutMs, q?.pod.name], ['a/web', 'uid-p1', 'readiness', 1000, 1000, 'p1']);
    assert.match(q?.ownView ?? '', /statuscode: 503/);
    assert.deepEqual(r.patches, []);
    assert.deepEqual(r.held, [], 'a second-opinion hold is not counted as the peer guard\'s');
    agree = true;
    for (let i = 0; i < 40 && r.patches.length === 0; i++) await sleep(50);
    assert.deepEqual(r.patches, ['/api/v1/namespaces/a/pods/p1/status']);
  });
});

describe('controller: no second opinion where it does not apply', () => {
  it('spec.secondOpinion false: the False is written without asking', async () => {
    const r = await run({ secondOpinion: false, peerGuard: true, agree: () => false });
    for (let i = 0; i < 60 && r.patches.length === 0; i++) await sleep(50);
    await r.stop();
    assert.deepEqual(r.patches, ['/api/v1/namespaces/a/pods/p1/status']);
    assert.equal(r.questions.length, 0);
  });

  it('the peer guard refuses first: counted as its hold, no peer asked', async () => {
    const r = await run({ secondOpinion: true, peerGuard: false, agree: () => true });
    for (let i = 0; i < 60 && r.held.length === 0; i++) await sleep(50);
    await sleep(300);
    await r.stop();
    assert.deepEqual(r.held, ['gate_false']);
    assert.equal(r.questions.length, 0);
    assert.deepEqual(r.patches, []);
  });
});
