import type { Logger, Metrics } from '../observability/index.ts';
import type { ShardEvent } from './membership.ts';

const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** Subscribes logs and metrics to membership news: one log line per membership change. */
export function shardReporter(sinks: { readonly log: Logger; readonly metrics: Metrics }): (e: ShardEvent) => void {
  const { log, metrics } = sinks;
  return (e) => {
    switch (e.type) {
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
