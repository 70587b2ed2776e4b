import assert from 'node:assert/strict';
import type http from 'node:http';
import type net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Agent } from 'undici';
import type { Dispatcher } from 'undici';
import { createHttpProber, ProbeDispatcher } from '../../../src/probing/index.ts';
import type { HttpProber, Outcome } from '../../../src/probing/index.ts';
import { httpServer, httpsServer, tcpServer } from '../../support/loopback.ts';
import type { Listening } from '../../support/loopback.ts';

/**
 * Hostile and odd Locations against real loopback servers. Every expected
 * result was produced by Go 1.26's net/http client with the kubelet's
 * RedirectChecker (pkg/probe/http) against the same setup: a target at the
 * pod IP answering `302 Location: <case>` on /start/<i> (200 "target <uri>"
 * elsewhere), an "other" HTTP server and a TLS server on the pod IP, and a
 * victim listener on 127.0.0.2 that no case may connect to. {T}, {O}, {S},
 * {V} are those ports, {I} the case's index.
 *
 * [Location, result kind, output, requests after the first as [server, request URI, Host]]
 */
type Case = readonly [string, Outcome['kind'], string, readonly (readonly [string, string, string])[]];

const v4: readonly Case[] = [
  ["http://127.0.0.1:{T}\\@127.0.0.2:{V}/x", "failure", "Get \"http://127.0.0.1:{T}/start/{I}\": failed to parse Location header \"http://127.0.0.1:{T}\\\\@127.0.0.2:{V}/x\": parse \"http://127.0.0.1:{T}\\\\@127.0.0.2:{V}/x\": net/url: invalid userinfo", []],
  ["http://user@127.0.0.2:{V}/x", "warning", "Probe terminated redirects, Response body: redirect body", []],
  ["http://user:pw@127.0.0.1:{O}/x", "success", "other /x", [["other", "/x", "127.0.0.1:{O}"]]],
  ["http://127.0.0.1:{T}%40127.0.0.2:{V}/x", "failure", "Get \"http://127.0.0.1:{T}/start/{I}\": failed to parse Location header \"http://127.0.0.1:{T}%40127.0.0.2:{V}/x\": parse \"http://127.0.0.1:{T}%40127.0.0.2:{V}/x\": invalid port \":{T}%40127.0.0.2:{V}\" after host", []],
  ["http://127.0.0.1%40127.0.0.2:{V}/x", "failure", "Get \"http://127.0.0.1:{T}/start/{I}\": failed to parse Location header \"http://127.0.0.1%40127.0.0.2:{V}/x\": parse \"http://127.0.0.1%40127.0.0.2:{V}/x\": invalid URL escape \"%40\"", []],
  ["http://a@b@127.0.0.2:{V}/x", "warning", "Probe terminated redirects, Response body: redirect body", []],
  ["http://127.0.0.1:{T}@127.0.0.2:{V}/x", "warning", "Probe terminated redirects, Response body: redirect body", []],
  ["http://127.0.0.1@127.0.0.2:{V}/x", "warning", "Probe terminated redirects, Response body: redirect body", []],
  ["http://127.0.0.2:{V}@127.0.0.1:{O}/x", "success", "other /x", [["other", "/x", "127.0.0.1:{O}"]]],
  ["http://127.000.000.001:{O}/x", "warning", "Probe terminated redirects, Response body: redirect body", []],
  ["http://2130706433:{O}/x", "warning", "Probe terminated redirects, Response body: redirect body", []],
  ["http://0x7f.0.0.1:{O}/x", "warning", "Probe terminated redirects, Response body: redirect body", []],
  ["http://0X7F000001:{O}/x", "warning", "Probe terminated redirects, Response body: redirect body", []],
  ["http://0177.0.0.1:{O}/x", "warning", "Probe terminated redirects, Response body: redirect body", []],
  ["http://127.1:{O}/x", "warning", "Probe terminated redirects, Response body: redirect body", []],
  ["http://[::ffff:127.0.0.1]:{O}/x", "warning", "Probe terminated redirects, Response body: redirect body", []],
  ["http://[::ffff:7f00:1]:{O}/x", "warning", "Probe terminated redirects, Response body: redirect body", []],
  ["http://[::127.0.0.1]:{O}/x", "warning", "Probe terminated redirects, Response body: redirect body", []],
  ["http://127.0.0.1.:{O}/x", "warning", "Probe terminated redirects, Response body: redirect body", []],
  ["http://LOCALHOST:{O}/x", "warning", "Probe terminated redirects, Response body: redirect body", []],
  ["HTTP://127.0.0.1:{O}/x", "success", "other /x", [["other", "/x", "127.0.0.1:{O}"]]],
  ["http:///x", "warning", "Probe terminated redirects, Response body: redirect body", []],
  ["http://:{O}/x", "warning", "Probe terminated redirects, Response body: redirect body", []],
  ["http://127.0.0.1:{O}/x", "success", "other /x", [["other", "/x", "127.0.0.1:{O}"]]],
  ["https://127.0.0.1:{S}/x", "success", "tls /x", [["tls", "/x", "127.0.0.1:{S}"]]],
  ["/x?y=1", "success", "target /x?y=1", [["target", "/x?y=1", "127.0.0.1:{T}"]]],
  ["x", "success", "target /start/x", [["target", "/start/x", "127.0.0.1:{T}"]]],
  ["../../y", "success", "target /y", [["target", "/y", "127.0.0.1:{T}"]]],
  ["//127.0.0.2:{V}/x", "warning", "Probe terminated redirects, Response body: redirect body", []],
  ["//127.0.0.1:{O}/x", "success", "other /x", [["other", "/x", "127.0.0.1:{O}"]]],
  ["///127.0.0.2:{V}/x", "success", "target ///127.0.0.2:{V}/x", [["target", "///127.0.0.2:{V}/x", "127.0.0.1:{T}"]]],
  ["http://[::1", "failure", "Get \"http://127.0.0.1:{T}/start/{I}\": failed to parse Location header \"http://[::1\": parse \"http://[::1\": missing ']' in host", []],
  ["http://127.0.0.1:abc/x", "failure", "Get \"http://127.0.0.1:{T}/start/{I}\": failed to parse Location header \"http://127.0.0.1:abc/x\": parse \"http://127.0.0.1:abc/x\": invalid port \":abc\" after host", []],
  ["http://127.0.0.1:{O}/a b", "success", "other /a%20b", [["other", "/a%20b", "127.0.0.1:{O}"]]],
  ["http://127.0.0.1 :{O}/x", "failure", "Get \"http://127.0.0.1:{T}/start/{I}\": failed to parse Location header \"http://127.0.0.1 :{O}/x\": parse \"http://127.0.0.1 :{O}/x\": invalid character \" \" in host name", []],
  ["http://127.0.0.1:{O}/x\ty", "failure", "Get \"http://127.0.0.1:{T}/start/{I}\": failed to parse Location header \"http://127.0.0.1:{O}/x\\ty\": parse \"http://127.0.0.1:{O}/x\\ty\": net/url: invalid control character in URL", []],
  ["http://127.0.0.1:99999/x", "failure", "Get \"http://127.0.0.1:99999/x\": dial tcp: address 99999: invalid port", []],
  ["http://127.0.0.1:0{O}/x", "success", "other /x", [["other", "/x", "127.0.0.1:0{O}"]]],
  ["ftp://127.0.0.1/x", "failure", "Get \"ftp://127.0.0.1/x\": unsupported protocol scheme \"ftp\"", []],
  ["ftp://127.0.0.2/x", "warning", "Probe terminated redirects, Response body: redirect body", []],
  ["mailto:x@127.0.0.1", "warning", "Probe terminated redirects, Response body: redirect body", []],
  ["http:x", "warning", "Probe terminated redirects, Response body: redirect body", []],
  ["http://127.0.0.1:{O}/x#frag", "success", "other /x", [["other", "/x", "127.0.0.1:{O}"]]],
  ["/%zz", "failure", "Get \"http://127.0.0.1:{T}/start/{I}\": failed to parse Location header \"/%zz\": parse \"/%zz\": invalid URL escape \"%zz\"", []],
  ["http://127.0.0.1%2f:{O}/", "failure", "Get \"http://127.0.0.1:{T}/start/{I}\": failed to parse Location header \"http://127.0.0.1%2f:{O}/\": parse \"http://127.0.0.1%2f:{O}/\": invalid URL escape \"%2f\"", []],
  ["http://[127.0.0.1]:{O}/x", "failure", "Get \"http://127.0.0.1:{T}/start/{I}\": failed to parse Location header \"http://[127.0.0.1]:{O}/x\": parse \"http://[127.0.0.1]:{O}/x\": invalid IP-literal", []],
  ["http://127.0.0.1:{O}:{V}/x", "failure", "Get \"http://127.0.0.1:{T}/start/{I}\": failed to parse Location header \"http://127.0.0.1:{O}:{V}/x\": parse \"http://127.0.0.1:{O}:{V}/x\": invalid port \":{O}:{V}\" after host", []],
  ["http://%31%32%37.0.0.1:{O}/", "failure", "Get \"http://127.0.0.1:{T}/start/{I}\": failed to parse Location header \"http://%31%32%37.0.0.1:{O}/\": parse \"http://%31%32%37.0.0.1:{O}/\": invalid URL escape \"%31\"", []],
  ["\\\\127.0.0.2:{V}/x", "failure", "Get \"http://127.0.0.1:{T}/start/{I}\": failed to parse Location header \"\\\\\\\\127.0.0.2:{V}/x\": parse \"\\\\\\\\127.0.0.2:{V}/x\": first path segment in URL cannot contain colon", []],
  ["/\\127.0.0.2:{V}/x", "success", "target /%5C127.0.0.2:{V}/x", [["target", "/%5C127.0.0.2:{V}/x", "127.0.0.1:{T}"]]],
  ["http:\\\\127.0.0.2:{V}/x", "warning", "Probe terminated redirects, Response body: redirect body", []],
  ["http://127.0.0.2\\.127.0.0.1:{O}/x", "failure", "Get \"http://127.0.0.1:{T}/start/{I}\": failed to parse Location header \"http://127.0.0.2\\\\.127.0.0.1:{O}/x\": parse \"http://127.0.0.2\\\\.127.0.0.1:{O}/x\": invalid character \"\\\\\" in host name", []],
  ["http://127.0.0.1:{O}/../x", "success", "other /x", [["other", "/x", "127.0.0.1:{O}"]]],
  ["http://ä:{O}/", "warning", "Probe terminated redirects, Response body: redirect body", []],
  ["http://127.0.0.1:{O}\\x", "failure", "Get \"http://127.0.0.1:{T}/start/{I}\": failed to parse Location header \"http://127.0.0.1:{O}\\\\x\": parse \"http://127.0.0.1:{O}\\\\x\": invalid port \":{O}\\\\x\" after host", []],
  ["http://127.0.0.1:{O}/%2e%2e/x", "success", "other /%2e%2e/x", [["other", "/%2e%2e/x", "127.0.0.1:{O}"]]],
];
const v6: readonly Case[] = [
  ["http://[::1]:{O}/x", "success", "other /x", [["other", "/x", "[::1]:{O}"]]],
  ["http://[0:0:0:0:0:0:0:1]:{O}/x", "warning", "Probe terminated redirects, Response body: redirect body", []],
  ["http://[::0001]:{O}/x", "warning", "Probe terminated redirects, Response body: redirect body", []],
  ["http://[0::1]:{O}/x", "warning", "Probe terminated redirects, Response body: redirect body", []],
  ["http://[::1%25lo]:{O}/x", "warning", "Probe terminated redirects, Response body: redirect body", []],
  ["http://[::1%lo]:{O}/x", "failure", "Get \"http://[::1]:{T}/start/{I}\": failed to parse Location header \"http://[::1%lo]:{O}/x\": parse \"http://[::1%lo]:{O}/x\": invalid URL escape \"%lo\"", []],
  ["http://[::1]:{O}\\@127.0.0.2:{V}/x", "failure", "Get \"http://[::1]:{T}/start/{I}\": failed to parse Location header \"http://[::1]:{O}\\\\@127.0.0.2:{V}/x\": parse \"http://[::1]:{O}\\\\@127.0.0.2:{V}/x\": net/url: invalid userinfo", []],
  ["http://[::1]@127.0.0.2:{V}/x", "failure", "Get \"http://[::1]:{T}/start/{I}\": failed to parse Location header \"http://[::1]@127.0.0.2:{V}/x\": parse \"http://[::1]@127.0.0.2:{V}/x\": net/url: invalid userinfo", []],
  ["http://[::ffff:127.0.0.2]:{V}/x", "warning", "Probe terminated redirects, Response body: redirect body", []],
  ["http://[::1]:{O}/a/../b", "success", "other /b", [["other", "/b", "[::1]:{O}"]]],
  ["//[::1]:{O}/x", "success", "other /x", [["other", "/x", "[::1]:{O}"]]],
  ["/rel", "success", "target /rel", [["target", "/rel", "[::1]:{T}"]]],
];

