import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { status as grpcStatus } from '@grpc/grpc-js';
import type { ServiceError } from '@grpc/grpc-js';
import { createGrpcProber, formatGoDuration } from '../../../src/probing/index.ts';
import type { GrpcProbeRequest } from '../../../src/probing/index.ts';
import { decodeResponse, encodeRequest } from '../../../src/probing/grpc/codec.ts';
import { customHealthServer, emptyGrpcServer, healthServer } from '../../support/grpc-servers.ts';
import { closedPort, tcpServer } from '../../support/loopback.ts';

const probe = createGrpcProber({ userAgent: 'kube-probe/1.37' });
const req = (port: number, over: Partial<GrpcProbeRequest> = {}): GrpcProbeRequest => ({ ip: '127.0.0.1', port, service: '', timeoutMs: 1000, ...over });

describe('formatGoDuration', () => {
  it('prints durations like Go', () => {
    assert.equal(formatGoDuration(1000), '1s');
    assert.equal(formatGoDuration(1500), '1.5s');
    assert.equal(formatGoDuration(300), '300ms');
    assert.equal(formatGoDuration(120_000), '2m0s');
    assert.equal(formatGoDuration(3_661_500), '1h1m1.5s');
    assert.equal(formatGoDuration(0), '0s');
  });
});

describe('gRPC health codec', () => {
  it('frames requests and reads statuses', () => {
    assert.deepEqual([...encodeRequest('')], [0, 0, 0, 0, 0]);
    assert.deepEqual([...encodeRequest('db')], [0, 0, 0, 0, 4, 0x0a, 2, 0x64, 0x62]);
    assert.deepEqual(decodeResponse(Buffer.from([0, 0, 0, 0, 2, 0x08, 1])), { status: 1 });
    assert.deepEqual(decodeResponse(Buffer.from([0, 0, 0, 0, 0])), { status: 0 });
    assert.ok('error' in decodeResponse(Buffer.from([0, 0, 0, 0, 9, 0x08])));
  });
});

