/**
 * Every few seconds: each replica's /metrics (into one CounterAccumulator,
 * every series labelled with its `replica`, so sums run over the replicas),
 * CPU and RSS of the replicas and of the control plane's processes from
 * /proc, and the replicas' TCP connections to the API server. Phases are
 * snapshots.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { processCpuSeconds, processRssBytes } from '../probes/system.ts';
import { CounterAccumulator, parseMetrics } from './prom.ts';
import type { Sample, Totals } from './prom.ts';
import { connectionsTo } from './sockets.ts';

export interface Replica {
  readonly identity: string;
  readonly pid: number;
  readonly metricsUrl: string;
}

export interface SamplerOptions {
  readonly replicas: readonly Replica[];
  /** Control-plane processes by name (kube-apiserver, etcd, kwok, ...). */
  readonly plane: Readonly<Record<string, number>>;
  readonly apiserver: { readonly ip: string; readonly port: number };
  readonly intervalMs: number;
  readonly log: (m: string) => void;
  /** kube-apiserver's /metrics text, read at each snapshot (phase boundaries only: it is large). */
  readonly apiserverMetrics?: () => Promise<string>;
}

export interface Snapshot {
  readonly at: number;
  readonly totals: Totals;
  /** CPU seconds so far of each replica (in the order given). */
  readonly replicaCpu: readonly number[];
  /** CPU seconds so far of each control-plane process, by name. */
  readonly planeCpu: Readonly<Record<string, number>>;
  /** Seconds the threads of each replica / plane process have waited for a CPU so far (schedstat; threads that exited are not counted). */
  readonly replicaWait: readonly number[];
  readonly planeWait: Readonly<Record<string, number>>;
  /** Selected counters of kube-apiserver's own /metrics (request and etcd latency sums and counts), when `apiserverMetrics` is given. */
  readonly apiserver: ReadonlyMap<string, number>;
}

export interface Peaks {
  /** Highest RSS sample of each replica (bytes). */
  readonly replicaRss: number[];
  /** Highest RSS sample of each control-plane process (bytes). */
  readonly planeRss: Record<string, number>;
  /** Sum over the replicas. */
  apiConnectionsMax: number;
  apiConnectionsLast: number;
}

/** Gauges read straight from one replica's /metrics. */
export interface ReplicaGauges {
  readonly identity: string;
  readonly rssBytes: number | undefined;
  /** prom-client's default metrics: `nodejs_heap_size_used_bytes`, `nodejs_heap_size_total_bytes`, `nodejs_external_memory_bytes`. */
  readonly heapUsedBytes: number | undefined;
  readonly heapTotalBytes: number | undefined;
  readonly externalBytes: number | undefined;
}

function cpuOf(pid: number): number {
  try {
    return processCpuSeconds(pid);
  } catch {
    return 0;
  }
}

/**
 * Seconds all threads of a process have spent runnable but waiting for a CPU
 * (the second field of /proc/<pid>/task/<tid>/schedstat, in ns), summed; 0
 * once the process is gone.
 */
export function cpuWaitSeconds(pid: number): number {
  let ns = 0;
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[1] ?? 0);
      } catch {
        // the thread exited
      }
    }
  } catch {
    return 0;
  }
  return ns / 1e9;
}

/**
 * The kube-apiserver series the phases report: `_sum` and `_count` of the
 * request latency of gate writes (PATCH pods/status) and Event creates, and
 * of etcd's latency by operation for pods, keyed `name{labels}`.
 */
export function apiserverSeries(samples: readonly Sample[]): Map<string, number> {
  const out = new Map<string, number>();
  const add = (key: string, v: number): void => { out.set(key, (out.get(key) ?? 0) + v); };
  for (const s of samples) {
    const kind = s.name.endsWith('_sum') ? 'sum' : s.name.endsWith('_count') ? 'count' : undefined;
    if (kind === undefined) continue;
    const base = s.name.slice(0, s.name.length - kind.length - 1);
    const l = s.labels;
    if (base === 'apiserver_request_duration_seconds') {
      if (l['verb'] === 'PATCH' && l['resource'] === 'pods' && l['subresource'] === 'status') add(`patch_pod_status_${kind}`, s.value);
      if (l['verb'] === 'POST' && l['resource'] === 'events') add(`post_events_${kind}`, s.value);
    } else if (base === 'etcd_request_duration_seconds' && (l['type'] ?? l['resource'] ?? '').includes('pods')) {
      add(`etcd_pods_${l['operation'] ?? ''}_${kind}`, s.value);
    }
  }
  return out;
}

const gaugeValue = (samples: readonly Sample[], name: string): number | undefined => samples.find((s) => s.name === name)?.value;

/** Sum of one gauge over its series (optionally those with `label` = `value`) in a scrape. */
export function gaugeSum(samples: readonly Sample[], name: string, where: Readonly<Record<string, string>> = {}): number {
  let sum = 0;
  for (const s of samples) if (s.name === name && Object.entries(where).every(([k, v]) => s.labels[k] === v)) sum += s.value;
  return sum;
}

