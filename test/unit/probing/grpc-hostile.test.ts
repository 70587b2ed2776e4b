import assert from 'node:assert/strict';
import type http2 from 'node:http2';
import { after, describe, it } from 'node:test';
import v8 from 'node:v8';
import vm from 'node:vm';
import { createGrpcProber } from '../../../src/probing/grpc/index.ts';
import type { GrpcProbeRequest } from '../../../src/probing/request.ts';
import { rawH2Server } from '../../support/grpc-servers.ts';

/**
 * Servers that try to make the prober hold memory or time: oversized or
 * endless responses, a second message, a body behind non-gRPC headers. The
 * prober must stop reading where grpc-go stops and keep nothing of the body.
 */
const probe = createGrpcProber({ userAgent: 'kube-probe/1.37' });
const req = (port: number, timeoutMs: number): GrpcProbeRequest => ({ ip: '127.0.0.1', port, service: '', timeoutMs });
const rpcFailed = (desc: string): { kind: 'failure'; output: string } => ({ kind: 'failure', output: `error: health rpc probe failed: rpc error: ${desc}` });
const grpcHeaders = { ':status': 200, 'content-type': 'application/grpc' };
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/** Writes `chunk` until the stream closes, counting the bytes the client let through (write callbacks). */
function flood(stream: http2.ServerHttp2Stream, chunk: Buffer, counter: { written: number }): void {
  const pump = (): void => {
    while (!stream.closed && !stream.destroyed) {
      const more = stream.write(chunk, (err) => {
        if (err == null) counter.written += chunk.length;
      });
      if (!more) {
        stream.once('drain', pump);
        return;
      }
    }
  };
  pump();
}

/** A frame header: flag 0 and a big-endian length. */
const prefix = (length: number): Buffer => {
  const b = Buffer.alloc(5);
  b.writeUInt32BE(length, 1);
  return b;
};
const serving = Buffer.concat([prefix(2), Buffer.from([0x08, 1])]);

describe('gRPC probe against servers that try to make it hold memory or time', () => {
  const cleanup: (() => Promise<void>)[] = [];
  after(async () => {
    await Promise.all(cleanup.map((c) => c()));
  });
  const serve = async (onStream: Parameters<typeof rawH2Server>[0]): Promise<number> => {
    const s = await rawH2Server(onStream);
    cleanup.push(s.close);
    return s.port;
  };

  it('fails at the length prefix of an oversized message, before its body is sent, and resets the stream', async () => {
    const counter = { written: 0 };
    let serverSawClose = false;
    const port = await serve((stream) => {
      stream.on('close', () => (serverSawClose = true));
      stream.respond(grpcHeaders);
      stream.write(prefix(5 * 1024 * 1024));
      flood(stream, Buffer.alloc(16 * 1024, 0x08), counter);
    });
    const started = performance.now();
    const outcome = await probe(req(port, 5000));
    const elapsed = performance.now() - started;
    assert.deepEqual(outcome, rpcFailed('code = ResourceExhausted desc = grpc: received message larger than max (5242880 vs. 4194304)'));
    assert.ok(elapsed < 1000, `took ${Math.round(elapsed)} ms of a 5 s timeout`);
    await sleep(200);
    assert.ok(serverSawClose, 'the server saw its stream closed');
    // Flow control lets through about one 64 KiB window, not the 5 MiB the prefix announced.
    assert.ok(counter.written <= 256 * 1024, `the server got ${counter.written} bytes through`);
  });

  it('holds none of an in-limit message that never completes: 8 probes in flight, 4 MiB each', async () => {
    const body = Buffer.alloc(4 * 1024 * 1024 - 1, 0); // field-less zeros: the message never ends, grpc-go waits for it
    const sent: Promise<void>[] = [];
    const port = await serve((stream) => {
      stream.respond(grpcHeaders);
      stream.write(prefix(4 * 1024 * 1024));
      sent.push(new Promise((resolve) => stream.write(body, () => resolve())));
    });
    gc();
    const before = process.memoryUsage();
    let ended = 0;
    const outcomes = Array.from({ length: 8 }, () => probe(req(port, 5000)).finally(() => ended++));
    while (sent.length < 8) await sleep(20);
    await Promise.all(sent);
    // Bytes still in flight (socket buffers on either side) are not the prober's:
    // take the lowest of several samples while the probes wait for the rest.
    let heldMiB = Infinity;
    for (let i = 0; i < 8; i++) {
      await sleep(200);
      gc();
      const now = process.memoryUsage();
      if (ended > 0) break; // a probe that ended holds nothing, whatever the code
      heldMiB = Math.min(heldMiB, (now.arrayBuffers - before.arrayBuffers + now.heapUsed - before.heapUsed) / 2 ** 20);
    }
    assert.ok(heldMiB !== Infinity, 'sampled while the probes were waiting');
    assert.ok(heldMiB < 8, `8 probes hold ${heldMiB.toFixed(1)} MiB while their messages are incomplete`);
    for (const outcome of await Promise.all(outcomes)) {
      assert.deepEqual(outcome, { kind: 'failure', output: 'timeout: health rpc did not complete within 5s' });
    }
  });

  it('still reads a message of exactly 4 MiB (SERVING plus an unknown field), sent in 16 KiB DATA frames', async () => {
    const pad = 4 * 1024 * 1024 - 3 - 4; // tag 0x08, value, tag 0x12, 4-byte varint length, then the padding
    const message = Buffer.concat([Buffer.from([0x08, 1, 0x12, (pad & 0x7f) | 0x80, ((pad >> 7) & 0x7f) | 0x80, ((pad >> 14) & 0x7f) | 0x80, pad >> 21]), Buffer.alloc(pad)]);
    assert.equal(message.length, 4 * 1024 * 1024);
    const port = await serve((stream) => {
      stream.respond(grpcHeaders, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      stream.end(Buffer.concat([prefix(message.length), message]));
    });
    assert.deepEqual(await probe(req(port, 5000)), { kind: 'success', output: 'service healthy' });
  });

  it('fails at a second message as grpc-go does, without waiting for the stream to end', async () => {
    const oversized = await serve((stream) => {
      stream.respond(grpcHeaders);
      stream.write(Buffer.concat([serving, prefix(0x7fffffff)])); // then silence
    });
    const twice = await serve((stream) => {
      stream.respond(grpcHeaders);
      stream.write(Buffer.concat([serving, serving])); // then silence
    });
    const started = performance.now();
    assert.deepEqual(await probe(req(oversized, 5000)), rpcFailed('code = ResourceExhausted desc = grpc: received message larger than max (2147483647 vs. 4194304)'));
    assert.deepEqual(
      await probe(req(twice, 5000)),
      rpcFailed('code = Internal desc = cardinality violation: expected <EOF> for non server-streaming RPCs, but received another message'),
    );
    assert.ok(performance.now() - started < 2000);
  });

  it('stops reading at response headers that are not gRPC, whatever body follows', async () => {
    const counter = { written: 0 };
    const port = await serve((stream) => {
      stream.respond({ ':status': 200, 'content-type': 'text/html' });
      flood(stream, Buffer.alloc(16 * 1024, 0x3c), counter);
    });
    const started = performance.now();
    assert.deepEqual(await probe(req(port, 5000)), rpcFailed('code = Unknown desc = transport: received unexpected content-type "text/html"'));
    assert.ok(performance.now() - started < 1000);
    await sleep(200);
    assert.ok(counter.written <= 256 * 1024, `the server got ${counter.written} bytes through`);
  });
});
