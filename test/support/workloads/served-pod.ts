// One pod as the workloads serve it through podserve: its address, ports and
// health, and the requests its HTTP ports answered (podserve's counters).
import type { Podserve } from '../podserve/index.ts';
import type { PodPort } from './pods.ts';

export interface ServedPod {
  readonly ip: string;
  readonly ports: readonly PodPort[];
  /** The namespace the pod's sockets live in; undefined on the loopback plane. */
  readonly netnsPath: string | undefined;
  readonly healthy: boolean;
  /** HTTP requests the pod answered so far. */
  httpRequests(): Promise<number>;
  setHealthy(healthy: boolean): Promise<void>;
  /** Delays each HTTP reply and gRPC health call by `ms` (0 = none). */
  setDelay(ms: number): Promise<void>;
}

export interface ServedPodInit {
  readonly ps: Podserve;
  /** The pod's key in podserve. */
  readonly key: string;
  readonly ip: string;
  readonly ports: readonly PodPort[];
  readonly netnsPath: string | undefined;
  readonly healthy: boolean;
}

/** Adds the pod to podserve (resolves once every port is bound) and returns its handle. */
export async function servePod(init: ServedPodInit): Promise<ServedPod> {
  const { ps, key } = init;
  await ps.add({ pod: key, ip: init.ip, ports: init.ports, healthy: init.healthy, ...(init.netnsPath === undefined ? {} : { netns: init.netnsPath }) });
  let healthy = init.healthy;
  return {
    ip: init.ip,
    ports: init.ports,
    netnsPath: init.netnsPath,
    get healthy() { return healthy; },
    httpRequests: async () => (await ps.stats()).get(key)?.http ?? 0,
    setHealthy: async (h) => {
      healthy = h;
      await ps.setHealthy(key, h);
    },
    setDelay: (ms) => ps.setDelay(key, ms),
  };
}
