/**
 * A Service client inside the pod network (test/support/netclient/client.ts,
 * run in a node or sandbox namespace): one fresh connection per request, so
 * kube-proxy picks an endpoint for each, and a record of who answered when.
 * Used by the demo, the partition e2e test and the partition benchmark.
 */
import type { ChildProcess, SpawnOptions } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';

export interface Hit {
  /** Request start, epoch ms. */
  readonly t: number;
  readonly ms: number;
  /** The answering pod's podserve key (`<namespace>/<name>`), or '' for an error. */
  readonly pod: string;
  /** Error code (ETIMEDOUT, ECONNREFUSED, ...) when no pod answered. */
  readonly err?: string;
}

export interface ServiceClient {
  readonly hits: Hit[];
  /** Hits that started at or after `t`. */
  since(t: number): Hit[];
  stop(): Promise<void>;
}

export type SpawnIn = (netns: string, cmd: string, args: string[], opts?: SpawnOptions) => ChildProcess;

export interface ServiceClientOptions {
  readonly spawnIn: SpawnIn;
  readonly netns: string;
  readonly ip: string;
  readonly port: number;
  readonly intervalMs?: number;
  readonly timeoutMs?: number;
  readonly onHit?: (h: Hit) => void;
}

const script = path.join(import.meta.dirname, 'client.ts');

export function startServiceClient(o: ServiceClientOptions): ServiceClient {
  const child = o.spawnIn(o.netns, process.execPath, [script, o.ip, String(o.port), String(o.intervalMs ?? 50), String(o.timeoutMs ?? 500)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const hits: Hit[] = [];
  const exited = new Promise<void>((resolve) => { child.once('exit', () => { resolve(); }); });
  if (child.stdout !== null) {
    createInterface({ input: child.stdout }).on('line', (line) => {
      try {
        const r = JSON.parse(line) as { t: number; ms: number; pod?: string; err?: string };
        const h: Hit = r.err === undefined ? { t: r.t, ms: r.ms, pod: r.pod ?? '' } : { t: r.t, ms: r.ms, pod: '', err: r.err };
        hits.push(h);
        o.onHit?.(h);
      } catch { /* not a record */ }
    });
  }
  return {
    hits,
    since: (t) => hits.filter((h) => h.t >= t),
    async stop() {
      child.stdin?.end();
      const timer = setTimeout(() => { child.kill('SIGKILL'); }, 3000);
      await exited;
      clearTimeout(timer);
    },
  };
}
