/**
 * Every few seconds: the controller's /metrics (into a CounterAccumulator),
 * CPU and RSS of the controller, kube-apiserver and etcd from /proc, and the
 * controller's TCP connections to the API server. Phases are snapshots.
 */
import { processCpuSeconds, processRssBytes } from '../probes/system.ts';
import { CounterAccumulator, parseMetrics } from './prom.ts';
import type { Totals } from './prom.ts';
import { connectionsTo } from './sockets.ts';

export interface Pids {
  readonly controller: number;
  readonly apiserver: number;
  readonly etcd: number;
}

export interface Snapshot {
  readonly at: number;
  readonly totals: Totals;
  /** CPU seconds so far, by process. */
  readonly cpu: Readonly<Record<keyof Pids, number>>;
}

export interface Peaks {
  readonly rss: Record<keyof Pids, number>;
  apiConnectionsMax: number;
  apiConnectionsLast: number;
}

export interface SamplerOptions {
  readonly pids: Pids;
  readonly metricsUrl: string;
  readonly apiserver: { readonly ip: string; readonly port: number };
  readonly intervalMs: number;
  readonly log: (m: string) => void;
}

function cpuOf(pid: number): number {
  try {
    return processCpuSeconds(pid);
  } catch {
    return 0;
  }
}

export class Sampler {
  readonly #o: SamplerOptions;
  readonly #acc = new CounterAccumulator();
  readonly peaks: Peaks = { rss: { controller: 0, apiserver: 0, etcd: 0 }, apiConnectionsMax: 0, apiConnectionsLast: 0 };
  #timer: NodeJS.Timeout | undefined;
  #busy: Promise<void> = Promise.resolve();
  scrapeErrors = 0;

  constructor(o: SamplerOptions) {
    this.#o = o;
  }

  start(): void {
    this.#timer = setInterval(() => { this.#busy = this.#busy.then(() => this.sample()); }, this.#o.intervalMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#busy;
  }

  rss(which: keyof Pids): number | undefined {
    return processRssBytes(this.#o.pids[which]);
  }

  async sample(): Promise<void> {
    for (const which of ['controller', 'apiserver', 'etcd'] as const) {
      const rss = processRssBytes(this.#o.pids[which]) ?? 0;
      this.peaks.rss[which] = Math.max(this.peaks.rss[which], rss);
    }
    const conns = connectionsTo(this.#o.pids.controller, this.#o.apiserver.ip, this.#o.apiserver.port);
    if (conns !== undefined) {
      this.peaks.apiConnectionsLast = conns;
      this.peaks.apiConnectionsMax = Math.max(this.peaks.apiConnectionsMax, conns);
    }
    try {
      const res = await fetch(this.#o.metricsUrl, { signal: AbortSignal.timeout(10_000) });
      this.#acc.add(parseMetrics(await res.text()));
    } catch (err: unknown) {
      this.scrapeErrors++;
      this.#o.log(`metrics scrape failed: ${String(err)}`);
    }
  }

  /** Samples now (after any sample in progress) and returns the totals and CPU at this moment. */
  async snapshot(): Promise<Snapshot> {
    await this.#busy;
    const p = this.sample();
    this.#busy = p;
    await p;
    const { pids } = this.#o;
    return { at: Date.now(), totals: this.#acc.snapshot(), cpu: { controller: cpuOf(pids.controller), apiserver: cpuOf(pids.apiserver), etcd: cpuOf(pids.etcd) } };
  }
}
