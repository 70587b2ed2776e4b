import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createGrpcProber } from '../../../src/probing/grpc/index.ts';
import { grpcGoServer } from '../../support/grpc-go.ts';

const probe = createGrpcProber({ userAgent: 'kube-probe/1.37' });

describe('gRPC probe against a real grpc-go server slower than the deadline', () => {
  const cleanup: (() => Promise<void>)[] = [];
  after(async () => {
    await Promise.all(cleanup.map((c) => c()));
  });

  it('always ends as the kubelet does, "did not complete within", though the server resets the stream with CANCEL at the same moment', async () => {
    // grpc-go's server resets the stream (CANCEL) when the grpc-timeout it was
    // sent runs out, just after the client's own deadline; whichever of the two
    // the client sees first, grpc-go reports DeadlineExceeded. Measured with
    // the kubelet's prober: 20 of 20 runs. Before the fix, 10-35 % of these
    // probes (4 at a time) saw the reset before their deadline timer fired
    // and reported Canceled.
    const s = await grpcGoServer({ delayMs: 10_000 });
    cleanup.push(s.close);
    const runs = [];
    for (let round = 0; round < 10; round++) {
      runs.push(...(await Promise.all(Array.from({ length: 4 }, () => probe({ ip: '127.0.0.1', port: s.port, service: '', timeoutMs: 300 })))));
    }
    const outputs = new Map<string, number>();
    for (const r of runs) {
      const key = JSON.stringify(r);
      outputs.set(key, (outputs.get(key) ?? 0) + 1);
    }
    assert.deepEqual([...outputs], [[JSON.stringify({ kind: 'failure', output: 'timeout: health rpc did not complete within 300ms' }), 40]]);
  });
});
