import type { EventRecorder, InvolvedObject, Logger, Metrics } from '../observability/index.ts';
import type { SelfCheckEvent } from './self-check.ts';

/**
 * Logs, metrics and an Event on the replica's own Pod (when the downward API
 * gives its name and namespace) for impairment news. The Pod, not the Lease:
 * the Lease is deleted when the replica stands down, and `kubectl describe
 * pod` is where an operator looks at a replica that fails /readyz.
 */
export function selfCheckReporter(sinks: { readonly log: Logger; readonly metrics: Metrics; readonly events?: EventRecorder; readonly pod?: InvolvedObject }): (e: SelfCheckEvent) => void {
  const { log, metrics, events, pod } = sinks;
  return (e) => {
    switch (e.type) {
      case 'peers':
        metrics.setPeers(e.peers, e.reached);
        return;
      case 'impaired':
        metrics.setReplicaImpaired(true);
        metrics.recordImpairment(e.reason);
        log.warn('replica impaired: writing no False gate, remediating nothing, giving up the shard lease', { reason: e.reason, detail: e.message });
        if (pod !== undefined) events?.record(pod, 'Warning', 'ReplicaImpaired', `outprobe replica impaired (${e.reason}): ${e.message}; it writes no False gate, remediates nothing and gives its pods to the other replicas`);
        return;
      case 'recovered':
        metrics.setReplicaImpaired(false);
        log.info('replica recovered: rejoining the shard', { detail: e.message });
        if (pod !== undefined) events?.record(pod, 'Normal', 'ReplicaRecovered', `outprobe replica recovered: ${e.message}; it rejoins the shard`);
        return;
    }
  };
}
