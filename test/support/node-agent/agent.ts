/**
 * The node agent: the kubelet's part for readiness on one node. It lists and
 * watches the node's pods (fieldSelector spec.nodeName), runs the containers'
 * own probes from the node, and whenever a pod event or a probe result changes
 * what the pod should say, writes containers' `ready`, ContainersReady and
 * Ready (readiness gates folded in) through the status subresource, guarded by
 * the resourceVersion it computed from; a conflict re-reads the pod and
 * recomputes. It never writes readiness-gate conditions, never touches pods of
 * other nodes, and leaves pods being deleted alone.
 */
import type { Clock, ProbeKind, Random } from '../../../src/kernel/index.ts';
import type { KubeClient } from '../../../src/kube/index.ts';
import { isKubeError, Reflector } from '../../../src/kube/index.ts';
import { containerStarted, instanceOf, restartGracePeriodMs, sameInstance } from '../../../src/results/index.ts';
import type { Transition } from '../../../src/results/index.ts';
import type { AgentContainer, AgentPod, Raw } from './pod.ts';
import { projectAgentPod, statusOf } from './pod.ts';
import { toProbeSpec } from './probe-spec.ts';
import { applyRestarts } from './restart.ts';
import { statusPatch } from './status.ts';
import type { ReadyVerdict } from './status.ts';
import type { RunProbe } from './worker.ts';
import { containerView, ProbeWorker } from './worker.ts';

export type LogEntry = Readonly<Record<string, unknown>> & { readonly msg: string };

export interface NodeAgentOptions {
  readonly client: KubeClient;
  readonly nodeName: string;
  readonly clock: Clock;
  readonly random: Random;
  readonly runProbe: RunProbe;
  readonly log: (entry: LogEntry) => void;
  /** Attempts for one write (conflicts re-read and recompute). @default 5 */
  readonly maxWriteAttempts?: number;
}

interface ContainerWorkers {
  readonly startup: ProbeWorker | null;
  readonly liveness: ProbeWorker | null;
  readonly readiness: ProbeWorker | null;
}

interface PodEntry {
  pod: AgentPod;
  /** When the newest pod event arrived (for write latency). */
  eventAt: number;
  writing: boolean;
  dirty: boolean;
  readonly workers: Map<string, ContainerWorkers>;
  readonly stop: AbortController;
  /** Containers whose liveness/startup failed: name → the failed containerID. */
  readonly restarts: Map<string, string>;
}

const kinds: readonly ProbeKind[] = ['startup', 'liveness', 'readiness'];
const probeOf = (c: AgentContainer, kind: ProbeKind): Raw | undefined =>
  kind === 'startup' ? c.startupProbe : kind === 'liveness' ? c.livenessProbe : c.readinessProbe;

export class NodeAgent {
  readonly #o: NodeAgentOptions;
  readonly #pods = new Map<string, PodEntry>();
  readonly #reflector: Reflector<AgentPod>;
  readonly #startedAt: number;
  readonly #unsupported = new Set<string>();
  readonly #pending = new Set<Promise<void>>();