describe('gRPC probe against real servers', () => {
  const cleanup: (() => Promise<void>)[] = [];
  after(async () => {
    await Promise.all(cleanup.map((c) => c()));
  });

  it('SERVING is success; NOT_SERVING and UNKNOWN are failures with the kubelet message', async () => {
    const s = await healthServer({ '': 'SERVING', db: 'NOT_SERVING', cache: 'UNKNOWN' });
    cleanup.push(s.close);
    assert.deepEqual(await probe(req(s.port)), { kind: 'success', output: 'service healthy' });
    assert.deepEqual(await probe(req(s.port, { service: 'db' })), { kind: 'failure', output: 'service unhealthy (responded with "NOT_SERVING")' });
    assert.deepEqual(await probe(req(s.port, { service: 'cache' })), { kind: 'failure', output: 'service unhealthy (responded with "UNKNOWN")' });
    s.health?.setStatus('db', 'SERVING');
    assert.equal((await probe(req(s.port, { service: 'db' }))).kind, 'success');
  });

  it('a service the server does not know (NOT_FOUND) is a failure', async () => {
    const s = await healthServer({ '': 'SERVING' });
    cleanup.push(s.close);
    assert.deepEqual(await probe(req(s.port, { service: 'nope' })), {
      kind: 'failure',
      output: 'error: health rpc probe failed: rpc error: code = NotFound desc = Health status unknown for service nope',
    });
  });

  it('SERVICE_UNKNOWN is a failure', async () => {
    const s = await customHealthServer((_service, reply) => reply(null, { status: 'SERVICE_UNKNOWN' }));
    cleanup.push(s.close);
    assert.deepEqual(await probe(req(s.port)), { kind: 'failure', output: 'service unhealthy (responded with "SERVICE_UNKNOWN")' });
  });

  it('a server without the health service is UNIMPLEMENTED', async () => {
    const s = await emptyGrpcServer();
    cleanup.push(s.close);
    const o = await probe(req(s.port));
    assert.equal(o.kind, 'failure');
    assert.match('output' in o ? o.output : '', /^error: this server does not implement the grpc health protocol \(grpc\.health\.v1\.Health\): /);
  });

  it('a handler that never answers times out within the deadline', async () => {
    const s = await customHealthServer(() => undefined);
    cleanup.push(s.close);
    const t0 = performance.now();
    assert.deepEqual(await probe(req(s.port, { timeoutMs: 300 })), { kind: 'failure', output: 'timeout: health rpc did not complete within 300ms' });
    assert.ok(performance.now() - t0 < 1500);
  });

  it('a server error status is a failure with its code', async () => {
    const s = await customHealthServer((_service, reply) => reply({ code: grpcStatus.UNAVAILABLE, details: 'draining', name: 'x', message: 'x', metadata: undefined } as unknown as ServiceError));
    cleanup.push(s.close);
    assert.deepEqual(await probe(req(s.port)), { kind: 'failure', output: 'error: health rpc probe failed: rpc error: code = Unavailable desc = draining' });
  });

  it('sends the configured user agent and the exact service name', async () => {
    const s = await customHealthServer((_service, reply) => reply(null, { status: 'SERVING' }));
    cleanup.push(s.close);
    await probe(req(s.port, { service: 'grpc.health.v1.Health' }));
    assert.equal(s.seen[0]!.service, 'grpc.health.v1.Health');
    assert.match(s.seen[0]!.userAgent, /^kube-probe\/1\.37/);
  });

  it('a refused connection waits for the deadline, as grpc-go\'s blocking dial does', async () => {
    const port = await closedPort();
    assert.deepEqual(await probe(req(port, { timeoutMs: 300 })), {
      kind: 'failure',
      output: `timeout: failed to connect service "127.0.0.1:${port}" within 300ms: context deadline exceeded`,
    });
  });

  it('a server that accepts and never speaks, speaks HTTP/1.1 or resets is a connect timeout', async () => {
    const silent = await tcpServer(() => undefined);
    const http1 = await tcpServer((sock) => {
      sock.on('error', () => undefined);
      sock.once('data', () => sock.end('HTTP/1.1 400 Bad Request\r\n\r\n'));
    });
    const reset = await tcpServer((sock) => {
      sock.resetAndDestroy();
    });
    cleanup.push(silent.close, http1.close, reset.close);
    for (const port of [silent.port, http1.port, reset.port]) {
      assert.deepEqual(await probe(req(port, { timeoutMs: 300 })), {
        kind: 'failure',
        output: `timeout: failed to connect service "127.0.0.1:${port}" within 300ms: context deadline exceeded`,
      });
    }
  });

  it('works over IPv6 loopback', async () => {
    const s = await healthServer({ '': 'SERVING' }, '::1');
    cleanup.push(s.close);
    assert.equal((await probe(req(s.port, { ip: '::1' }))).kind, 'success');
  });

  it('a caller abort ends the probe as errored', async () => {
    const s = await customHealthServer(() => undefined);
    cleanup.push(s.close);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    assert.deepEqual(await probe(req(s.port, { timeoutMs: 5000 }), controller.signal), { kind: 'errored', error: 'probe cancelled' });
  });

  it('leaves no sessions, sockets or timers behind after many probes', async () => {
    const s = await healthServer({ '': 'SERVING', down: 'NOT_SERVING' });
    cleanup.push(s.close);
    const baseline = process.getActiveResourcesInfo().length;
    for (let i = 0; i < 100; i++) await probe(req(s.port, { service: i % 2 === 0 ? '' : 'down' }));
    await new Promise((r) => setTimeout(r, 100));
    assert.ok(process.getActiveResourcesInfo().length <= baseline, JSON.stringify(process.getActiveResourcesInfo()));
  });
});
