import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createHttpProber, ProbeDispatcher } from '../../../src/probing/index.ts';
import type { HttpHeader, HttpProber } from '../../../src/probing/index.ts';

/**
 * HTTPS probes against node:http2 secure servers, one offering h2 and
 * http/1.1, one h2 only. Every expected result and output below is what
 * the kubelet's own prober (k8s.io/kubernetes v1.37.2 pkg/probe/http
 * New(false).Probe, Go 1.26) gave against the same two servers: it
 * negotiates h2 through ALPN on both, sends the user headers lower-cased
 * without Connection, adds Referer on a followed redirect, and reports a
 * stream reset in Go's http2 wording (ADR 0010).
 */
interface Seen {
  readonly httpVersion: string;
  readonly headers: Record<string, string>;
}

function record(seen: readonly Seen[], i: number): Seen {
  const s = seen[i];
  assert.ok(s, `request ${i} was not received`);
  return s;
}

const tlsDir = new URL('../../fixtures/tls/', import.meta.url);

async function h2Server(allowHTTP1: boolean, seen: Seen[]): Promise<{ port: number; close: () => Promise<void> }> {
  const server = http2.createSecureServer(
    { key: readFileSync(new URL('key.pem', tlsDir)), cert: readFileSync(new URL('cert.pem', tlsDir)), allowHTTP1 },
    (req, res) => {
      const headers: Record<string, string> = {};
      for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) headers[req.rawHeaders[i] ?? ''] = req.rawHeaders[i + 1] ?? '';
      seen.push({ httpVersion: req.httpVersion, headers });
      const url = req.url;
      if (url.startsWith('/redirect')) {
        res.writeHead(302, { location: '/h2?from=redirect' });
        res.end('moved');
      } else if (url.startsWith('/big')) {
        res.writeHead(200);
        res.end('a'.repeat(20000));
      } else if (url.startsWith('/503')) {
        res.writeHead(503);
        res.end('down');
      } else if (req.httpVersion !== '2.0' && /^\/(kill|goaway|rst)/.test(url)) {
        req.socket.destroy(); // an HTTP/1.1 client (http2: false) has no stream to reset
      } else if (url.startsWith('/kill')) {
        req.stream.session?.destroy();
      } else if (url.startsWith('/goaway')) {
        req.stream.session?.goaway(http2.constants.NGHTTP2_ENHANCE_YOUR_CALM);
        req.stream.session?.destroy();
      } else if (url.startsWith('/rst')) {
        req.stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
      } else {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(`ok over ${req.httpVersion}`);
      }
    },
  );
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (s: http2.ServerHttp2Session) => sessions.add(s));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sessions) s.destroy();
        server.close(() => resolve());
      }),
  };
}

const userHeaders: HttpHeader[] = [{ name: 'X-B', value: '1' }, { name: 'x-a', value: '2' }, { name: 'Connection', value: 'keep-alive' }];

