import type { Config } from '../config/index.ts';
import type { Controller } from '../controller/index.ts';
import type { Clock } from '../kernel/index.ts';
import type { Logger } from '../observability/index.ts';
import { fleetReport, podReport, startDebugServer } from '../explain/index.ts';
import type { ResultJournal } from '../explain/index.ts';
import type { Sharding } from './sharding.ts';
import { fleetView } from './sharding.ts';

/**
 * The loopback debug endpoint `kubectl outprobe` reads (ADR 0067), when
 * `--debug-addr` is not off; the journal is swept of targets no longer
 * probed once a minute.
 */
export async function startDebugEndpoint(o: { readonly config: Config; readonly controller: Controller; readonly shard: Sharding | undefined; readonly journal: ResultJournal; readonly clock: Clock; readonly log: Logger }): Promise<{ close(): Promise<void> }> {
  const sweep = setInterval(() => o.journal.sweep((key) => o.controller.targets.get(key) !== undefined), 60_000);
  sweep.unref();
  const addr = o.config.debug;
  if (addr === undefined) {
    return {
      close: () => {
        clearInterval(sweep);
        return Promise.resolve();
      },
    };
  }
  const view = fleetView(o.shard, o.config);
  let server: Awaited<ReturnType<typeof startDebugServer>>;
  try {
    server = await startDebugServer({
      host: addr.host,
      port: addr.port,
      source: {
        pod: (namespace, name) => podReport({ controller: o.controller, journal: o.journal, fleet: view, namespace, name, now: o.clock.now() }),
        fleet: () => fleetReport(o.controller, view, o.clock.now()),
      },
    });
  } catch (err: unknown) {
    // A debugging aid never stops probing: another process on the host (several replicas outside pods) may hold the port.
    o.log.warn('debug endpoint not serving: kubectl outprobe explain cannot read this replica (--debug-addr)', { host: addr.host, port: addr.port, error: String(err) });
    return {
      close: () => {
        clearInterval(sweep);
        return Promise.resolve();
      },
    };
  }
  o.log.info('debug endpoint serving (loopback; kubectl outprobe reads it through port-forward)', { host: addr.host, port: server.port });
  return {
    close: async () => {
      clearInterval(sweep);
      await server.close();
    },
  };
}
