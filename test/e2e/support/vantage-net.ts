// Support for the vantage e2e tests on the pod network (issue 28; docs/adr/0040-vantage.md,
// docs/adr/0058-several-vantages.md): outprobe replicas in sandboxes on podnet nodes, Node
// objects with zone labels, and a watch that keeps every gate condition each pod has shown,
// so a test asserts "never False" over a whole window rather than on samples.
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { ControlPlane, KubeClient } from '../../support/cluster/index.ts';
import type { PodNet, Sandbox } from '../../support/podnet/index.ts';
import type { Fleet, FleetPod } from '../../support/fleet/index.ts';
import type { Access, Podserve } from '../../support/podserve/index.ts';

const mainPath = fileURLToPath(new URL('../../../src/main.ts', import.meta.url));

export interface NetReplica {
  readonly id: string;
  readonly sandbox: Sandbox;
  readonly child: ChildProcess;
  /** Its JSON log lines, with the time each was read. */
  readonly lines: { readonly at: number; readonly o: Record<string, unknown> }[];
  readonly exited: Promise<number | null>;
}

/** The members the replica last logged (sorted, comma-joined), or undefined before it joined. */
export function membersOf(r: NetReplica): string | undefined {
  const last = r.lines.filter((l) => l.o['msg'] === 'shard membership changed').at(-1);
  return last === undefined ? undefined : (last.o['members'] as string[]).join(',');
}

/** When the replica first logged exactly these members (ms since the epoch), after `since`. */
export function membersSince(r: NetReplica, members: string, since = 0): number | undefined {
  return r.lines.find((l) => l.at >= since && l.o['msg'] === 'shard membership changed' && (l.o['members'] as string[]).join(',') === members)?.at;
}

export interface ReplicaTimings {
  readonly namespace: string;
  readonly leaseMs: number;
}

/** outprobe in the replica's sandbox, from its Pod of the fleet (ADR 0036), debug logs on stdout. */
export function startNetReplica(cp: ControlPlane, net: PodNet, sandbox: Sandbox, id: string, fleet: Fleet, pod: FleetPod, t: ReplicaTimings): NetReplica {
  const args = [mainPath, '--kubeconfig', cp.kubeconfigPath, '--identity', id, '--namespace', t.namespace, '--lease-namespace', t.namespace, ...fleet.args(pod), '--peer-addr', `${sandbox.ip}:9444`,
    '--allowed-probe-cidrs', net.clusterCidr, '--metrics-addr', `${sandbox.ip}:0`, '--metrics-auth', 'none',
    '--lease-duration', String(t.leaseMs / 1000), '--lease-renew-interval', '1', '--status-interval', '1', '--log-level', 'debug'];
  const child = net.spawnIn(sandbox.netns, process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...fleet.env(pod) } });
  const r: NetReplica = { id, sandbox, child, lines: [], exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))) };
  createInterface({ input: child.stdout! }).on('line', (line) => {
    try {
      r.lines.push({ at: Date.now(), o: JSON.parse(line) as Record<string, unknown> });
    } catch {
      r.lines.push({ at: Date.now(), o: { msg: line } });
    }
  });
  return r;
}

/** The well-known zone label (what the replicas read with `get nodes`). */
export const zoneLabel = 'topology.kubernetes.io/zone';

/** Creates a Node object per podnet node, with its zone label where `zones` names one (nothing runs them: the pods are the test's). */
export async function createZonedNodes(kube: KubeClient, zones: ReadonlyMap<string, string | undefined>): Promise<void> {
  for (const [name, zone] of zones) {
    await kube.create('/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': name, ...(zone === undefined ? {} : { [zoneLabel]: zone }) } } });
  }
}

export interface GateState {
  /** When the watch saw it (ms since the epoch). */
  readonly at: number;
  readonly status: string;
  readonly reason: string;
  readonly message: string;
}

/**
 * Every state of every gate condition (of `types`) each pod of the namespace has shown, from
 * one LIST and a WATCH from its resourceVersion (watched again from the last one seen if the
 * server ends the stream): a state is recorded when its status, reason or message changes.
 */
export class GateHistory {
  readonly #kube: KubeClient;
  readonly #path: string;
  readonly #types: readonly string[];
  readonly #states = new Map<string, GateState[]>();
  readonly #abort = new AbortController();
  #loop: Promise<void> | undefined;
  #error: Error | undefined;

  private constructor(kube: KubeClient, namespace: string, types: readonly string[]) {
    this.#kube = kube;
    this.#path = `/api/v1/namespaces/${namespace}/pods`;
    this.#types = types;
  }

