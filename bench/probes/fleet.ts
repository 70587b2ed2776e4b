/** Starts the target processes and merges what they listen on. */
import { firstJsonLine, spawnNode } from './children.ts';
import { loopbackIps } from './options.ts';
import { processCpuSeconds } from './system.ts';
import type { Listener, TargetsConfig, TargetsCount, TargetsReady } from './targets.ts';

export interface Fleet {
  readonly pids: readonly number[];
  readonly ips: ReadonlySet<string>;
  readonly http: readonly Listener[];
  readonly tcp: readonly Listener[];
  readonly grpc: readonly Listener[];
  /** CPU seconds used so far by all target processes together. */
  cpuSeconds(): number;
  /**
   * Connections the target processes accepted so far, HTTP and TCP listeners
   * apart (a probe of either is one connection), and the longest event-loop
   * delay of any target process since the previous call.
   */
  accepted(): Promise<{ http: number; tcp: number; loopDelayMaxMs: number }>;
}

export interface FleetSize {
  readonly httpPorts: number;
  readonly tcpPorts: number;
  readonly grpcPorts: number;
  readonly targetProcs: number;
  readonly ips: number;
}

/** Share `total` between `parts` as evenly as integers allow. */
function share(total: number, parts: number, index: number): number {
  return Math.floor(total / parts) + (index < total % parts ? 1 : 0);
}

/**
 * Interleaves listeners from every process (a0, b0, a1, b1, ...), so taking
 * targets round-robin loads the processes evenly.
 */
function interleave(lists: readonly (readonly Listener[])[]): Listener[] {
  const out: Listener[] = [];
  const longest = Math.max(0, ...lists.map((list) => list.length));
  for (let i = 0; i < longest; i++) {
    for (const list of lists) {
      const item = list[i];
      if (item !== undefined) out.push(item);
    }
  }
  return out;
}

export async function startFleet(size: FleetSize): Promise<Fleet> {
  const ips = loopbackIps(size.ips);
  const children = Array.from({ length: size.targetProcs }, (_, i) => {
    const config: TargetsConfig = {
      ips,
      http: share(size.httpPorts, size.targetProcs, i),
      tcp: share(size.tcpPorts, size.targetProcs, i),
      grpc: share(size.grpcPorts, size.targetProcs, i),
    };
    return spawnNode('./targets.ts', config, `targets-${String(i)}`);
  });
  const ready = await Promise.all(children.map((child) => firstJsonLine<TargetsReady>(child, 60_000)));
  const pids = ready.map((r) => r.pid);
  const accepted = async (): Promise<{ http: number; tcp: number; loopDelayMaxMs: number }> => {
    const counts = await Promise.all(
      children.map((child) => {
        const reply = firstJsonLine<TargetsCount>(child, 10_000);
        child.stdin?.write('count\n');
        return reply;
      }),
    );
    return counts.reduce((sum, c) => ({ http: sum.http + c.accepted.http, tcp: sum.tcp + c.accepted.tcp, loopDelayMaxMs: Math.max(sum.loopDelayMaxMs, c.loopDelayMaxMs) }), {
      http: 0,
      tcp: 0,
      loopDelayMaxMs: 0,
    });
  };
  return {
    accepted,
    pids,
    ips: new Set(ips),
    http: interleave(ready.map((r) => r.http)),
    tcp: interleave(ready.map((r) => r.tcp)),
    grpc: interleave(ready.map((r) => r.grpc)),
    cpuSeconds: () => pids.reduce((sum, pid) => sum + processCpuSeconds(pid), 0),
  };
}
