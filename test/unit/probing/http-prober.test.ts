import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { Agent } from 'undici';
import type { Dispatcher } from 'undici';
import { createHttpProber, ProbeDispatcher } from '../../../src/probing/index.ts';
import type { HttpProbeRequest, Outcome } from '../../../src/probing/index.ts';
import { closedPort, httpServer, httpsServer, tcpServer } from '../../support/loopback.ts';
import type { Listening } from '../../support/loopback.ts';

const ua = 'kube-probe/1.37';
const bigChunk = Buffer.alloc(64 * 1024, 0x61);
const bigChunks = 160; // 10 MiB

/** Routes of the loopback target: /status/N, /chain/N (N redirects to /status/200), /loop, /big, ... */
function routes(seen: http.IncomingHttpHeaders[]): http.RequestListener {
  return (req, res) => {
    seen.push(req.headers);
    const url = req.url ?? '/';
    const [, route = '', arg = ''] = /^\/([a-z]+)\/?([^?]*)/.exec(url) ?? [];
    if (route === 'status') {
      res.writeHead(Number(arg));
      res.end(`body of ${arg}`);
    } else if (route === 'chain') {
      const left = Number(arg);
      res.writeHead(left > 0 ? 302 : 200, left > 0 ? { location: `/chain/${left - 1}` } : {});
      res.end(left > 0 ? '' : 'end of chain');
    } else if (route === 'loop') {
      res.writeHead(302, { location: '/loop' });
      res.end();
    } else if (route === 'to') {
      res.writeHead(Number(new URL(url, 'http://x').searchParams.get('code') ?? '302'), { location: decodeURIComponent(arg) });
      res.end('redirect body');
    } else if (route === 'headers') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ headers: req.headers, raw: req.rawHeaders }));
    } else if (route === 'big') {
      // 10 MiB streamed with backpressure from one shared chunk, so the
      // server side itself stays small and memory growth is the prober's.
      res.writeHead(200, { 'content-length': String(bigChunks * bigChunk.length) });
      let sent = 0;
      const pump = (): void => {
        while (sent < bigChunks && !res.destroyed) {
          sent++;
          if (!res.write(bigChunk)) {
            res.once('drain', pump);
            return;
          }
        }
        if (sent >= bigChunks) res.end();
      };
      pump();
    } else if (route === 'chunked') {
      res.writeHead(200);
      res.write('part one, ');
      setTimeout(() => res.end('part two'), 20);
    } else if (route === 'stall') {
      res.writeHead(200, { 'content-length': '100' });
      res.write('only some of the body');
    } else if (route === 'hang') {
      // never answers
    } else {
      res.writeHead(404);
      res.end();
    }
  };
}

/** The output or error text of an outcome (typed without narrowing). */
function text(o: Outcome): string {
  return 'output' in o ? o.output : o.error;
}

/** The transports under test; `undefined`: the prober's own (plain HTTP on Node's TCP handle, ADR 0025). */
const dispatchers: [string, () => Dispatcher | undefined][] = [
  ['its built-in transport (Node TCP handle for plain HTTP)', () => undefined],
  ['ProbeDispatcher', () => new ProbeDispatcher()],
  ['undici Agent (reference)', () => new Agent({ pipelining: 0, allowH2: false, connect: { rejectUnauthorized: false } })],
];