interface Hit {
  readonly srv: string;
  readonly uri: string;
  readonly host: string;
}

/** A raw HTTP/1.1 target, so a Location can carry any bytes (tabs, backslashes, UTF-8). */
function target(hits: Hit[], locationOf: (i: number) => string): (socket: net.Socket) => void {
  return (socket) => {
    let head = '';
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => {
      head += chunk.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      const [, uri = ''] = /^GET (\S+) HTTP/.exec(head) ?? [];
      const host = /\r\nhost: *([^\r]*)/i.exec(head)?.[1] ?? '';
      hits.push({ srv: 'target', uri, host });
      const start = /^\/start\/(\d+)$/.exec(uri);
      const response = start === null
        ? Buffer.from(`HTTP/1.1 200 OK\r\nContent-Length: ${Buffer.byteLength(`target ${uri}`)}\r\nConnection: close\r\n\r\ntarget ${uri}`)
        : Buffer.concat([Buffer.from('HTTP/1.1 302 Found\r\nLocation: '), Buffer.from(locationOf(Number(start[1])), 'utf8'), Buffer.from('\r\nContent-Length: 13\r\nConnection: close\r\n\r\nredirect body')]);
      socket.end(response);
    });
  };
}

function recording(srv: string, hits: Hit[]): http.RequestListener {
  return (req, res) => {
    hits.push({ srv, uri: req.url ?? '', host: req.headers.host ?? '' });
    res.end(`${srv} ${req.url ?? ''}`);
  };
}