for (const allowHTTP1 of [true, false]) {
  describe(`HTTPS probe against a node:http2 server offering ${allowHTTP1 ? 'h2 and http/1.1' : 'h2 only'}`, () => {
    const seen: Seen[] = [];
    let server: Awaited<ReturnType<typeof h2Server>>;
    const dispatcher = new ProbeDispatcher();
    const prober: HttpProber = createHttpProber({ userAgent: 'kube-probe/1.37', dispatcher });
    const probe = (path: string, headers: readonly HttpHeader[] = userHeaders): ReturnType<HttpProber> =>
      prober({ scheme: 'HTTPS', ip: '127.0.0.1', port: server.port, path, headers, timeoutMs: 1000 });

    before(async () => {
      server = await h2Server(allowHTTP1, seen);
    });
    after(async () => {
      await server.close();
      await dispatcher.close();
    });

    it('negotiates h2 and sends the request as Go\'s http2 transport does', async () => {
      seen.length = 0;
      assert.deepEqual(await probe('/h2'), { kind: 'success', output: 'ok over 2.0' });
      assert.equal(seen.length, 1);
      assert.equal(record(seen, 0).httpVersion, '2.0');
      // Go writes the regular headers in map order (random); the set is what counts.
      assert.deepEqual(record(seen, 0).headers, {
        ':authority': `127.0.0.1:${server.port}`,
        ':method': 'GET',
        ':path': '/h2',
        ':scheme': 'https',
        'x-b': '1',
        'x-a': '2',
        'user-agent': 'kube-probe/1.37',
        accept: '*/*',
      });
    });

    it('a Host header becomes :authority', async () => {
      seen.length = 0;
      assert.deepEqual(await probe('/h2', [{ name: 'Host', value: 'web.example' }]), { kind: 'success', output: 'ok over 2.0' });
      assert.equal(record(seen, 0).headers[':authority'], 'web.example');
    });

    it('refuses a Host that HTTP/1 would send empty, and keeps an IPv6 zone in :authority, as Go\'s http2 transport does', async () => {
      assert.deepEqual(await probe('/h2', [{ name: 'Host', value: 'web example' }]), {
        kind: 'failure',
        output: `Get "https://127.0.0.1:${server.port}/h2": http2: invalid Host header`,
      });
      seen.length = 0;
      assert.deepEqual(await probe('/h2', [{ name: 'Host', value: '[fe80::1%eth0]:80' }]), { kind: 'success', output: 'ok over 2.0' });
      assert.equal(record(seen, 0).headers[':authority'], '[fe80::1%eth0]:80');
    });

    it('follows a redirect over h2 with Referer', async () => {
      seen.length = 0;
      assert.deepEqual(await probe('/redirect'), { kind: 'success', output: 'ok over 2.0' });
      assert.equal(seen.length, 2);
      assert.equal(record(seen, 1).headers[':path'], '/h2?from=redirect');
      assert.equal(record(seen, 1).headers['referer'], `https://127.0.0.1:${server.port}/redirect`);
    });

    it('reads at most 10 KiB of an h2 body', async () => {
      assert.deepEqual(await probe('/big'), { kind: 'success', output: 'a'.repeat(10240) });
    });

    it('fails on a 503 with the kubelet\'s message', async () => {
      assert.deepEqual(await probe('/503'), { kind: 'failure', output: 'HTTP probe failed with statuscode: 503' });
    });

    it('reports a stream reset in Go\'s http2 wording', async () => {
      assert.deepEqual(await probe('/rst'), {
        kind: 'failure',
        output: `Get "https://127.0.0.1:${server.port}/rst": stream error: stream ID 1; INTERNAL_ERROR; received from peer`,
      });
    });

    it('a connection that goes away before the response is Go\'s `unexpected EOF`, GOAWAY or not', async () => {
      for (const path of ['/kill', '/goaway']) {
        assert.deepEqual(await probe(path), { kind: 'failure', output: `Get "https://127.0.0.1:${server.port}${path}": unexpected EOF` }, path);
      }
    });

    it('a query with a space is refused by the server (the kubelet fails the same way)', async () => {
      assert.deepEqual(await probe('/h2?x y'), {
        kind: 'failure',
        output: `Get "https://127.0.0.1:${server.port}/h2?x y": stream error: stream ID 1; PROTOCOL_ERROR; received from peer`,
      });
    });
  });
}

describe('ProbeDispatcher with http2: false (the kubelet\'s DISABLE_HTTP2)', () => {
  it('offers only http/1.1 and speaks HTTP/1.1', async () => {
    const seen: Seen[] = [];
    const server = await h2Server(true, seen);
    const dispatcher = new ProbeDispatcher({ http2: false });
    const prober = createHttpProber({ userAgent: 'kube-probe/1.37', dispatcher });
    const o = await prober({ scheme: 'HTTPS', ip: '127.0.0.1', port: server.port, path: '/h2', headers: [], timeoutMs: 1000 });
    await server.close();
    await dispatcher.close();
    assert.deepEqual(o, { kind: 'success', output: 'ok over 1.1' });
    assert.equal(record(seen, 0).headers['Connection'], 'close');
  });
});
