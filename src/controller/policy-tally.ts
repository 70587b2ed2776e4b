import type { BudgetPod } from '../writeback/index.ts';

/** What one pod a policy selects contributes to the policy's status and remediation budget. */
export interface PodMark {
  readonly uid: string;
  /** The pod's position in the informer's store (insertion order), so plan issues list in the order a scan of the store gives. */
  readonly seq: number;
  /** Not terminating: counted in the status (a terminating pod still counts in the budget, as unavailable). */
  readonly counted: boolean;
  /** The policy's gate condition (or `Ready` when it writes none) is True. */
  readonly ready: boolean;
  /** The kubelet's Ready (ContainersReady and every gate True), and not terminating: the budget's "available". */
  readonly available: boolean;
  /** The policy writes a gate the pod does not list. */
  readonly ungated: boolean;
  /** The pod lists the Enforce policy's gate and another writer set its condition. */
  readonly foreign: boolean;
  /** A liveness or startup target of the policy on this pod committed Failure. */
  readonly failing: boolean;
  /**
   * The panic threshold counts it as gated: not terminating, the Enforce
   * policy's readiness target is on it (so this replica owns it and won the
   * gate type there), it lists the gate and no other writer set the condition.
   */
  readonly gated: boolean;
  /** Why the policy plans no target for one of its blocks on this pod. */
  readonly issue: string | undefined;
  /**
   * The node's ContainersReady and the policy's confirmed readiness on this
   * replica disagree, stably (ADR 0023). @default false
   */
  readonly diverged?: boolean;
  /** That issue is about the container's own probe (`fromContainer`: missing or refused), not a missing container. @default false */
  readonly probeIssue?: boolean;
}

/**
 * One policy's status counts, kept as pods and targets change instead of
 * recomputed by a scan of every pod on every status tick (issue 18): the
 * sums always equal those over `marks`, and `erroring` holds the keys of the
 * policy's targets whose last attempts errored.
 */
export class PolicyTally {
  readonly #marks = new Map<string, PodMark>();
  readonly #issues = new Map<string, PodMark>();
  readonly erroring = new Set<string>();
  /** Keys of the policy's readiness targets whose probes confirm Failure (the panic threshold's candidates). */
  readonly readinessFailing = new Set<string>();
  pods = 0;
  ready = 0;
  ungated = 0;
  foreign = 0;
  failing = 0;
  gated = 0;
  /** Counted pods whose readiness the node and outprobe see differently (ADR 0023). */
  diverged = 0;
  /** Counted pods whose plan issue is about a container's own probe (ADR 0023). */
  probeIssues = 0;

  /** The pods (by `namespace/name`) the policy selects. */
  podKeys(): IterableIterator<string> {
    return this.#marks.keys();
  }

  get(podKey: string): PodMark | undefined {
    return this.#marks.get(podKey);
  }

  set(podKey: string, mark: PodMark): void {
    this.delete(podKey);
    this.#marks.set(podKey, mark);
    this.#count(mark, 1);
    if (mark.counted && mark.issue !== undefined) this.#issues.set(podKey, mark);
  }

  delete(podKey: string): void {
    const old = this.#marks.get(podKey);
    if (old === undefined) return;
    this.#marks.delete(podKey);
    this.#issues.delete(podKey);
    this.#count(old, -1);
  }

  /** Plan issues of the counted pods, in store order. */
  planIssues(): string[] {
    if (this.#issues.size === 0) return [];
    return [...this.#issues.values()].sort((a, b) => a.seq - b.seq).map((m) => m.issue ?? '');
  }

  budgetPods(remediating: (uid: string) => boolean): BudgetPod[] {
    const out: BudgetPod[] = [];
    for (const m of this.#marks.values()) out.push({ uid: m.uid, ready: m.available, failing: m.failing, remediating: remediating(m.uid) });
    return out;
  }

  #count(m: PodMark, by: 1 | -1): void {
    if (!m.counted) return;
    this.pods += by;
    if (m.ready) this.ready += by;
    if (m.ungated) this.ungated += by;
    if (m.foreign) this.foreign += by;
    if (m.failing) this.failing += by;
    if (m.gated) this.gated += by;
    if (m.issue !== undefined && m.probeIssue === true) this.probeIssues += by;
    if (m.diverged === true) this.diverged += by;
  }
}