const dispatchers: [string, () => Dispatcher][] = [
  ['ProbeDispatcher', () => new ProbeDispatcher()],
  ['undici Agent (reference)', () => new Agent({ pipelining: 0, allowH2: false, connect: { rejectUnauthorized: false } })],
];

for (const [family, podIP, cases] of [['IPv4', '127.0.0.1', v4], ['IPv6', '::1', v6]] as const) {
  for (const [name, makeDispatcher] of dispatchers) {
    describe(`redirects as the kubelet follows them (${family} pod, ${name})`, () => {
      const hits: Hit[] = [];
      let victimConnections = 0;
      let servers: Listening[] = [];
      let ports: Record<string, number> = {};
      let dispatcher: Dispatcher;
      let prober: HttpProber;
      const fill = (s: string, i: number): string => s.replace(/\{([TOSVI])\}/g, (_m, k: string) => String(k === 'I' ? i : ports[k]));

      before(async () => {
        const victim = await tcpServer((s) => {
          victimConnections++;
          s.destroy();
        }, '127.0.0.2');
        const t = await tcpServer(target(hits, (i) => fill(cases[i]?.[0] ?? '/', i)), podIP);
        const other = await httpServer(recording('other', hits), podIP);
        const tls = await httpsServer(recording('tls', hits), podIP);
        servers = [victim, t, other, tls];
        ports = { T: t.port, O: other.port, S: tls.port, V: victim.port };
        dispatcher = makeDispatcher();
        prober = createHttpProber({ userAgent: 'kube-probe/1.37', dispatcher });
      });
      after(async () => {
        await Promise.all(servers.map((s) => s.close()));
        await dispatcher.close();
      });

      for (const [i, [location, kind, output, hops]] of cases.entries()) {
        it(`Location ${JSON.stringify(location)} → ${kind}`, async () => {
          const before = hits.length;
          const o = await prober({ scheme: 'HTTP', ip: podIP, port: ports['T'] ?? 0, path: `/start/${i}`, headers: [], timeoutMs: 2000 });
          const text = 'output' in o ? o.output : o.error;
          assert.deepEqual({ kind: o.kind, text }, { kind, text: fill(output, i) });
          const seen = hits.slice(before + 1).map((h) => [h.srv, h.uri, h.host]);
          assert.deepEqual(seen, hops.map((h) => h.map((s) => fill(s, i))));
          assert.equal(victimConnections, 0, 'the victim listener on 127.0.0.2 is never connected to');
        });
      }
    });
  }
}