  constructor(o: NodeAgentOptions) {
    this.#o = o;
    this.#startedAt = o.clock.now();
    this.#reflector = new Reflector<AgentPod>({
      client: o.client, clock: o.clock, random: o.random, path: '/api/v1/pods',
      fieldSelector: `spec.nodeName=${o.nodeName}`,
      project: projectAgentPod,
      onEvent: (e) => { if (e.type === 'DELETED') this.#forget(e.key); else this.#observe(e.key, e.object); },
      onSignal: (s) => { if (s.kind !== 'watch-started' && s.kind !== 'watch-ended') o.log({ msg: `reflector ${s.kind}`, ...(s.kind === 'error' ? { error: String(s.error) } : {}) }); },
    });
  }

  get synced(): boolean {
    return this.#reflector.synced;
  }

  /** Runs until `signal` aborts, then stops every worker and waits for in-flight writes. */
  async run(signal: AbortSignal): Promise<void> {
    this.#o.log({ msg: 'node agent started', node: this.#o.nodeName });
    try {
      await this.#reflector.run(signal);
    } finally {
      for (const key of [...this.#pods.keys()]) this.#forget(key);
      await Promise.allSettled([...this.#pending]);
    }
  }

  #observe(key: string, pod: AgentPod): void {
    if (pod.nodeName !== this.#o.nodeName) return;
    let entry = this.#pods.get(key);
    if (entry !== undefined && entry.pod.uid !== pod.uid) {
      this.#forget(key);
      entry = undefined;
    }
    if (pod.deleting) {
      // The kubelet's status for a terminating pod is the runtime's business: leave it.
      if (entry !== undefined) this.#forget(key);
      return;
    }
    if (entry === undefined) {
      entry = { pod, eventAt: this.#o.clock.now(), writing: false, dirty: false, workers: new Map(), stop: new AbortController(), restarts: new Map() };
      this.#pods.set(key, entry);
      this.#startWorkers(key, entry);
    }
    entry.pod = pod;
    entry.eventAt = this.#o.clock.now();
    for (const w of entry.workers.values()) for (const k of kinds) w[k]?.wake();
    this.#reconcile(key, entry);
  }

  #forget(key: string): void {
    const entry = this.#pods.get(key);
    if (entry === undefined) return;
    entry.stop.abort();
    this.#pods.delete(key);
  }

  #startWorkers(key: string, entry: PodEntry): void {
    for (const c of entry.pod.containers) {
      const make = (kind: ProbeKind, started: () => boolean): ProbeWorker | null => {
        const raw = probeOf(c, kind);
        if (raw === undefined) return null;
        const spec = toProbeSpec(raw);
        if (spec === undefined || spec.handler.type === 'exec') {
          this.#unsupportedOnce(entry.pod, c, kind);
          return null;
        }
        const status = statusOf(entry.pod, c);
        // A restarted agent inherits a container's readiness if it started before the agent did (minus the kubelet's grace).
        const seed = kind === 'readiness' && status !== undefined
          ? { value: status['ready'] === true ? 'success' as const : 'failure' as const, startedBefore: this.#startedAt - restartGracePeriodMs }
          : undefined;
        const worker = new ProbeWorker({
          kind, container: c, spec, pod: () => entry.pod, started, seed,
          onTransition: (t) => { this.#onTransition(key, entry, c, t); },
        }, { clock: this.#o.clock, random: this.#o.random, runProbe: this.#o.runProbe, agentStartedAt: this.#startedAt });
        this.#track(worker.run(entry.stop.signal));
        return worker;
      };
      const startup = make('startup', () => false);
      const started = (): boolean => {
        const view = containerView(entry.pod, c);
        if (c.startupProbe !== undefined && startup === null) return view?.state === 'running' && view.started !== false;
        return containerStarted(view, startup?.state ?? null);
      };
      entry.workers.set(c.name, { startup, liveness: make('liveness', started), readiness: make('readiness', started) });
    }
  }

  #unsupportedOnce(pod: AgentPod, c: AgentContainer, kind: ProbeKind): void {
    const id = `${pod.uid}/${c.name}/${kind}`;
    if (this.#unsupported.has(id)) return;
    this.#unsupported.add(id);
    this.#o.log({ msg: 'probe not run: exec probes (or probes without a handler) cannot run from the node agent', pod: `${pod.namespace}/${pod.name}`, container: c.name, kind });
  }

  #onTransition(key: string, entry: PodEntry, c: AgentContainer, t: Transition): void {
    if (entry.stop.signal.aborted) return;
    this.#o.log({ msg: 'probe result', pod: key, container: c.name, kind: t.kind, from: t.from, to: t.to, cause: t.cause, output: t.output });
    if (t.kind !== 'readiness' && t.to === 'failure' && t.cause === 'probe' && t.instance !== null) {
      entry.restarts.set(c.name, t.instance.containerId);
    }
    entry.eventAt = this.#o.clock.now();
    this.#reconcile(key, entry);
  }

  /** The readiness of one container instance, from its workers; undefined keeps the status's. */
  readonly #verdict = (entry: PodEntry): ReadyVerdict => (c, status) => {
    const w = entry.workers.get(c.name);
    const view = containerView(entry.pod, c);
    const instance = instanceOf(view);
    if (w === undefined || instance === null) return false;
    const started = c.startupProbe !== undefined && w.startup === null
      ? status['started'] !== false
      : containerStarted(view, w.startup?.state ?? null);
    if (!started) return false;
    if (c.readinessProbe === undefined) return true;
    if (w.readiness === null) return undefined;
    return w.readiness.state.committed === 'success' && sameInstance(w.readiness.state.instance, instance);
  };

  #reconcile(key: string, entry: PodEntry): void {
    if (entry.writing) {
      entry.dirty = true;
      return;
    }
    entry.writing = true;
    this.#track(this.#writeLoop(key, entry).finally(() => { entry.writing = false; }));
  }

  async #writeLoop(key: string, entry: PodEntry): Promise<void> {
    const max = this.#o.maxWriteAttempts ?? 5;
    for (let attempt = 0, rounds = 0; attempt < max && rounds < 50 && !entry.stop.signal.aborted; rounds++) {
      entry.dirty = false;
      const result = await this.#writeOnce(key, entry);
      if (result === 'retry') attempt++;
      else if (!isDirty(entry)) return;
    }
  }

  /** One compute-and-write; 'retry' after a conflict or a failed call. */
  async #writeOnce(key: string, entry: PodEntry): Promise<'done' | 'retry'> {
    const now = this.#o.clock.now();
    const eventAt = entry.eventAt;
    const { pod, changed } = applyRestarts(entry.pod, entry.restarts, now);
    entry.restarts.clear();
    const patch = statusPatch(pod, this.#verdict({ ...entry, pod }), now);
    if (patch === null && changed.length === 0) return 'done';
    const status = { ...(patch?.body['status'] as Raw | undefined) };
    if (changed.length > 0 && status['containerStatuses'] === undefined) status['containerStatuses'] = pod.containerStatuses;
    if (changed.length > 0 && status['initContainerStatuses'] === undefined && pod.initContainerStatuses !== undefined) status['initContainerStatuses'] = pod.initContainerStatuses;
    const base = entry.pod;
    try {
      const written = await this.#o.client.request<Raw>({
        method: 'PATCH', path: `/api/v1/namespaces/${pod.namespace}/pods/${pod.name}/status`, patch: 'strategic',
        body: { metadata: { resourceVersion: pod.resourceVersion }, status }, signal: entry.stop.signal,
      });
      const done = this.#o.clock.now();
      // Adopt the written pod only if no watch event replaced our view meanwhile: an event that
      // arrived during the write may be newer than the write (another writer's change right after
      // ours), and going back to the written pod would hide that change until the next event.
      if (!entry.stop.signal.aborted && entry.pod === base) entry.pod = projectAgentPod(written);
      for (const name of changed) this.#o.log({ msg: 'container restarted after probe failure', pod: key, container: name });
      for (const c of patch?.changes ?? []) {
        this.#o.log({ msg: 'condition written', pod: key, condition: c.type, status: c.to, from: c.from ?? null, reason: c.reason, message: c.message, latencyMs: done - eventAt });
      }
      if ((patch?.containers.length ?? 0) > 0) this.#o.log({ msg: 'container readiness written', pod: key, containers: patch?.containers, latencyMs: done - eventAt });
      return 'done';
    } catch (err: unknown) {
      for (const [name, id] of changed.length > 0 ? restartSources(entry.pod, changed) : []) entry.restarts.set(name, id);
      return this.#onWriteError(key, entry, err);
    }
  }

  async #onWriteError(key: string, entry: PodEntry, err: unknown): Promise<'done' | 'retry'> {
    if (entry.stop.signal.aborted) return 'done';
    if (isKubeError(err, 'NotFound')) {
      this.#forget(key);
      return 'done';
    }
    if (!isKubeError(err, 'Conflict')) this.#o.log({ msg: 'status write failed', pod: key, error: String(err) });
    try {
      const fresh = await this.#o.client.request<Raw>({ method: 'GET', path: `/api/v1/namespaces/${entry.pod.namespace}/pods/${entry.pod.name}`, signal: entry.stop.signal });
      const pod = projectAgentPod(fresh);
      if (pod.uid !== entry.pod.uid || pod.deleting) this.#forget(key);
      else entry.pod = pod;
    } catch (getErr: unknown) {
      if (isKubeError(getErr, 'NotFound')) this.#forget(key);
      else await this.#o.clock.sleepUntil(this.#o.clock.now() + 200, entry.stop.signal).catch(() => undefined);
    }
    return 'retry';
  }

  #track(p: Promise<void>): void {
    const tracked = p.catch((err: unknown) => { this.#o.log({ msg: 'internal error', error: String(err) }); });
    this.#pending.add(tracked);
    void tracked.finally(() => this.#pending.delete(tracked));
  }
}

/** Read through a call: another task sets it while a write is awaited. */
const isDirty = (entry: PodEntry): boolean => entry.dirty;

/** The containerIDs of the containers a failed restart write was for (to retry it). */
function restartSources(pod: AgentPod, names: readonly string[]): [string, string][] {
  const out: [string, string][] = [];
  for (const s of [...(pod.containerStatuses ?? []), ...(pod.initContainerStatuses ?? [])]) {
    const name = String(s['name']);
    if (names.includes(name) && typeof s['containerID'] === 'string') out.push([name, s['containerID']]);
  }
  return out;
}
