import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { after, describe, it } from 'node:test';
import { reconnectDelayMs } from '../../../src/probing/grpc/dial.ts';
import { createGrpcProber } from '../../../src/probing/grpc/index.ts';
import type { GrpcProbeRequest } from '../../../src/probing/request.ts';
import { rawH2GoServer } from '../../support/grpc-go.ts';
import { rawH2Server, respondGrpc } from '../../support/grpc-servers.ts';
import { tcpServer } from '../../support/loopback.ts';

const probe = createGrpcProber({ userAgent: 'kube-probe/1.37' });
const req = (port: number, over: Partial<GrpcProbeRequest> = {}): GrpcProbeRequest => ({ ip: '127.0.0.1', port, service: '', timeoutMs: 1000, ...over });
const fail = (output: string): { kind: 'failure'; output: string } => ({ kind: 'failure', output });
const rpcFailed = (desc: string): { kind: 'failure'; output: string } => fail(`error: health rpc probe failed: rpc error: ${desc}`);

describe('gRPC probe against servers that misbehave on the wire', () => {
  const cleanup: (() => Promise<void>)[] = [];
  after(async () => {
    await Promise.all(cleanup.map((c) => c()));
  });
  const serve = async (onStream: Parameters<typeof rawH2Server>[0]): Promise<number> => {
    const s = await rawH2Server(onStream);
    cleanup.push(s.close);
    return s.port;
  };

  it('sends the request grpc-go sends: headers, grpc-timeout within the deadline, framed message', async () => {
    let seen: { headers: http2.IncomingHttpHeaders; body: Buffer } | undefined;
    const port = await serve((stream, headers, body) => {
      seen = { headers, body };
      respondGrpc(stream, Buffer.from([0x08, 1]));
    });
    assert.deepEqual(await probe(req(port, { service: 'db' })), { kind: 'success', output: 'service healthy' });
    assert.ok(seen !== undefined);
    const h = seen.headers;
    // Recorded from the kubelet's prober (k8s.io/kubernetes v1.37.2, grpc-go
    // 1.82.1, gzip linked) against a recording node:http2 server: these
    // fields, in this order, and nothing else.
    const { 'grpc-timeout': timeout = '', ...rest } = h;
    assert.deepEqual(Object.entries(rest), [
      [':method', 'POST'],
      [':scheme', 'http'],
      [':path', '/grpc.health.v1.Health/Check'],
      [':authority', `127.0.0.1:${port}`],
      ['content-type', 'application/grpc'],
      ['user-agent', 'kube-probe/1.37 grpc-go/1.82.1'],
      ['te', 'trailers'],
      ['grpc-accept-encoding', 'gzip'],
    ]);
    assert.deepEqual(Object.keys(h).slice(-1), ['grpc-timeout']);
    assert.ok(typeof timeout === 'string');
    assert.match(timeout, /^\d{1,8}u$/);
    assert.ok(Number(timeout.slice(0, -1)) <= 1_000_000 && Number(timeout.slice(0, -1)) > 900_000, timeout);
    assert.deepEqual([...seen.body], [0, 0, 0, 0, 4, 0x0a, 2, 0x64, 0x62]);
  });

  it('maps a non-200 HTTP status as grpc-go does: 404 is Unimplemented, 503 an rpc failure', async () => {
    const p404 = await serve((stream) => stream.respond({ ':status': 404 }, { endStream: true }));
    assert.deepEqual(
      await probe(req(p404)),
      fail('error: this server does not implement the grpc health protocol (grpc.health.v1.Health): unexpected HTTP status code received from server: 404 (Not Found); malformed header: missing HTTP content-type'),
    );
    const p503 = await serve((stream) => {
      stream.respond({ ':status': 503, 'content-type': 'text/plain' });
      stream.end('overloaded');
    });
    assert.deepEqual(
      await probe(req(p503)),
      rpcFailed('code = Unavailable desc = unexpected HTTP status code received from server: 503 (Service Unavailable); transport: received unexpected content-type "text/plain"'),
    );
  });

  it('a 200 that is not gRPC, and a gRPC answer without trailers or grpc-status', async () => {
    const html = await serve((stream) => {
      stream.respond({ ':status': 200, 'content-type': 'text/html' });
      stream.end('<html>');
    });
    assert.deepEqual(await probe(req(html)), rpcFailed('code = Unknown desc = transport: received unexpected content-type "text/html"'));
    const noTrailers = await serve((stream) => {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' });
      stream.end(Buffer.from([0, 0, 0, 0, 2, 0x08, 1]));
    });
    assert.deepEqual(await probe(req(noTrailers)), rpcFailed('code = Internal desc = server closed the stream without sending trailers'));
    const noStatus = await serve((stream) => respondGrpc(stream, Buffer.from([0x08, 1]), { 'grpc-message': 'hm' }));
    assert.deepEqual(await probe(req(noStatus)), rpcFailed('code = Unknown desc = hm'));
    const badStatus = await serve((stream) => respondGrpc(stream, Buffer.from([0x08, 1]), { 'grpc-status': 'ok' }));
    assert.deepEqual(await probe(req(badStatus)), rpcFailed('code = Internal desc = transport: malformed grpc-status: strconv.ParseInt: parsing "ok": invalid syntax'));
  });

  it('garbage, truncated and oversized bodies are Internal/ResourceExhausted rpc failures', async () => {
    const garbage = await serve((stream) => respondGrpc(stream, Buffer.from([0xff, 0xff])));
    assert.deepEqual(await probe(req(garbage)), rpcFailed('code = Internal desc = grpc: failed to unmarshal the received message: proto: cannot parse invalid wire-format data'));
    const truncated = await serve((stream) => {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      stream.end(Buffer.from([0, 0, 0, 0, 9, 0x08]));
    });
    assert.deepEqual(await probe(req(truncated)), rpcFailed('code = Internal desc = unexpected EOF'));
    const huge = await serve((stream) => {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' });
      stream.end(Buffer.from([0, 0x7f, 0, 0, 0]));
    });
    assert.deepEqual(await probe(req(huge)), rpcFailed('code = ResourceExhausted desc = grpc: received message larger than max (2130706432 vs. 4194304)'));
    const empty = await serve((stream) => respondGrpc(stream, Buffer.alloc(0)));
    assert.deepEqual(await probe(req(empty)), fail('service unhealthy (responded with "UNKNOWN")'));
  });

  it('RST_STREAM, GOAWAY with an error and a dropped connection are rpc failures', async () => {
    const rst = await serve((stream) => stream.close(http2.constants.NGHTTP2_PROTOCOL_ERROR));
    assert.deepEqual(await probe(req(rst)), rpcFailed('code = Internal desc = stream terminated by RST_STREAM with error code: PROTOCOL_ERROR'));
    let refusals = 0;
    const refused = await serve((stream) => {
      refusals++;
      stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
    });
    assert.deepEqual(await probe(req(refused)), rpcFailed('code = Unavailable desc = stream terminated by RST_STREAM with error code: REFUSED_STREAM'));
    assert.equal(refusals, 2, "grpc-go's one transparent retry, then the refusal is the answer");
    // node:http2 drops the connection at once on a GOAWAY with an error code,
    // so outprobe fails here; the kubelet keeps waiting for the stream the
    // GOAWAY still covers (against this server: the deadline). A listed difference.
    const goaway = await serve((stream) => stream.session?.goaway(http2.constants.NGHTTP2_ENHANCE_YOUR_CALM, 0));
    assert.deepEqual(
      await probe(req(goaway)),
      rpcFailed('code = Unavailable desc = closing transport due to: connection error: desc = "error reading from server: EOF", received prior goaway: code: ENHANCE_YOUR_CALM'),
    );
    // A node:http2 server sends GOAWAY(NO_ERROR) as it destroys the socket: the kubelet names it.
    const dropped = await serve((stream) => stream.session?.socket.destroy());
    assert.deepEqual(
      await probe(req(dropped)),
      rpcFailed('code = Unavailable desc = closing transport due to: connection error: desc = "error reading from server: EOF", received prior goaway: code: NO_ERROR'),
    );
  });

  // Expected outputs recorded from the kubelet's prober against the same Go server.
  it('a GOAWAY that leaves the stream out (last-stream-id 0) is retried once on a new connection', async () => {
    const once = await rawH2GoServer('goaway-first');
    cleanup.push(once.close);
    assert.deepEqual(await probe(req(once.port)), { kind: 'success', output: 'service healthy' });
    assert.equal(once.connections(), 2);
    const always = await rawH2GoServer('goaway-all');
    cleanup.push(always.close);
    assert.deepEqual(await probe(req(always.port)), rpcFailed('code = Unavailable desc = the connection is draining'));
    assert.equal(always.connections(), 2);
    // A GOAWAY right after the server's SETTINGS, before any request: the call goes to a new connection.
    const atStart = await rawH2GoServer('goaway-start');
    cleanup.push(atStart.close);
    assert.deepEqual(await probe(req(atStart.port)), { kind: 'success', output: 'service healthy' });
    assert.equal(atStart.connections(), 2);
  });

  it('a connection reset reads as grpc-go words it, after a GOAWAY too', async () => {
    const reset = await rawH2GoServer('reset');
    cleanup.push(reset.close);
    assert.deepEqual(await probe(req(reset.port)), rpcFailed('code = Unavailable desc = error reading from server: connection reset by peer'));
    const goawayReset = await rawH2GoServer('goaway-reset');
    cleanup.push(goawayReset.close);
    assert.deepEqual(
      await probe(req(goawayReset.port)),
      rpcFailed('code = Unavailable desc = closing transport due to: connection error: desc = "error reading from server: connection reset by peer", received prior goaway: code: NO_ERROR'),
    );
  });

  it('a stream the server refuses (REFUSED_STREAM) is sent again once, on the same connection, with the time then left', async () => {
    const seen: { headers: http2.IncomingHttpHeaders; session: http2.Http2Session | undefined }[] = [];
    const s = await rawH2Server((stream, headers) => {
      seen.push({ headers, session: stream.session });
      if (seen.length === 1) stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      else respondGrpc(stream, Buffer.from([0x08, 1]));
    });
    cleanup.push(s.close);
    assert.deepEqual(await probe(req(s.port)), { kind: 'success', output: 'service healthy' });
    assert.equal(seen.length, 2);
    assert.equal(seen[0]?.session, seen[1]?.session);
    assert.equal(s.sessions.opened, 1);
    const timeouts = seen.map((x) => Number(String(x.headers['grpc-timeout']).slice(0, -1)));
    assert.ok((timeouts[1] ?? 0) < (timeouts[0] ?? 0), String(timeouts));
    // No grpc-previous-rpc-attempts: a transparent retry is not a retry attempt.
    assert.deepEqual(Object.keys(seen[0]?.headers ?? {}), Object.keys(seen[1]?.headers ?? {}));
  });

  it('a GOAWAY that lets the stream hang ends at the deadline', async () => {
    const port = await serve((stream) => stream.session?.goaway(http2.constants.NGHTTP2_NO_ERROR, 1));
    assert.deepEqual(await probe(req(port, { timeoutMs: 300 })), fail('timeout: health rpc did not complete within 300ms'));
  });

  it('servers that are not HTTP/2 never become READY: the probe ends as a connect timeout', async () => {
    const servers = [
      await tcpServer(() => undefined), // accepts, never speaks
      await tcpServer((sock) => {
        sock.on('error', () => undefined);
        sock.once('data', () => sock.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n'));
      }),
      await tcpServer((sock) => {
        sock.on('error', () => undefined);
        sock.end(Buffer.from('\x00\x01garbage\xff\xfe not a settings frame', 'latin1'));
      }),
      await tcpServer((sock) => sock.resetAndDestroy()),
    ];
    cleanup.push(...servers.map((s) => s.close));
    const outcomes = await Promise.all(servers.map((s) => probe(req(s.port, { timeoutMs: 300 }))));
    assert.deepEqual(outcomes, servers.map((s) => fail(`timeout: failed to connect service "127.0.0.1:${s.port}" within 300ms: context deadline exceeded`)));
  });

  it('an address that cannot be dialled at all is the "failed to connect" row, at once', async () => {
    assert.deepEqual(await probe(req(70_000)), fail('error: failed to connect service at "127.0.0.1:70000": Invalid URL'));
  });

  it('closes its session after every probe: 200 probes, 200 sessions opened and closed', async () => {
    const s = await rawH2Server((stream) => respondGrpc(stream, Buffer.from([0x08, 1])));
    cleanup.push(s.close);
    for (let i = 0; i < 200; i++) assert.equal((await probe(req(s.port))).kind, 'success');
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(s.sessions, { opened: 200, closed: 200 });
  });
});

describe('reconnectDelayMs (grpc-go DefaultExponential backoff)', () => {
  it('waits exactly 1 s before the first retry, then 1.6^n s with ±20 % jitter, capped at 120 s', () => {
    assert.equal(reconnectDelayMs(0, () => 0), 1000);
    assert.equal(reconnectDelayMs(1, () => 0.5), 1600);
    assert.equal(reconnectDelayMs(1, () => 0), 1280);
    assert.equal(reconnectDelayMs(1, () => 1), 1920);
    assert.equal(Math.round(reconnectDelayMs(2, () => 0.5)), 2560);
    assert.equal(reconnectDelayMs(30, () => 0.5), 120_000);
  });
});
