/**
 * One probe worker per (pod, container, kind), as the kubelet's prober runs
 * them (pkg/kubelet/prober/worker.go): a timer loop around one pass, where a
 * pass is outprobe's pure kubelet state machine (`decide`, probe, `record`)
 * over the newest pod the agent has seen. A pod event wakes the worker so a
 * new or newly started container is looked at at once; it probes then only
 * when the state machine asks for an immediate probe (`probeNow`).
 */
import type { Clock, ProbeKind, Random } from '../../../src/kernel/index.ts';
import { projectPod } from '../../../src/kube/index.ts';
import type { ProbeSpec } from '../../../src/policy/index.ts';
import type { Outcome } from '../../../src/probing/index.ts';
import { errored, probeWithRetries } from '../../../src/probing/index.ts';
import { createTarget, decide, record } from '../../../src/results/index.ts';
import type { ContainerView, PodPhase, Seed, TargetState, TargetView, Transition } from '../../../src/results/index.ts';
import { AddressGuard, buildRequest } from '../../../src/targets/index.ts';
import type { ProbeRequest } from '../../../src/targets/index.ts';
import type { AgentContainer, AgentPod } from './pod.ts';
import { startedAtOf, stateOf, statusOf } from './pod.ts';

/** Runs one resolved probe request (HTTP, TCP, gRPC); exec never reaches it. */
export type RunProbe = (req: ProbeRequest, signal: AbortSignal) => Promise<Outcome>;

export interface WorkerDeps {
  readonly clock: Clock;
  readonly random: Random;
  readonly runProbe: RunProbe;
  /** When the agent started: workers created within one period of it start with jitter, as the kubelet's do. */
  readonly agentStartedAt: number;
}

export interface WorkerOptions {
  readonly kind: ProbeKind;
  readonly container: AgentContainer;
  readonly spec: ProbeSpec;
  readonly pod: () => AgentPod | undefined;
  /** Whether the container counts as started (startup probe passed, or none). */
  readonly started: () => boolean;
  readonly onTransition: (t: Transition) => void;
  /** A value inherited from the pod's status (the kubelet's restart rule). @default none */
  readonly seed?: Seed | undefined;
}

export function containerView(pod: AgentPod, c: AgentContainer): ContainerView | undefined {
  const s = statusOf(pod, c);
  if (s === undefined) return undefined;
  const id = s['containerID'];
  return {
    containerId: typeof id === 'string' ? id : undefined,
    restartCount: typeof s['restartCount'] === 'number' ? s['restartCount'] : 0,
    state: stateOf(s),
    startedAt: startedAtOf(s),
    started: typeof s['started'] === 'boolean' ? s['started'] : undefined,
    restartable: true,
  };
}

/** Read through a call: the signal may abort while a sleep is awaited. */
const aborted = (signal: AbortSignal): boolean => signal.aborted;

export class ProbeWorker {
  state: TargetState;
  readonly #o: WorkerOptions;
  readonly #d: WorkerDeps;
  #wake: (() => void) | undefined;

  constructor(o: WorkerOptions, deps: WorkerDeps) {
    this.#o = o;
    this.#d = deps;
    const pod = o.pod();
    this.state = createTarget({ podUid: pod?.uid ?? '', container: o.container.name, kind: o.kind, policy: 'node-agent' }, {
      config: { successThreshold: o.spec.successThreshold, failureThreshold: o.spec.failureThreshold, initialDelaySeconds: o.spec.initialDelaySeconds },
      seed: o.seed,
    });
    // Take in the current instance (and a seed) at once, without probing, so the
    // agent's first write already knows this instance's value.
    const d = decide(this.state, this.#view(deps.clock.now()), deps.clock.now());
    this.state = d.probeNow ? { ...d.state, probeNowArmed: true } : d.state;
  }

  #view(now: number): TargetView {
    const pod = this.#o.pod();
    const podView = pod === undefined ? undefined : { uid: pod.uid, phase: pod.phase as PodPhase, deletionTimestamp: pod.deleting ? now : undefined };
    return { pod: podView, container: pod === undefined ? undefined : containerView(pod, this.#o.container), started: this.#o.started() };
  }

  /** A pod event: look at the pod now rather than at the next tick. */
  wake(): void {
    this.#wake?.();
  }

  async run(signal: AbortSignal): Promise<void> {
    const { clock, random } = this.#d;
    const periodMs = this.#o.spec.periodSeconds * 1000;
    let due = clock.now();
    if (due - this.#d.agentStartedAt < periodMs) due += Math.floor(random() * periodMs);
    while (!signal.aborted && !this.state.stopped) {
      const woken = await this.#sleep(due, signal);
      if (aborted(signal)) return;
      due = await this.#pass(woken, due, periodMs, signal);
    }
  }

  /** One kubelet pass; returns when the next one is due. */
  async #pass(woken: boolean, due: number, periodMs: number, signal: AbortSignal): Promise<number> {
    const now = this.#d.clock.now();
    const pod = this.#o.pod();
    const d = decide(this.state, this.#view(now), now);
    this.state = d.state;
    if (d.emitted !== null) this.#o.onTransition(d.emitted);
    if (d.action === 'stop') return due;
    if (d.action === 'skip') return woken ? Math.min(due, d.wakeAt ?? due) : (d.wakeAt ?? now + periodMs);
    if (woken && !d.probeNow) return due;
    const outcome = pod === undefined ? errored('no pod') : await this.#probe(pod, signal);
    if (signal.aborted) return due;
    const r = record(this.state, outcome, this.#d.clock.now(), d.state.instance ?? undefined);
    this.state = r.state;
    if (r.emitted !== null) this.#o.onTransition(r.emitted);
    return now + periodMs;
  }

  #probe(pod: AgentPod, signal: AbortSignal): Promise<Outcome> {
    // The guard lets through the pod's own IP and nothing else.
    const guard = new AddressGuard(pod.podIP === undefined ? [] : [`${pod.podIP}/32`]);
    const req = buildRequest(this.#o.spec, projectPod(pod.raw), this.#o.container.name, guard);
    if (req.type === 'error') return Promise.resolve(errored(req.error));
    return probeWithRetries(() => this.#d.runProbe(req, signal), signal);
  }

  /** Sleeps until `due` or a wake-up; true when woken early. */
  async #sleep(due: number, signal: AbortSignal): Promise<boolean> {
    const timer = new AbortController();
    const onAbort = (): void => { timer.abort(); };
    signal.addEventListener('abort', onAbort, { once: true });
    let woken = false;
    const wake = new Promise<void>((resolve) => {
      this.#wake = () => { woken = true; resolve(); };
    });
    try {
      await Promise.race([this.#d.clock.sleepUntil(due, timer.signal).catch(() => undefined), wake]);
    } finally {
      this.#wake = undefined;
      timer.abort();
      signal.removeEventListener('abort', onAbort);
    }
    return woken;
  }
}
