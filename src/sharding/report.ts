import type { EventRecorder, InvolvedObject, Logger, Metrics } from '../observability/index.ts';
import type { ShardEvent } from './membership.ts';

const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * Subscribes logs, metrics and Events to membership news: one log line per
 * membership change; a rejected Lease (ADR 0036) once per Lease and reason
 * in the log, the metric and a Warning Event on the Lease; this replica's own
 * proof failing in the log (error) and on its Pod.
 */
export function shardReporter(sinks: { readonly log: Logger; readonly metrics: Metrics; readonly events?: EventRecorder; readonly namespace?: string; readonly pod?: InvolvedObject }): (e: ShardEvent) => void {
  const { log, metrics } = sinks;
  return (e) => {
    switch (e.type) {
      case 'lease-rejected':
      case 'rejected-now':
      case 'self-unproven':
      case 'self-proven':
        reportProof(sinks, e);
        return;
      case 'membership': {
        const before = new Set(e.previous ?? []);
        const after = new Set(e.members);
        metrics.setShardMembers(e.members.length);
        metrics.setUnownedPods(e.unowned);
        log.info('shard membership changed', {
          members: e.members,
          joined: e.members.filter((m) => !before.has(m)),
          left: [...before].filter((m) => !after.has(m)),
          ownedPods: e.owned,
          unownedPods: e.unowned,
        });
        return;
      }
      case 'renew-failed':
        log.warn('shard lease renewal failed, will retry', { error: errorText(e.error) });
        return;
      case 'released':
        if (e.error === undefined) log.info('shard lease released');
        else log.warn('shard lease release failed; it expires on its own', { error: errorText(e.error) });
        return;
      case 'standing-down':
        log.warn('standing down: giving up every pod and the shard lease');
        return;
      case 'rejoining':
        log.info('rejoining the shard');
        return;
    }
  };
}

/** The membership proof's news (ADR 0036). */
function reportProof(sinks: { readonly log: Logger; readonly metrics: Metrics; readonly events?: EventRecorder; readonly namespace?: string; readonly pod?: InvolvedObject }, e: ShardEvent): void {
  const { log, metrics } = sinks;
  switch (e.type) {
    case 'lease-rejected':
      metrics.peer.recordLeaseRejected(e.reason);
      log.warn('shard Lease rejected: not a member', { lease: e.lease.name, holder: e.lease.holder, reason: e.reason, detail: e.detail });
      if (sinks.namespace !== undefined) {
        sinks.events?.record({ kind: 'Lease', apiVersion: 'coordination.k8s.io/v1', namespace: sinks.namespace, name: e.lease.name, uid: e.lease.uid }, 'Warning', 'ShardLeaseRejected',
          `not a member of the outprobe shard (${e.reason}): ${e.detail}; it owns no pods and is never asked anything`);
      }
      break;
    case 'rejected-now':
      metrics.peer.setLeasesRejected(e.byReason);
      break;
    case 'self-unproven':
      metrics.peer.setSelfProven(false);
      log.error('this replica cannot prove its shard membership: it writes no shard Lease and owns no pods', { detail: e.detail });
      if (sinks.pod !== undefined) sinks.events?.record(sinks.pod, 'Warning', 'MembershipUnproven', `this replica cannot prove its shard membership and probes nothing: ${e.detail}`);
      break;
    case 'self-proven':
      metrics.peer.setSelfProven(true);
      log.info('this replica\'s own pod proves its shard membership');
      break;
    default:
  }
}