  static async start(kube: KubeClient, namespace: string, types: readonly string[]): Promise<GateHistory> {
    const h = new GateHistory(kube, namespace, types);
    const list = await kube.get(h.#path);
    for (const item of (list['items'] ?? []) as Record<string, unknown>[]) h.#see(item);
    h.#loop = h.#run((list['metadata'] as { resourceVersion: string }).resourceVersion);
    return h;
  }

  async #run(from: string): Promise<void> {
    let rv = from;
    while (!this.#aborted()) {
      try {
        await this.#kube.watch(this.#path, `resourceVersion=${rv}&timeoutSeconds=600`, (e) => {
          const meta = e.object['metadata'] as { resourceVersion?: string } | undefined;
          if (meta?.resourceVersion !== undefined) rv = meta.resourceVersion;
          if (e.type === 'ADDED' || e.type === 'MODIFIED') this.#see(e.object);
        }, this.#abort.signal);
      } catch (err) {
        if (!this.#aborted()) this.#error = err instanceof Error ? err : new Error(String(err));
        return;
      }
    }
  }

  #aborted(): boolean {
    return this.#abort.signal.aborted;
  }

  #see(pod: Record<string, unknown>): void {
    const name = (pod['metadata'] as { name: string }).name;
    const conditions = ((pod['status'] as { conditions?: Record<string, string>[] } | undefined)?.conditions ?? []);
    for (const type of this.#types) {
      const c = conditions.find((x) => x['type'] === type);
      const state: GateState = { at: Date.now(), status: c?.['status'] ?? 'absent', reason: c?.['reason'] ?? '', message: c?.['message'] ?? '' };
      const key = `${name}\n${type}`;
      const list = this.#states.get(key) ?? [];
      const last = list.at(-1);
      if (last !== undefined && last.status === state.status && last.reason === state.reason && last.message === state.message) continue;
      list.push(state);
      this.#states.set(key, list);
    }
  }

  /** The states of the pod's gate, oldest first. */
  of(pod: string, type: string): readonly GateState[] {
    if (this.#error !== undefined) throw new Error(`gate watch failed: ${this.#error.message}`);
    return this.#states.get(`${pod}\n${type}`) ?? [];
  }

  /** The state shown at `t` (the last one recorded at or before it). */
  at(pod: string, type: string, t: number): GateState | undefined {
    return this.of(pod, type).filter((s) => s.at <= t).at(-1);
  }

  /** The latest state. */
  now(pod: string, type: string): GateState | undefined {
    return this.of(pod, type).at(-1);
  }

  /** Every state of the gate in [from, to] other than `status`, the one shown at `from` included. */
  departures(pod: string, type: string, status: string, from: number, to = Date.now()): GateState[] {
    const inWindow = this.of(pod, type).filter((s) => s.at > from && s.at <= to);
    const first = this.at(pod, type, from);
    return [...(first === undefined ? [] : [first]), ...inWindow].filter((s) => s.status !== status);
  }

  /** When the gate first showed `status` after `from`, or undefined. */
  firstAfter(pod: string, type: string, status: string, from: number): number | undefined {
    return this.of(pod, type).find((s) => s.at >= from && s.status === status)?.at;
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#loop?.catch(() => undefined);
  }
}

/** The access logs podserve keeps (`accessLog` pods), drained every `everyMs` and kept whole. */
export class AccessLogs {
  readonly #podserve: Pick<Podserve, 'access'>;
  readonly #logs = new Map<string, Access[]>();
  #dropped = 0;
  #stopped = false;
  readonly #loop: Promise<void>;

  constructor(podserve: Pick<Podserve, 'access'>, everyMs = 200) {
    this.#podserve = podserve;
    this.#loop = this.#run(everyMs);
  }

  async #run(everyMs: number): Promise<void> {
    while (!this.#stopped) {
      await this.drain();
      await new Promise((r) => setTimeout(r, everyMs));
    }
  }

  /** Drains podserve now (also done every `everyMs`). */
  async drain(): Promise<void> {
    const { logs, dropped } = await this.#podserve.access();
    for (const [pod, entries] of logs) {
      const list = this.#logs.get(pod) ?? [];
      list.push(...entries);
      this.#logs.set(pod, list);
    }
    for (const n of dropped.values()) this.#dropped += n;
  }

  /** Every request the pod's server saw so far, oldest first. */
  of(pod: string): readonly Access[] {
    return this.#logs.get(pod) ?? [];
  }

  get dropped(): number {
    return this.#dropped;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#loop.catch(() => undefined);
  }
}
