// Finding 5 (timer overflow): Node fires a setTimeout longer than 2^31 − 1 ms
// after 1 ms, so an executor that armed its probe deadline with a plain
// setTimeout failed healthy targets at once. Each executor here gets a
// timeout just past that limit and a healthy target that answers after a
// short delay: the probe must succeed.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { Agent } from 'undici';
import { WebSocketServer } from 'ws';
import { createExecProber, createGrpcProber, createHttpProber, ProbeDispatcher, tcpProbe } from '../../../src/probing/index.ts';
import { rawH2Server, respondGrpc } from '../../support/grpc-servers.ts';
import { httpServer, stalledListener } from '../../support/loopback.ts';

/** One past setTimeout's largest delay: a plain setTimeout fires it after 1 ms. */
const hugeTimeoutMs = 2 ** 31;
const answerAfterMs = 150;

const later = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe(`executors with a timeout of 2^31 ms (beyond setTimeout's range) and a healthy target`, () => {
  const cleanup: (() => Promise<void>)[] = [];
  after(async () => {
    for (const c of cleanup) await c();
  });

  it('HTTP: a 200 that arrives after 150 ms is success', async () => {
    const server = await httpServer((_req, res) => {
      setTimeout(() => res.end('ok'), answerAfterMs);
    });
    const dispatcher = new ProbeDispatcher();
    cleanup.push(server.close, () => dispatcher.close());
    const probe = createHttpProber({ userAgent: 'kube-probe/1.37', dispatcher });
    const o = await probe({ scheme: 'HTTP', ip: '127.0.0.1', port: server.port, path: '/', headers: [], timeoutMs: hugeTimeoutMs });
    assert.deepEqual(o, { kind: 'success', output: 'ok' });
  });

  it('gRPC: SERVING after 150 ms is success', async () => {
    // A raw h2c server: grpc-js servers overflow the same way on a
    // grpc-timeout of 2147484S and cancel the call at once.
    const server = await rawH2Server((stream) => {
      setTimeout(() => respondGrpc(stream, Buffer.from([0x08, 1])), answerAfterMs);
    });
    cleanup.push(server.close);
    const probe = createGrpcProber({ userAgent: 'kube-probe/1.37' });
    const o = await probe({ ip: '127.0.0.1', port: server.port, service: '', timeoutMs: hugeTimeoutMs });
    assert.deepEqual(o, { kind: 'success', output: 'service healthy' });
  });

  it('exec: exit 0 after 150 ms is success', async () => {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, handleProtocols: () => 'v5.channel.k8s.io' });
    wss.on('connection', (ws) => {
      setTimeout(() => {
        ws.send(Buffer.concat([Buffer.from([1]), Buffer.from('fine')]));
        ws.send(Buffer.concat([Buffer.from([3]), Buffer.from(JSON.stringify({ status: 'Success' }))]));
        ws.close();
      }, answerAfterMs);
    });
    await new Promise<void>((resolve) => wss.once('listening', resolve));
    const dispatcher = new Agent();
    cleanup.push(() => new Promise<void>((resolve) => wss.close(() => resolve())), () => dispatcher.close());
    const probe = createExecProber({ server: `http://127.0.0.1:${(wss.address() as AddressInfo).port}`, dispatcher });
    const o = await probe({ namespace: 'ns', pod: 'p', container: 'c', command: ['true'], timeoutMs: hugeTimeoutMs });
    assert.deepEqual(o, { kind: 'success', output: 'exec probe output withheld (4 bytes)' });
  });

  it('TCP: a connect that completes only after the listener frees its queue is success', async () => {
    // The accept queue is full, so the first SYN is dropped; the listener
    // drains its queue after 150 ms and the kernel's SYN retransmit (1 s)
    // completes the connect.
    const stalled = await stalledListener();
    const fillers = await stalled.fill();
    cleanup.push(async () => {
      for (const f of fillers) f.destroy();
      await stalled.close();
    });
    const probe = tcpProbe({ ip: '127.0.0.1', port: stalled.port, timeoutMs: hugeTimeoutMs });
    await later(answerAfterMs);
    stalled.release();
    assert.deepEqual(await probe, { kind: 'success', output: '' });
  });
});
