/**
 * The executors the agent probes with: outprobe's own HTTP, TCP and gRPC
 * probers, configured as the kubelet of k8s.io/kubernetes v1.37 would send
 * (User-Agent `kube-probe/1.37`). Exec requests never get here.
 */
import type { Random } from '../../../src/kernel/index.ts';
import { createGrpcProber, createHttpProber, errored, tcpProbe } from '../../../src/probing/index.ts';
import type { RunProbe } from './worker.ts';

export function createRunProbe(random: Random): RunProbe {
  const http = createHttpProber({ userAgent: 'kube-probe/1.37' });
  const grpc = createGrpcProber({ userAgent: 'kube-probe/1.37', random });
  return (req, signal) => {
    switch (req.type) {
      case 'httpGet': return http(req.request, signal);
      case 'tcpSocket': return tcpProbe(req.request, signal);
      case 'grpc': return grpc(req.request, signal);
      case 'exec': return Promise.resolve(errored('exec probes cannot run from the node agent'));
      case 'error': return Promise.resolve(errored(req.error));
    }
  };
}