export class Sampler {
  readonly #o: SamplerOptions;
  readonly #acc = new CounterAccumulator();
  readonly peaks: Peaks;
  /** The last scrape of each replica (for gauges). */
  readonly last: Sample[][];
  #timer: NodeJS.Timeout | undefined;
  #busy: Promise<void> = Promise.resolve();
  #queued = 0;
  scrapeErrors = 0;

  constructor(o: SamplerOptions) {
    this.#o = o;
    this.peaks = { replicaRss: o.replicas.map(() => 0), planeRss: Object.fromEntries(Object.keys(o.plane).map((k) => [k, 0])), apiConnectionsMax: 0, apiConnectionsLast: 0 };
    this.last = o.replicas.map(() => []);
  }

  get replicas(): readonly Replica[] {
    return this.#o.replicas;
  }

  start(): void {
    // A timer sample is skipped while one is still queued (slow scrapes do not pile up).
    this.#timer = setInterval(() => { if (this.#queued === 0) void this.sample(); }, this.#o.intervalMs);
  }

  /** Runs `fn` after every sample before it: scrapes must reach the accumulator in order. */
  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.#busy.then(fn);
    this.#busy = p.then(() => undefined, () => undefined);
    return p;
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#busy;
  }

  /** RSS of each replica now (bytes; undefined once gone). */
  replicaRss(): (number | undefined)[] {
    return this.#o.replicas.map((r) => processRssBytes(r.pid));
  }

  /** RSS of each control-plane process now (MB, rounded; null once gone). */
  planeRssMb(): Record<string, number | null> {
    return Object.fromEntries(Object.entries(this.#o.plane).map(([name, pid]) => {
      const b = processRssBytes(pid);
      return [name, b === undefined ? null : Math.round(b / 1048576)];
    }));
  }

  async sample(): Promise<void> {
    this.#queued++;
    try {
      await this.#serial(() => this.#sample());
    } finally {
      this.#queued--;
    }
  }

  async #sample(): Promise<void> {
    this.#o.replicas.forEach((r, i) => {
      this.peaks.replicaRss[i] = Math.max(this.peaks.replicaRss[i] ?? 0, processRssBytes(r.pid) ?? 0);
    });
    for (const [name, pid] of Object.entries(this.#o.plane)) this.peaks.planeRss[name] = Math.max(this.peaks.planeRss[name] ?? 0, processRssBytes(pid) ?? 0);
    let conns = 0;
    for (const r of this.#o.replicas) conns += connectionsTo(r.pid, this.#o.apiserver.ip, this.#o.apiserver.port) ?? 0;
    this.peaks.apiConnectionsLast = conns;
    this.peaks.apiConnectionsMax = Math.max(this.peaks.apiConnectionsMax, conns);
    await Promise.all(this.#o.replicas.map(async (r, i) => {
      try {
        const res = await fetch(r.metricsUrl, { signal: AbortSignal.timeout(10_000) });
        const samples = parseMetrics(await res.text());
        this.last[i] = samples;
        this.#acc.add(samples.map((s) => ({ ...s, labels: { ...s.labels, replica: r.identity } })));
      } catch (err: unknown) {
        this.scrapeErrors++;
        this.#o.log(`metrics scrape of ${r.identity} failed: ${String(err)}`);
      }
    }));
  }

  /** Samples now (after any sample in progress) and returns the totals and CPU at this moment. */
  async snapshot(): Promise<Snapshot> {
    await this.sample();
    const at = Date.now();
    const snap = {
      at,
      totals: this.#acc.snapshot(),
      replicaCpu: this.#o.replicas.map((r) => cpuOf(r.pid)),
      planeCpu: Object.fromEntries(Object.entries(this.#o.plane).map(([name, pid]) => [name, cpuOf(pid)])),
      replicaWait: this.#o.replicas.map((r) => cpuWaitSeconds(r.pid)),
      planeWait: Object.fromEntries(Object.entries(this.#o.plane).map(([name, pid]) => [name, cpuWaitSeconds(pid)])),
    };
    let apiserver = new Map<string, number>();
    try {
      if (this.#o.apiserverMetrics !== undefined) apiserver = apiserverSeries(parseMetrics(await this.#o.apiserverMetrics()));
    } catch (err: unknown) {
      this.#o.log(`kube-apiserver /metrics: ${String(err)}`);
    }
    return { ...snap, apiserver };
  }

  /** RSS and heap of every replica now: a fresh scrape of each. */
  async gauges(): Promise<ReplicaGauges[]> {
    await this.sample();
    return this.#o.replicas.map((r, i) => {
      const s = this.last[i] ?? [];
      return {
        identity: r.identity,
        rssBytes: processRssBytes(r.pid),
        heapUsedBytes: gaugeValue(s, 'nodejs_heap_size_used_bytes'),
        heapTotalBytes: gaugeValue(s, 'nodejs_heap_size_total_bytes'),
        externalBytes: gaugeValue(s, 'nodejs_external_memory_bytes'),
      };
    });
  }

  /** The sum over the replicas' last scrapes of a gauge. */
  gaugeSum(name: string, where: Readonly<Record<string, string>> = {}): number {
    return this.last.reduce((a, s) => a + gaugeSum(s, name, where), 0);
  }
}
