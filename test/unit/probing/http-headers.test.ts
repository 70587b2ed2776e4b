// Finding 6 (header injection): a CR or LF in an httpHeaders value (or name)
// was written raw, so the target saw an extra header and a second request.
// Go's transport refuses such a request before dialling (`net/http: invalid
// header field value for "X"`) and the kubelet reports that as a Failure;
// outprobe does the same, and its ProbeDispatcher never writes one either.
import assert from 'node:assert/strict';
import type net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Agent } from 'undici';
import type { Dispatcher } from 'undici';
import { buildHeaders } from '../../../src/probing/http/headers.ts';
import { createHttpProber, ProbeDispatcher } from '../../../src/probing/index.ts';
import type { HttpHeader, Outcome } from '../../../src/probing/index.ts';
import { tcpServer } from '../../support/loopback.ts';
import type { Listening } from '../../support/loopback.ts';

/** A raw HTTP/1.1 target that records every byte it receives and answers each request head with 200. */
async function recordingServer(): Promise<Listening & { readonly received: () => string }> {
  const chunks: Buffer[] = [];
  const server = await tcpServer((s: net.Socket) => {
    s.on('error', () => undefined);
    let pending = '';
    s.on('data', (d: Buffer) => {
      chunks.push(d);
      pending += d.toString('latin1');
      for (let end = pending.indexOf('\r\n\r\n'); end >= 0; end = pending.indexOf('\r\n\r\n')) {
        pending = pending.slice(end + 4);
        s.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
      }
    });
  });
  return { ...server, received: () => Buffer.concat(chunks).toString('latin1') };
}

const requestLines = (raw: string): string[] => raw.split('\r\n').filter((line) => /^GET \S+ HTTP\/1\.1$/.test(line));

const dispatchers: [string, () => Dispatcher][] = [
  ['ProbeDispatcher', () => new ProbeDispatcher()],
  ['undici Agent (reference)', () => new Agent({ pipelining: 0, allowH2: false })],
];

for (const [name, makeDispatcher] of dispatchers) {
  describe(`httpHeaders with control characters, over ${name}`, () => {
    let dispatcher: Dispatcher;
    before(() => {
      dispatcher = makeDispatcher();
    });
    after(async () => {
      await dispatcher.close();
    });

    const probe = async (headers: readonly HttpHeader[]): Promise<{ outcome: Outcome; raw: string; port: number }> => {
      const server = await recordingServer();
      try {
        const prober = createHttpProber({ userAgent: 'kube-probe/1.37', dispatcher });
        const outcome = await prober({ scheme: 'HTTP', ip: '127.0.0.1', port: server.port, path: '/healthz', headers, timeoutMs: 1000 });
        // A valid probe after the bad one: the target must see exactly this one request.
        const after = await prober({ scheme: 'HTTP', ip: '127.0.0.1', port: server.port, path: '/after', headers: [], timeoutMs: 1000 });
        assert.equal(after.kind, 'success');
        await new Promise((r) => setTimeout(r, 20));
        return { outcome, raw: server.received(), port: server.port };
      } finally {
        await server.close();
      }
    };

    it('CR LF in a value fails the probe as Go does, and the target gets one request with no extra header', async () => {
      const { outcome, raw, port } = await probe([
        { name: 'x-probe', value: 'a\r\nX-Injected: 1\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x' },
      ]);
      assert.deepEqual(outcome, { kind: 'failure', output: `Get "http://127.0.0.1:${port}/healthz": net/http: invalid header field value for "X-Probe"` });
      assert.deepEqual(requestLines(raw), ['GET /after HTTP/1.1']);
      assert.doesNotMatch(raw, /X-Injected|smuggled/i);
    });

    it('a bare LF, a bare CR, NUL or DEL in a value is refused too; a tab is allowed', async () => {
      for (const value of ['a\nX-Injected: 1', 'a\rX-Injected: 1', 'a\0b', 'a\x7fb']) {
        const { outcome, raw, port } = await probe([{ name: 'X-Probe', value }]);
        assert.deepEqual(outcome, { kind: 'failure', output: `Get "http://127.0.0.1:${port}/healthz": net/http: invalid header field value for "X-Probe"` }, JSON.stringify(value));
        assert.deepEqual(requestLines(raw), ['GET /after HTTP/1.1']);
      }
      const tab = await probe([{ name: 'X-Probe', value: 'a\tb' }]);
      assert.equal(tab.outcome.kind, 'success');
      assert.match(tab.raw, /\r\nX-Probe: a\tb\r\n/);
    });

    it('a control character in a Host, User-Agent or Accept value is refused, not dropped or defaulted', async () => {
      for (const header of ['Host', 'user-agent', 'Accept', 'Connection']) {
        const { outcome, raw, port } = await probe([{ name: header, value: 'x\r\nX-Injected: 1' }]);
        const canonical = header === 'user-agent' ? 'User-Agent' : header;
        assert.deepEqual(outcome, { kind: 'failure', output: `Get "http://127.0.0.1:${port}/healthz": net/http: invalid header field value for "${canonical}"` });
        assert.deepEqual(requestLines(raw), ['GET /after HTTP/1.1']);
      }
    });

    it('a name that is not an HTTP token fails with Go\'s invalid header field name', async () => {
      const { outcome, raw, port } = await probe([{ name: 'X-Probe\r\nX-Injected', value: '1' }]);
      assert.deepEqual(outcome, { kind: 'failure', output: `Get "http://127.0.0.1:${port}/healthz": net/http: invalid header field name "X-Probe\\r\\nX-Injected"` });
      assert.deepEqual(requestLines(raw), ['GET /after HTTP/1.1']);
    });
  });
}