for (const [name, makeDispatcher] of dispatchers) {
  describe(`HTTP prober over ${name}`, () => {
    const seen: http.IncomingHttpHeaders[] = [];
    let server: Listening;
    let other: Listening;
    let tls: Listening;
    let dispatcher: Dispatcher | undefined;
    let probe: (path: string, extra?: Partial<HttpProbeRequest>) => Promise<Outcome>;

    before(async () => {
      server = await httpServer(routes(seen));
      other = await httpServer(routes(seen));
      tls = await httpsServer(routes(seen));
      dispatcher = makeDispatcher();
      const prober = createHttpProber(dispatcher === undefined ? { userAgent: ua } : { userAgent: ua, dispatcher });
      probe = (path, extra = {}) =>
        prober({ scheme: 'HTTP', ip: '127.0.0.1', port: server.port, path, headers: [], timeoutMs: 1000, ...extra });
    });
    after(async () => {
      await Promise.all([server.close(), other.close(), tls.close()]);
      await dispatcher?.close();
    });

    it('status 200 is success with the body as output', async () => {
      assert.deepEqual(await probe('/status/200'), { kind: 'success', output: 'body of 200' });
    });
    it('status 199 (1xx is never a final response) is a failure', async () => {
      const raw = await tcpServer((s) => {
        s.once('data', () => s.end('HTTP/1.1 199 Odd\r\n\r\n'));
      });
      const o = await probe('/', { port: raw.port });
      await raw.close();
      assert.equal(o.kind, 'failure');
    });
    it('status 299 is success, 300 and 399 are warnings with the body', async () => {
      assert.equal((await probe('/status/299')).kind, 'success');
      assert.deepEqual(await probe('/status/300'), { kind: 'warning', output: 'Probe terminated redirects, Response body: body of 300' });
      assert.deepEqual(await probe('/status/399'), { kind: 'warning', output: 'Probe terminated redirects, Response body: body of 399' });
    });
    it('status 400, 404, 500 and 503 are failures without the body', async () => {
      for (const code of [400, 404, 500, 503]) {
        assert.deepEqual(await probe(`/status/${code}`), { kind: 'failure', output: `HTTP probe failed with statuscode: ${code}` });
      }
    });
    it('304 and a 302 without Location are final responses (warning)', async () => {
      assert.equal((await probe('/status/304')).kind, 'warning');
      assert.equal((await probe('/status/302')).kind, 'warning');
    });
    it('follows a chain of 9 same-host redirects to the final status', async () => {
      assert.deepEqual(await probe('/chain/9'), { kind: 'success', output: 'end of chain' });
    });
    it('fails on the 10th redirect, as Go counts the original request (and on 11)', async () => {
      assert.deepEqual(await probe('/chain/10'), { kind: 'failure', output: 'Get "/chain/0": stopped after 10 redirects' });
      assert.deepEqual(await probe('/chain/11'), { kind: 'failure', output: 'Get "/chain/1": stopped after 10 redirects' });
    });
    it('a redirect loop is a failure', async () => {
      assert.deepEqual(await probe('/loop'), { kind: 'failure', output: 'Get "/loop": stopped after 10 redirects' });
    });
    it('follows redirects to another port and to https on the same host', async () => {
      assert.deepEqual(await probe(`/to/${encodeURIComponent(`http://127.0.0.1:${other.port}/status/200`)}`), { kind: 'success', output: 'body of 200' });
      assert.deepEqual(await probe(`/to/${encodeURIComponent(`https://127.0.0.1:${tls.port}/status/201`)}`), { kind: 'success', output: 'body of 201' });
      assert.deepEqual(await probe(`/to/${encodeURIComponent(`http://127.0.0.1:${other.port}/status/500`)}?code=307`), { kind: 'failure', output: 'HTTP probe failed with statuscode: 500' });
    });
    it('does not follow a redirect to another host: success with a warning, whatever that host says', async () => {
      const before = seen.length;
      const o = await probe(`/to/${encodeURIComponent(`http://localhost:${other.port}/status/500`)}`);
      assert.deepEqual(o, { kind: 'warning', output: 'Probe terminated redirects, Response body: redirect body' });
      assert.equal(seen.length, before + 1, 'the other host is never contacted');
    });
    it('sends the kubelet headers: Host ip:port, kube-probe User-Agent, Accept */*, Connection close', async () => {
      const o = await probe('/headers');
      assert.equal(o.kind, 'success');
      const { headers } = JSON.parse(text(o)) as { headers: http.IncomingHttpHeaders };
      assert.equal(headers.host, `127.0.0.1:${server.port}`);
      assert.equal(headers['user-agent'], ua);
      assert.equal(headers.accept, '*/*');
      assert.equal(headers.connection, 'close');
      assert.equal(headers['accept-encoding'], undefined);
    });
    it('httpHeaders override Host, User-Agent and Accept, and empty values remove them', async () => {
      const o1 = await probe('/headers', { headers: [{ name: 'host', value: 'web.example' }, { name: 'user-agent', value: 'mine/2' }, { name: 'x-custom', value: 'a' }, { name: 'X-Custom', value: 'b' }] });
      const h1 = (JSON.parse(text(o1)) as { headers: http.IncomingHttpHeaders }).headers;
      assert.equal(h1.host, 'web.example');
      assert.equal(h1['user-agent'], 'mine/2');
      assert.equal(h1['x-custom'], 'a, b');
      const o2 = await probe('/headers', { headers: [{ name: 'User-Agent', value: '' }, { name: 'Accept', value: '' }] });
      const h2 = (JSON.parse(text(o2)) as { headers: http.IncomingHttpHeaders }).headers;
      assert.equal(h2['user-agent'], undefined);
      assert.equal(h2.accept, undefined);
    });
    it('keeps a Host override through a relative redirect only', async () => {
      const start = seen.length;
      await probe(`/to/${encodeURIComponent('/headers')}`, { headers: [{ name: 'Host', value: 'web.example' }] });
      assert.equal(seen[start + 1]?.host, 'web.example');
      await probe(`/to/${encodeURIComponent(`http://127.0.0.1:${server.port}/headers`)}`, { headers: [{ name: 'Host', value: 'web.example' }] });
      assert.equal(seen.at(-1)?.host, `127.0.0.1:${server.port}`);
    });
    it('drops a Host override for good once an absolute redirect dropped it (Go keeps req.Host of the previous hop only)', async () => {
      const start = seen.length;
      const relative = `/to/${encodeURIComponent('/headers')}`;
      const o = await probe(`/to/${encodeURIComponent(`http://127.0.0.1:${server.port}${relative}`)}`, { headers: [{ name: 'Host', value: 'web.example' }] });
      assert.equal(o.kind, 'success');
      assert.deepEqual(seen.slice(start).map((h) => h.host), ['web.example', `127.0.0.1:${server.port}`, `127.0.0.1:${server.port}`]);
    });
    it('reads at most 10 KiB of a 10 MiB body, with flat memory', async () => {
      const rss0 = process.memoryUsage().rss;
      for (let i = 0; i < 20; i++) {
        const o = await probe('/big');
        assert.equal(o.kind, 'success');
        assert.equal(Buffer.byteLength(text(o)), 10240);
      }
      const grown = process.memoryUsage().rss - rss0;
      assert.ok(grown < 64 * 1024 * 1024, `rss grew by ${grown} bytes over 20 probes of 10 MiB bodies`);
    });
    it('reads chunked bodies', async () => {
      assert.deepEqual(await probe('/chunked'), { kind: 'success', output: 'part one, part two' });
    });
    it('a server that accepts and never answers is a timeout failure', async () => {
      const t0 = performance.now();
      const o = await probe('/hang', { timeoutMs: 300 });
      assert.equal(o.kind, 'failure');
      assert.ok(performance.now() - t0 < 1500);
      if (name === 'ProbeDispatcher') {
        assert.equal(text(o), `Get "http://127.0.0.1:${server.port}/hang": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`);
      }
    });
    it('a body that stalls after the head is a prober error (void), not a failure', async () => {
      const o = await probe('/stall', { timeoutMs: 300 });
      assert.equal(o.kind, 'errored');
    });
    it('a refused connection is a failure', async () => {
      const port = await closedPort();
      const o = await probe('/', { port });
      assert.equal(o.kind, 'failure');
      if (name === 'ProbeDispatcher') {
        assert.equal(text(o), `Get "http://127.0.0.1:${port}/": dial tcp 127.0.0.1:${port}: connect: connection refused`);
      }
    });
    it('a server that resets the connection is a failure', async () => {
      const raw = await tcpServer((s) => {
        s.once('data', () => s.resetAndDestroy());
      });
      const o = await probe('/', { port: raw.port });
      await raw.close();
      assert.equal(o.kind, 'failure');
    });
    it('a server that closes without answering, or speaks garbage, is a failure', async () => {
      const closing = await tcpServer((s) => {
        s.once('data', () => s.end());
      });
      const garbage = await tcpServer((s) => {
        s.once('data', () => s.end('SSH-2.0-OpenSSH_9.2\r\n\r\n'));
      });
      assert.equal((await probe('/', { port: closing.port })).kind, 'failure');
      assert.equal((await probe('/', { port: garbage.port })).kind, 'failure');
      await Promise.all([closing.close(), garbage.close()]);
    });
    it('HTTPS with a self-signed certificate succeeds (no verification)', async () => {
      assert.deepEqual(await probe('/status/200', { scheme: 'HTTPS', port: tls.port }), { kind: 'success', output: 'body of 200' });
    });
    it('probes IPv6 loopback with a bracketed Host', async () => {
      const v6 = await httpServer(routes(seen), '::1');
      const o = await probe('/headers', { ip: '::1', port: v6.port });
      await v6.close();
      assert.equal(o.kind, 'success');
      const { headers } = JSON.parse(text(o)) as { headers: http.IncomingHttpHeaders };
      assert.equal(headers.host, `[::1]:${v6.port}`);
    });
    it('a caller abort ends the probe as errored', async () => {
      const controller = new AbortController();
      const pending = createHttpProber(dispatcher === undefined ? { userAgent: ua } : { userAgent: ua, dispatcher })({ scheme: 'HTTP', ip: '127.0.0.1', port: server.port, path: '/hang', headers: [], timeoutMs: 5000 }, controller.signal);
      setTimeout(() => controller.abort(), 50);
      assert.deepEqual(await pending, { kind: 'errored', error: 'probe cancelled' });
    });
  });
}

describe('ProbeDispatcher resources', () => {
  it('leaves no sockets or timers behind after many probes of every kind', async () => {
    const server = await httpServer(routes([]));
    const prober = createHttpProber({ userAgent: ua });
    const baseline = process.getActiveResourcesInfo().length;
    for (let i = 0; i < 50; i++) {
      await prober({ scheme: 'HTTP', ip: '127.0.0.1', port: server.port, path: ['/status/200', '/big', '/hang', '/loop'][i % 4] ?? '/', headers: [], timeoutMs: 100 });
    }
    await new Promise((r) => setTimeout(r, 50));
    assert.ok(process.getActiveResourcesInfo().length <= baseline, JSON.stringify(process.getActiveResourcesInfo()));
    await server.close();
  });
  it('leaves no sockets behind after HTTPS probes, TLS running over the record tap', async () => {
    const server = await httpsServer(routes([]));
    const plain = await httpServer(routes([]));
    const prober = createHttpProber({ userAgent: ua });
    const baseline = process.getActiveResourcesInfo().length;
    for (let i = 0; i < 40; i++) {
      const port = i % 5 === 4 ? plain.port : server.port; // a plain server: the handshake fails
      await prober({ scheme: 'HTTPS', ip: '127.0.0.1', port, path: ['/status/200', '/big', '/hang', '/loop'][i % 4] ?? '/', headers: [], timeoutMs: 100 });
    }
    await new Promise((r) => setTimeout(r, 50));
    assert.ok(process.getActiveResourcesInfo().length <= baseline, JSON.stringify(process.getActiveResourcesInfo()));
    await Promise.all([server.close(), plain.close()]);
  });
});