describe('checkHop vets every address before it is connected to', () => {
  const hits: Hit[] = [];
  let servers: Listening[] = [];
  let targetPort = 0;
  let otherPort = 0;
  const prober = createHttpProber({ userAgent: 'kube-probe/1.37' });

  before(async () => {
    const other = await httpServer(recording('other', hits));
    otherPort = other.port;
    const t = await tcpServer(target(hits, () => `http://127.0.0.1:${otherPort}/x`));
    targetPort = t.port;
    servers = [t, other];
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });

  it('a redirect to a refused port is a prober error and that port is never connected to', async () => {
    const checked: string[] = [];
    const checkHop = (ip: string, port: number): string | undefined => {
      checked.push(`${ip}:${port}`);
      return port === otherPort ? `port ${port} is not declared by the container` : undefined;
    };
    const before = hits.length;
    const o = await prober({ scheme: 'HTTP', ip: '127.0.0.1', port: targetPort, path: '/start/0', headers: [], timeoutMs: 2000, checkHop });
    assert.deepEqual(o, { kind: 'errored', error: `Get "http://127.0.0.1:${otherPort}/x": not connected: port ${otherPort} is not declared by the container` });
    assert.deepEqual(checked, [`127.0.0.1:${targetPort}`, `127.0.0.1:${otherPort}`]);
    assert.deepEqual(hits.slice(before).map((h) => h.srv), ['target']);
  });

  it('a refused first address is never connected to', async () => {
    const before = hits.length;
    const o = await prober({ scheme: 'HTTP', ip: '127.0.0.1', port: targetPort, path: '/start/0', headers: [], timeoutMs: 2000, checkHop: () => 'not allowed' });
    assert.deepEqual(o, { kind: 'errored', error: `Get "http://127.0.0.1:${targetPort}/start/0": not connected: not allowed` });
    assert.equal(hits.length, before);
  });

  it('an allowed redirect is followed', async () => {
    const o = await prober({ scheme: 'HTTP', ip: '127.0.0.1', port: targetPort, path: '/start/0', headers: [], timeoutMs: 2000, checkHop: () => undefined });
    assert.deepEqual(o, { kind: 'success', output: 'other /x' });
  });
});
