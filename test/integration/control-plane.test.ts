// The minimal control plane helper: real etcd + kube-apiserver with RBAC and
// client-certificate auth; several planes one after another; clear errors.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import net from 'node:net';
import { test } from 'node:test';
import { Agent, request } from 'undici';
import { isAlive, startControlPlane } from '../support/cluster/index.ts';
import { claimPort } from '../support/cluster/ports.ts';
import { logsOnFailure } from '../support/replicas/index.ts';

const logs = logsOnFailure('control-plane');

void test('minimal plane: RBAC on, admin works, anonymous is refused, stop leaves nothing', async () => {
  for (let round = 0; round < 2; round++) {
    const cp = logs.plane(await startControlPlane());
    const pids = cp.components.map((c) => c.pid);
    try {
      assert.deepEqual(cp.components.map((c) => c.name), ['etcd', 'kube-apiserver']);
      const version = await cp.kube.get('/version');
      assert.equal(version['gitVersion'], 'v1.37.2', 'binaries are version-stamped');
      await cp.kube.create('/api/v1/namespaces', { metadata: { name: `round-${round}` } });
      const anon = await request(`${cp.server}/api/v1/namespaces`, { dispatcher: new Agent({ connect: { rejectUnauthorized: false } }) });
      await anon.body.dump();
      assert.ok(anon.statusCode === 401 || anon.statusCode === 403, `anonymous list got ${anon.statusCode}`);
      const sar = await cp.kube.create('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
        apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview',
        spec: { resourceAttributes: { verb: 'delete', resource: 'pods' } },
      });
      assert.equal((sar['status'] as { allowed: boolean }).allowed, true, 'admin is system:masters');
    } finally {
      await cp.stop();
    }
    assert.deepEqual(pids.filter(isAlive), []);
    assert.equal(existsSync(cp.dir), false);
  }
});

void test('a busy apiserver port is reported with the component name and nothing is left running', async () => {
  const busy = net.createServer();
  await new Promise<void>((resolve) => { busy.listen(0, '127.0.0.1', resolve); });
  const port = (busy.address() as net.AddressInfo).port;
  try {
    await assert.rejects(startControlPlane({ apiserverPort: port }), (err: Error) => {
      assert.match(err.message, new RegExp(`kube-apiserver: port 127\\.0\\.0\\.1:${port} is not available`));
      return true;
    });
  } finally {
    busy.close();
  }
});

void test('a port taken between choosing and binding it: etcd and kube-apiserver start again on new ports', async () => {
  // Two ports held by this process stand for ports an outgoing connection took after they were chosen.
  const hold = async (): Promise<{ port: number; close: () => void }> => {
    const srv = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => { srv.listen(0, '127.0.0.1', resolve); });
    return { port: (srv.address() as net.AddressInfo).port, close: () => srv.close() };
  };
  const taken = [await hold(), await hold()];
  let calls = 0;
  // Calls 1 and 2 are etcd's client and peer ports, call 3 kube-apiserver's.
  const choosePort = async (host: string): Promise<number> => {
    const n = calls++;
    return n === 0 ? taken[0]!.port : n === 2 ? taken[1]!.port : claimPort(host);
  };
  const lines: string[] = [];
  try {
    const cp = logs.plane(await startControlPlane({ choosePort, log: (m) => lines.push(m) }));
    try {
      assert.deepEqual(cp.components.map((c) => c.name), ['etcd', 'kube-apiserver'], 'the dead starts are no longer components');
      assert.equal(lines.filter((l) => l.includes('etcd: a port chosen for it was taken')).length, 1, lines.join('\n'));
      assert.equal(lines.filter((l) => l.includes('kube-apiserver: a port chosen for it was taken')).length, 1, lines.join('\n'));
      assert.notEqual(new URL(cp.server).port, String(taken[1]!.port));
      await cp.kube.create('/api/v1/namespaces', { metadata: { name: 'rebound' } });
    } finally {
      await cp.stop();
    }
  } finally {
    for (const t of taken) t.close();
  }
});