describe('ProbeDispatcher on its own', () => {
  it('never writes a header with CR or LF: the exchange fails before connecting', async () => {
    const server = await recordingServer();
    const dispatcher = new ProbeDispatcher();
    const error = await new Promise<unknown>((resolve) => {
      dispatcher.dispatch(
        { origin: `http://127.0.0.1:${server.port}`, path: '/', method: 'GET', headers: ['host', `127.0.0.1:${server.port}`, 'x-probe', 'a\r\nX-Injected: 1'], reset: true },
        {
          onResponseStart: () => resolve(undefined),
          onResponseError: (_ctl, err) => resolve(err),
        },
      );
    });
    await new Promise((r) => setTimeout(r, 50));
    const raw = server.received();
    await server.close();
    await dispatcher.close();
    assert.ok(error instanceof Error);
    assert.equal(error.message, 'net/http: invalid header field value for "x-probe"');
    assert.equal(raw, '');
  });
});

describe('ProbeDispatcher request line', () => {
  it('writes a path as given, but never one with CR, LF or NUL: the exchange fails before connecting', async () => {
    const server = await recordingServer();
    const dispatcher = new ProbeDispatcher();
    const run = (path: string): Promise<unknown> =>
      new Promise<unknown>((resolve) => {
        dispatcher.dispatch(
          { origin: `http://127.0.0.1:${server.port}`, path, method: 'GET', headers: ['Host', `127.0.0.1:${server.port}`, 'Connection', 'close'], reset: true },
          { onResponseEnd: () => resolve(undefined), onResponseError: (_ctl, err) => resolve(err) },
        );
      });
    const errors = [await run('/a?b c'), await run('/x HTTP/1.1\r\nX-Injected: 1\r\n\r\nGET /y')];
    await new Promise((r) => setTimeout(r, 50));
    const raw = server.received();
    await server.close();
    await dispatcher.close();
    assert.equal(errors[0], undefined);
    assert.ok(errors[1] instanceof Error);
    assert.equal(errors[1].message, 'net/http: invalid request path');
    assert.equal(raw, `GET /a?b c HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nConnection: close\r\n\r\n`);
  });
});

describe('buildHeaders validation (httpguts rules)', () => {
  it('reports the first invalid user header by its canonical name; valid headers report nothing', () => {
    assert.equal(buildHeaders([{ name: 'x-a', value: 'ok\t' }, { name: 'x-b', value: 'é ü' }], 'ua').invalid, undefined);
    assert.equal(buildHeaders([{ name: 'x-a', value: 'ok' }, { name: 'x-b', value: 'a\nb' }], 'ua').invalid, 'net/http: invalid header field value for "X-B"');
    assert.equal(buildHeaders([{ name: '', value: 'x' }], 'ua').invalid, 'net/http: invalid header field name ""');
    assert.equal(buildHeaders([{ name: 'bad name', value: 'x' }], 'ua').invalid, 'net/http: invalid header field name "bad name"');
  });
});
