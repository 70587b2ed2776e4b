/**
 * The benchmark's view of the pods, folded from watch events: which pods
 * run with an IP, which have the gate condition True, every change of the
 * gate condition (each one is a write that reached the API server), false
 * flips (True → anything else on a pod the benchmark did not make fail), and
 * when each pod's gate was seen turning False.
 */

export interface PodLike {
  readonly metadata?: { readonly namespace?: string; readonly name?: string; readonly uid?: string };
  readonly status?: {
    readonly phase?: string;
    readonly podIP?: string;
    readonly conditions?: readonly { readonly type?: string; readonly status?: string; readonly lastTransitionTime?: string; readonly reason?: string; readonly message?: string }[];
  };
}

interface PodView {
  readonly uid: string;
  readonly ip: string | undefined;
  /** Status of the gate condition; undefined when the pod has none. */
  readonly gate: string | undefined;
  /** The whole gate condition as written (a change is a write). */
  readonly gateText: string | undefined;
}

export class GateTracker {
  readonly #conditionType: string;
  readonly #pods = new Map<string, PodView>();
  #running = 0;
  #gateTrue = 0;
  #withGate = 0;
  /** Gate condition changes seen (created or changed). */
  gateChanges = 0;
  /** True → not True transitions of a live pod's gate, pods the benchmark made fail left out. */
  falseFlips = 0;
  /** The first 50 false flips: which pod, when, and what its gate said then (to find them in the replicas' logs). */
  readonly falseFlipLog: { pod: string; at: string; status: string | undefined; reason: string | undefined; message: string | undefined }[] = [];
  /** True → not True transitions of pods in `failing` (wanted). */
  wantedFlips = 0;
  /** Pods (`namespace/name`) the benchmark makes fail: their flips are not false. */
  readonly failing = new Set<string>();
  /** Pod → times (ms since the epoch) the watch showed its gate turn False (from anything else, a first False included). */
  readonly falseSeen = new Map<string, number[]>();

  constructor(conditionType: string) {
    this.#conditionType = conditionType;
  }

  get pods(): number {
    return this.#pods.size;
  }

  /** Pods Running with a pod IP. */
  get running(): number {
    return this.#running;
  }

  get gateTrue(): number {
    return this.#gateTrue;
  }

  /** Pods that carry the gate condition at all (any status). */
  get withGate(): number {
    return this.#withGate;
  }

  /**
   * Starts the change and flip counts over (after the driver itself wrote
   * the gates, as the write-ceiling phase and its reset do: those are not
   * outprobe's writes, and the reset's True → absent are not false flips).
   */
  resetCounts(): void {
    this.gateChanges = 0;
    this.falseFlips = 0;
    this.wantedFlips = 0;
    this.falseFlipLog.length = 0;
    this.falseSeen.clear();
  }

  /** The pod IP of `key` (`namespace/name`), if it runs with one. */
  ipOf(key: string): string | undefined {
    return this.#pods.get(key)?.ip;
  }

  /** Keys (`namespace/name`) of the pods whose gate is True now. */
  trueKeys(): string[] {
    const out: string[] = [];
    for (const [key, v] of this.#pods) if (v.gate === 'True') out.push(key);
    return out;
  }

  /** The gate status of `key` now. */
  gateOf(key: string): string | undefined {
    return this.#pods.get(key)?.gate;
  }

  /** Pod IPs by key `namespace/name`. */
  ips(filter?: (key: string) => boolean): Set<string> {
    const out = new Set<string>();
    for (const [key, v] of this.#pods) if (v.ip !== undefined && (filter === undefined || filter(key))) out.add(v.ip);
    return out;
  }

  /** After a relist: forgets pods that are not in it. */
  retainOnly(keys: ReadonlySet<string>): void {
    for (const [key, v] of this.#pods) {
      if (keys.has(key)) continue;
      this.#count(v, -1);
      this.#pods.delete(key);
    }
  }

  apply(type: string, pod: PodLike): void {
    const key = `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
    const before = this.#pods.get(key);
    if (before !== undefined) this.#count(before, -1);
    if (type === 'DELETED') {
      this.#pods.delete(key);
      return;
    }
    const cond = pod.status?.conditions?.find((c) => c.type === this.#conditionType);
    const podIP = pod.status?.phase === 'Running' ? pod.status.podIP : undefined;
    const view: PodView = {
      uid: pod.metadata?.uid ?? '',
      ip: podIP === '' ? undefined : podIP,
      gate: cond?.status,
      gateText: cond === undefined ? undefined : JSON.stringify([cond.status, cond.lastTransitionTime, cond.reason, cond.message]),
    };
    const samePod = before !== undefined && before.uid === view.uid;
    if (view.gateText !== undefined && view.gateText !== (samePod ? before.gateText : undefined)) this.gateChanges++;
    if (samePod && before.gate === 'True' && view.gate !== 'True') {
      if (this.failing.has(key)) this.wantedFlips++;
      else {
        this.falseFlips++;
        if (this.falseFlipLog.length < 50) this.falseFlipLog.push({ pod: key, at: new Date().toISOString(), status: cond?.status, reason: cond?.reason, message: cond?.message });
      }
    }
    if (view.gate === 'False' && (!samePod || before.gate !== 'False')) {
      const list = this.falseSeen.get(key);
      if (list === undefined) this.falseSeen.set(key, [Date.now()]);
      else list.push(Date.now());
    }
    this.#pods.set(key, view);
    this.#count(view, 1);
  }

  #count(v: PodView, sign: 1 | -1): void {
    if (v.ip !== undefined) this.#running += sign;
    if (v.gate === 'True') this.#gateTrue += sign;
    if (v.gate !== undefined) this.#withGate += sign;
  }
}
