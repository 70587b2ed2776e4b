import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { tcpProbe as defaultTcpProbe } from '../../../src/probing/index.ts';
import type { TcpProber } from '../../../src/probing/index.ts';
import { loadRawTcp, rawTcp } from '../../../src/probing/rawtcp/index.ts';
import { netTcpProbe } from '../../../src/probing/tcp/index.ts';
import { closedPort, stalledListener, tcpServer } from '../../support/loopback.ts';

describe('the raw TCP layer (ADR 0025)', () => {
  it('is usable on the Node the tests run on, so the default executors take the raw path', () => {
    assert.notEqual(rawTcp(), undefined, loadRawTcp().why);
  });
  it('is off with OUTPROBE_RAW_TCP=0, saying why', () => {
    const loaded = loadRawTcp({ OUTPROBE_RAW_TCP: '0' });
    assert.equal(loaded.raw, undefined);
    assert.equal(loaded.why, 'OUTPROBE_RAW_TCP=0');
  });
});

/** Both executors: the default (Node's TCP handle) and the node:net fallback give the same outcomes. */
const probers: [string, TcpProber][] = [
  ['TCP probe (Node TCP handle)', defaultTcpProbe],
  ['TCP probe (node:net fallback)', netTcpProbe],
];

for (const [name, tcpProbe] of probers) {
  describe(name, () => {
    it('a completed connect is success, and nothing is written', async () => {
      const received: Buffer[] = [];
      const server = await tcpServer((s) => {
        s.on('data', (d: Buffer) => received.push(d));
        s.on('error', () => undefined);
      });
      assert.deepEqual(await tcpProbe({ ip: '127.0.0.1', port: server.port, timeoutMs: 1000 }), { kind: 'success', output: '' });
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(Buffer.concat(received).length, 0);
      await server.close();
    });

    it('a listener that accepts and resets at once still counts as healthy', async () => {
      const server = await tcpServer((s) => {
        // Reset soon after the accept; a reset racing the handshake itself is
        // reported as ECONNRESET by connect() in Go and Node alike.
        setTimeout(() => s.resetAndDestroy(), 20);
      });
      assert.equal((await tcpProbe({ ip: '127.0.0.1', port: server.port, timeoutMs: 1000 })).kind, 'success');
      await server.close();
    });

    it('a refused connect is a failure with the dial error', async () => {
      const port = await closedPort();
      assert.deepEqual(await tcpProbe({ ip: '127.0.0.1', port, timeoutMs: 1000 }), {
        kind: 'failure',
        output: `dial tcp 127.0.0.1:${port}: connect: connection refused`,
      });
    });

    it('a connect that does not complete within the timeout is a failure', async () => {
      // A listener whose accept queue is full: the kernel drops further SYNs, so
      // the handshake never completes (Linux loopback behaviour).
      const stalled = await stalledListener();
      const fillers = await stalled.fill();
      const t0 = performance.now();
      const o = await tcpProbe({ ip: '127.0.0.1', port: stalled.port, timeoutMs: 300 });
      const took = performance.now() - t0;
      for (const f of fillers) f.destroy();
      await stalled.close();
      assert.deepEqual(o, { kind: 'failure', output: `dial tcp 127.0.0.1:${stalled.port}: i/o timeout` });
      assert.ok(took >= 290 && took < 1500, `took ${took} ms`);
    });

    it('IPv6 loopback works', async () => {
      const server = await tcpServer(() => undefined, '::1');
      assert.equal((await tcpProbe({ ip: '::1', port: server.port, timeoutMs: 1000 })).kind, 'success');
      await server.close();
    });

    it('a caller abort ends the probe as errored, before or during the connect', async () => {
      const server = await tcpServer(() => undefined);
      const early = new AbortController();
      early.abort();
      assert.deepEqual(await tcpProbe({ ip: '127.0.0.1', port: server.port, timeoutMs: 1000 }, early.signal), { kind: 'errored', error: 'probe cancelled' });
      await server.close();
      const stalled = await stalledListener();
      const fillers = await stalled.fill();
      const late = new AbortController();
      setTimeout(() => late.abort(), 50);
      assert.deepEqual(await tcpProbe({ ip: '127.0.0.1', port: stalled.port, timeoutMs: 5000 }, late.signal), { kind: 'errored', error: 'probe cancelled' });
      for (const f of fillers) f.destroy();
      await stalled.close();
    });

    it('leaves no sockets or timers behind', async () => {
      const server = await tcpServer((s) => s.on('error', () => undefined));
      const port = await closedPort();
      const baseline = process.getActiveResourcesInfo().length;
      for (let i = 0; i < 100; i++) await tcpProbe({ ip: '127.0.0.1', port: i % 2 === 0 ? server.port : port, timeoutMs: 1000 });
      await new Promise((r) => setTimeout(r, 50));
      assert.ok(process.getActiveResourcesInfo().length <= baseline);
      await server.close();
    });
  });
}
