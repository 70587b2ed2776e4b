/**
 * The kubelet's gRPC probe outputs (pkg/probe/grpc, kubelet-probes.md §6.2).
 * The kubelet's gRPC prober never returns an error: everything but SERVING
 * is a Failure. `within` is the probe timeout as a Go duration string.
 */
import { failure, success } from '../outcome.ts';
import type { Outcome } from '../outcome.ts';
import { servingStatus } from './codec.ts';
import type { RpcResult } from './response.ts';
import { describeRpcError, grpcCode } from './status-codes.ts';

/** The blocking dial ran out of time (grpc-go returns context.DeadlineExceeded). */
export function connectTimeout(addr: string, within: string): Outcome {
  return failure(`timeout: failed to connect service ${JSON.stringify(addr)} within ${within}: context deadline exceeded`);
}

/** Any other dial error (never seen for a pod IP and a valid port, but part of the table). */
export function connectError(addr: string, detail: string): Outcome {
  return failure(`error: failed to connect service at ${JSON.stringify(addr)}: ${detail}`);
}

/** The RPC ran past the deadline (locally, or the server answered DEADLINE_EXCEEDED). */
export function rpcTimeout(within: string): Outcome {
  return failure(`timeout: health rpc did not complete within ${within}`);
}

export function rpcOutcome(result: RpcResult, within: string): Outcome {
  if ('status' in result) {
    if (result.status === 1) return success('service healthy');
    // Go's %q of the enum's String(); values outside the enum print as their number.
    const name = servingStatus[result.status] ?? String(result.status);
    return failure(`service unhealthy (responded with ${JSON.stringify(name)})`);
  }
  if (result.code === grpcCode.unimplemented) {
    return failure(`error: this server does not implement the grpc health protocol (grpc.health.v1.Health): ${result.message}`);
  }
  if (result.code === grpcCode.deadlineExceeded) return rpcTimeout(within);
  return failure(`error: health rpc probe failed: ${describeRpcError(result)}`);
}
