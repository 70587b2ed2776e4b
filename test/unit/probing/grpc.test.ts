import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import type { ServiceError } from '@grpc/grpc-js';
import type { ServingStatus } from 'grpc-health-check';
import { createGrpcProber } from '../../../src/probing/grpc/index.ts';
import type { GrpcProbeRequest } from '../../../src/probing/request.ts';
import { customHealthServer, emptyGrpcServer, healthServer } from '../../support/grpc-servers.ts';
import { closedPort } from '../../support/loopback.ts';

const probe = createGrpcProber({ userAgent: 'kube-probe/1.37' });
const req = (port: number, over: Partial<GrpcProbeRequest> = {}): GrpcProbeRequest => ({ ip: '127.0.0.1', port, service: '', timeoutMs: 1000, ...over });
const fail = (output: string): { kind: 'failure'; output: string } => ({ kind: 'failure', output });
const statusError = (code: grpc.status, details: string): ServiceError => Object.assign(new Error(details), { code, details, metadata: new grpc.Metadata() });

describe('gRPC probe against grpc-js servers (grpc-health-check HealthImplementation)', () => {
  const cleanup: (() => Promise<void>)[] = [];
  after(async () => {
    await Promise.all(cleanup.map((c) => c()));
  });

  it('SERVING is success; NOT_SERVING and UNKNOWN are failures; a status flip is seen on the next probe', async () => {
    const s = await healthServer({ '': 'SERVING', db: 'NOT_SERVING', cache: 'UNKNOWN' });
    cleanup.push(s.close);
    assert.deepEqual(await probe(req(s.port)), { kind: 'success', output: 'service healthy' });
    assert.deepEqual(await probe(req(s.port, { service: 'db' })), fail('service unhealthy (responded with "NOT_SERVING")'));
    assert.deepEqual(await probe(req(s.port, { service: 'cache' })), fail('service unhealthy (responded with "UNKNOWN")'));
    s.health?.setStatus('db', 'SERVING');
    assert.deepEqual(await probe(req(s.port, { service: 'db' })), { kind: 'success', output: 'service healthy' });
  });

  it('an empty service asks for the overall health', async () => {
    const s = await healthServer({ '': 'NOT_SERVING', db: 'SERVING' });
    cleanup.push(s.close);
    assert.deepEqual(await probe(req(s.port)), fail('service unhealthy (responded with "NOT_SERVING")'));
  });

  it('a registered service reporting SERVICE_UNKNOWN is unhealthy', async () => {
    const s = await healthServer({ '': 'SERVING' });
    cleanup.push(s.close);
    s.health?.setStatus('watch-only', 'SERVICE_UNKNOWN' as ServingStatus); // valid on the wire; the typings omit it
    assert.deepEqual(await probe(req(s.port, { service: 'watch-only' })), fail('service unhealthy (responded with "SERVICE_UNKNOWN")'));
  });

  it('a service the server does not know (NOT_FOUND) is an rpc failure', async () => {
    const s = await healthServer({ '': 'SERVING' });
    cleanup.push(s.close);
    assert.deepEqual(
      await probe(req(s.port, { service: 'nope' })),
      fail('error: health rpc probe failed: rpc error: code = NotFound desc = Health status unknown for service nope'),
    );
  });

  it('a server without the health service is UNIMPLEMENTED', async () => {
    const s = await emptyGrpcServer();
    cleanup.push(s.close);
    assert.deepEqual(
      await probe(req(s.port)),
      fail('error: this server does not implement the grpc health protocol (grpc.health.v1.Health): The server does not implement the method /grpc.health.v1.Health/Check'),
    );
  });

  it('a handler that never answers times out at the deadline with the Go-formatted timeout', async () => {
    const s = await customHealthServer(() => undefined);
    cleanup.push(s.close);
    const t0 = performance.now();
    assert.deepEqual(await probe(req(s.port, { timeoutMs: 300 })), fail('timeout: health rpc did not complete within 300ms'));
    const elapsed = performance.now() - t0;
    assert.ok(elapsed >= 250 && elapsed < 1000, `took ${elapsed} ms`);
    assert.deepEqual(await probe(req(s.port, { timeoutMs: 1000 })), fail('timeout: health rpc did not complete within 1s'));
  });

  it('an error status from the handler is an rpc failure with grpc-go wording', async () => {
    const s = await customHealthServer((_service, reply) => reply(statusError(grpc.status.UNAVAILABLE, 'draining: 50% done')));
    cleanup.push(s.close);
    assert.deepEqual(await probe(req(s.port)), fail('error: health rpc probe failed: rpc error: code = Unavailable desc = draining: 50% done'));
  });

  it('sends the configured user-agent and the exact service name', async () => {
    const s = await customHealthServer((_service, reply) => reply(null, { status: 'SERVING' }));
    cleanup.push(s.close);
    const probeAs = createGrpcProber({ userAgent: 'kube-probe/1.37' });
    await probeAs(req(s.port, { service: 'grpc.health.v1.Health' }));
    await probeAs(req(s.port, { service: 'ünïcødé/サービス' }));
    await probeAs(req(s.port));
    assert.deepEqual(s.seen, [
      { userAgent: 'kube-probe/1.37 grpc-go/1.82.1', service: 'grpc.health.v1.Health' },
      { userAgent: 'kube-probe/1.37 grpc-go/1.82.1', service: 'ünïcødé/サービス' },
      { userAgent: 'kube-probe/1.37 grpc-go/1.82.1', service: '' },
    ]);
  });

  it('works over IPv6 loopback', async () => {
    const s = await healthServer({ '': 'SERVING' }, '::1');
    cleanup.push(s.close);
    assert.deepEqual(await probe(req(s.port, { ip: '::1' })), { kind: 'success', output: 'service healthy' });
    const refused = await closedPort();
    assert.deepEqual(
      await probe(req(refused, { ip: '::1', timeoutMs: 200 })),
      fail(`timeout: failed to connect service "[::1]:${refused}" within 200ms: context deadline exceeded`),
    );
  });

  it('a refused connection waits for the deadline, as grpc-go\'s blocking dial does', async () => {
    const port = await closedPort();
    const t0 = performance.now();
    assert.deepEqual(await probe(req(port, { timeoutMs: 300 })), fail(`timeout: failed to connect service "127.0.0.1:${port}" within 300ms: context deadline exceeded`));
    assert.ok(performance.now() - t0 >= 250);
  });

  it('retries the dial after grpc-go\'s 1 s backoff, so a server that comes up within the timeout is reached', async () => {
    const port = await closedPort();
    const late = new grpc.Server();
    const { HealthImplementation } = await import('grpc-health-check');
    new HealthImplementation({ '': 'SERVING' }).addToServer(late);
    cleanup.push(() => {
      late.forceShutdown();
      return Promise.resolve();
    });
    setTimeout(() => late.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), () => undefined), 300);
    const t0 = performance.now();
    assert.deepEqual(await probe(req(port, { timeoutMs: 2500 })), { kind: 'success', output: 'service healthy' });
    const elapsed = performance.now() - t0;
    assert.ok(elapsed >= 950 && elapsed < 1500, `took ${elapsed} ms`);
  });

  it('a caller abort ends the probe as errored, in the dial or in the call', async () => {
    const s = await customHealthServer(() => undefined);
    cleanup.push(s.close);
    const inCall = new AbortController();
    setTimeout(() => inCall.abort(), 50);
    assert.deepEqual(await probe(req(s.port, { timeoutMs: 5000 }), inCall.signal), { kind: 'errored', error: 'probe cancelled' });
    const inDial = new AbortController();
    setTimeout(() => inDial.abort(), 50);
    assert.deepEqual(await probe(req(await closedPort(), { timeoutMs: 5000 }), inDial.signal), { kind: 'errored', error: 'probe cancelled' });
    assert.deepEqual(await probe(req(s.port), AbortSignal.abort()), { kind: 'errored', error: 'probe cancelled' });
  });

  it('leaves no sessions, sockets or timers behind after 200 probes', async () => {
    const s = await healthServer({ '': 'SERVING', down: 'NOT_SERVING' });
    cleanup.push(s.close);
    await probe(req(s.port)); // warm up lazily created handles
    await new Promise((r) => setTimeout(r, 50));
    const baseline = process.getActiveResourcesInfo().filter((r) => r !== 'TTYWrap').sort();
    const results = [];
    for (let i = 0; i < 200; i++) results.push(await probe(req(s.port, { service: i % 2 === 0 ? '' : 'down' })));
    assert.equal(results.filter((o) => o.kind === 'success').length, 100);
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(process.getActiveResourcesInfo().filter((r) => r !== 'TTYWrap').sort(), baseline);
  });
});
