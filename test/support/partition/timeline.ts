// What happens to one Service's pods, with the time each change was seen: each pod's
// gate, ContainersReady and Ready conditions (a pod watch), its EndpointSlice
// readiness (an EndpointSlice watch), and whether the client node's kube-proxy rules
// still send the Service's traffic to it (nftables, polled every 25 ms inside the
// client's node namespace). Times are epoch ms on this machine's clock, as are the
// outprobe and client processes' own.
import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import type { KubeClient, WatchEvent } from '../cluster/kube.ts';

const run = promisify(execFile);

export type Signal = 'gate' | 'containersReady' | 'ready' | 'slice' | 'proxy';

export interface Change {
  readonly t: number;
  readonly ip: string;
  readonly signal: Signal;
  /** 'True' | 'False' | 'Unknown' for conditions; 'True' | 'False' for slice readiness and proxy routing. */
  readonly value: string;
}

interface PodView { metadata?: { name?: string; resourceVersion?: string }; status?: { podIP?: string; conditions?: { type: string; status: string }[] } }
interface SliceView {
  metadata?: { name?: string; labels?: Record<string, string>; resourceVersion?: string };
  endpoints?: { addresses?: string[]; conditions?: { ready?: boolean } }[];
}

/** The IPs the Service's chain in kube-proxy's `ip kube-proxy` table dispatches to. */
export function routedIps(table: string, namespace: string, service: string): Set<string> {
  const out = new Set<string>();
  // nft may print chain names with '/' in double quotes.
  for (const block of table.replaceAll('"', '').split(/\n\s*chain /)) {
    const name = block.slice(0, block.indexOf(' '));
    if (!name.startsWith('service-') || !name.includes(`-${namespace}/${service}/`)) continue;
    // Endpoint chains (`vmap { 0 : goto endpoint-…__<ip>/<port> }`) when an endpoint needs its own
    // rules, else a direct DNAT map (`dnat ip to numgen random mod N map { 0 : <ip> . <port> }`).
    for (const m of block.matchAll(/goto endpoint-[A-Z0-9]+-[^\s,}]*__([0-9.]+)\//g)) if (m[1] !== undefined) out.add(m[1]);
    for (const m of block.matchAll(/\d+ : ([0-9.]+) \. \d+/g)) if (m[1] !== undefined) out.add(m[1]);
  }
  return out;
}

export interface TimelineOptions {
  readonly kube: KubeClient;
  readonly namespace: string;
  readonly service: string;
  readonly gate: string;
  /** Where the client runs: kube-proxy's rules are read there. */
  readonly clientNetns: string;
  readonly onChange?: (c: Change) => void;
}

export class Timeline {
  readonly changes: Change[] = [];
  readonly #o: TimelineOptions;
  readonly #last = new Map<string, string>();
  readonly #abort = new AbortController();
  readonly #loops: Promise<void>[];

  constructor(o: TimelineOptions) {
    this.#o = o;
    this.#loops = [this.#watchLoop('pods'), this.#watchLoop('slices'), this.#proxyLoop()];
  }

  #record(ip: string, signal: Signal, value: string, t = Date.now()): void {
    const key = `${ip} ${signal}`;
    if (this.#last.get(key) === value) return;
    this.#last.set(key, value);
    const c = { t, ip, signal, value };
    this.changes.push(c);
    this.#o.onChange?.(c);
  }

  /** The current value of a signal for a pod IP. */
  value(ip: string, signal: Signal): string | undefined {
    return this.#last.get(`${ip} ${signal}`);
  }

  /** The first change of `signal` for `ip` to `value` at or after `since`. */
  first(ip: string, signal: Signal, value: string, since: number): Change | undefined {
    return this.changes.find((c) => c.ip === ip && c.signal === signal && c.value === value && c.t >= since);
  }

  async waitFor(ip: string, signal: Signal, value: string, since: number, timeoutMs: number): Promise<Change> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const c = this.first(ip, signal, value, since);
      if (c !== undefined) return c;
      if (Date.now() > deadline) throw new Error(`${ip}: ${signal} did not become ${value} within ${timeoutMs} ms (now ${this.value(ip, signal) ?? 'unseen'})`);
      await sleep(20);
    }
  }

  #onPod(p: PodView): void {
    const ip = p.status?.podIP;
    if (ip === undefined || ip === '') return;
    const cond = (type: string): string => p.status?.conditions?.find((c) => c.type === type)?.status ?? 'Missing';
    this.#record(ip, 'gate', cond(this.#o.gate));
    this.#record(ip, 'containersReady', cond('ContainersReady'));
    this.#record(ip, 'ready', cond('Ready'));
  }

  #onSlice(s: SliceView): void {
    if (s.metadata?.labels?.['kubernetes.io/service-name'] !== this.#o.service) return;
    for (const e of s.endpoints ?? []) for (const ip of e.addresses ?? []) this.#record(ip, 'slice', e.conditions?.ready === true ? 'True' : 'False');
  }

  async #watchLoop(what: 'pods' | 'slices'): Promise<void> {
    const { kube, namespace } = this.#o;
    const path = what === 'pods' ? `/api/v1/namespaces/${namespace}/pods` : `/apis/discovery.k8s.io/v1/namespaces/${namespace}/endpointslices`;
    const on = (o: unknown): void => { if (what === 'pods') this.#onPod(o as PodView); else this.#onSlice(o as SliceView); };
    while (!this.#abort.signal.aborted) {
      try {
        const list = await kube.get(path);
        for (const item of (list['items'] as unknown[] | undefined) ?? []) on(item);
        const rv = (list['metadata'] as { resourceVersion?: string } | undefined)?.resourceVersion ?? '';
        await kube.watch(path, `resourceVersion=${rv}&timeoutSeconds=300`, (e: WatchEvent) => {
          if (e.type === 'ADDED' || e.type === 'MODIFIED') on(e.object);
        }, this.#abort.signal);
      } catch {
        await sleep(200, undefined, { signal: this.#abort.signal }).catch(() => undefined);
      }
    }
  }

  async #proxyLoop(): Promise<void> {
    const known = new Set<string>();
    while (!this.#abort.signal.aborted) {
      try {
        const { stdout } = await run('ip', ['netns', 'exec', this.#o.clientNetns, 'nft', 'list', 'table', 'ip', 'kube-proxy'], { maxBuffer: 16 << 20 });
        const t = Date.now(); // when the rules were read: an upper bound of when they changed
        const routed = routedIps(stdout, this.#o.namespace, this.#o.service);
        for (const ip of routed) known.add(ip);
        for (const ip of known) this.#record(ip, 'proxy', routed.has(ip) ? 'True' : 'False', t);
      } catch { /* kube-proxy's table not there yet */ }
      await sleep(25).catch(() => undefined);
    }
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    await Promise.allSettled(this.#loops);
  }
}
