import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createHttpProber, ProbeDispatcher } from '../../../src/probing/index.ts';
import type { HttpHeader, Outcome } from '../../../src/probing/index.ts';
import { tcpServer, tlsServer } from '../../support/loopback.ts';
import type { Listening } from '../../support/loopback.ts';

/**
 * The request bytes outprobe sends, compared byte for byte with the kubelet's.
 * `kubelet-http-requests.json` holds what the kubelet's own prober
 * (k8s.io/kubernetes v1.37.2 pkg/probe/http, built with Go 1.26, the request
 * made by NewRequestForHTTPGetAction as pkg/kubelet/prober makes it) sent to
 * a recording server that behaves exactly like the one below: every request
 * head is recorded raw, and the n-th request of a case gets `responses[n]`
 * (`<3xx> <Location>`, or `close`: no answer) or else `200 ok`. Paths with spaces, non-ASCII and
 * bad `%` escapes, fragments, `?`, `//x`, scheme-looking paths, header order
 * and overrides, Host, Connection, Referer and Location userinfo are covered.
 */
interface Case {
  readonly name: string;
  readonly scheme: 'HTTP' | 'HTTPS';
  readonly path: string;
  readonly headers: readonly HttpHeader[];
  readonly responses: readonly string[];
  readonly result: string;
  readonly output: string;
  readonly heads: readonly string[];
}

const fixture = JSON.parse(readFileSync(new URL('../../fixtures/kubelet-http-requests.json', import.meta.url), 'utf8')) as { cases: Case[] };

describe('request heads are the kubelet\'s, byte for byte', () => {
  let plain: Listening;
  let secure: Listening;
  let heads: string[] = [];
  let script: readonly string[] = [];
  const ports = (s: string): string => s.replaceAll('{T}', String(plain.port)).replaceAll('{S}', String(secure.port));
  const unports = (s: string): string => s.replaceAll(String(plain.port), '{T}').replaceAll(String(secure.port), '{S}');

  const serve = (socket: net.Socket): void => {
    let buffer = Buffer.alloc(0);
    socket.on('error', () => undefined);
    socket.on('data', (data: Buffer) => {
      buffer = Buffer.concat([buffer, data]);
      const end = buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      // Recorded as UTF-8, as the fixture (a Go string marshalled to JSON) holds it.
      const n = heads.push(buffer.subarray(0, end + 4).toString('utf8')) - 1;
      const response = script[n] ?? '200';
      if (response === 'close') {
        socket.end();
      } else if (response.startsWith('3')) {
        const [code = '', location = ''] = response.split(/ (.*)/s);
        socket.end(Buffer.from(`HTTP/1.1 ${code} Moved\r\nLocation: ${ports(location)}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`, 'utf8'));
      } else {
        socket.end(`HTTP/1.1 ${response} OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok`);
      }
    });
  };

  const dispatcher = new ProbeDispatcher();
  const prober = createHttpProber({ userAgent: 'kube-probe/1.37', dispatcher });

  before(async () => {
    plain = await tcpServer(serve);
    secure = await tlsServer(serve);
  });
  after(async () => {
    await Promise.all([plain.close(), secure.close()]);
    await dispatcher.close();
  });

  for (const c of fixture.cases) {
    it(`${c.name}: ${JSON.stringify(c.path)}`, async () => {
      heads = [];
      script = c.responses;
      const port = c.scheme === 'HTTPS' ? secure.port : plain.port;
      const outcome: Outcome = await prober({ scheme: c.scheme, ip: '127.0.0.1', port, path: c.path, headers: c.headers, timeoutMs: 1000 });
      const got = { result: outcome.kind, output: unports('output' in outcome ? outcome.output : outcome.error), heads: heads.map(unports) };
      assert.deepEqual(got, { result: c.result, output: c.output, heads: c.heads });
    });
  }
});
