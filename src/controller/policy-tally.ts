import type { BudgetCounts, BudgetPod } from '../writeback/index.ts';

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

/** A mark's booleans, one bit each. */
const bit = { counted: 1, ready: 2, available: 4, ungated: 8, foreign: 16, failing: 32, gated: 64, diverged: 128, probeIssue: 256 } as const;

/**
 * A mark as a tally keeps it: four fields instead of twelve (its booleans in
 * one small integer), about 32 bytes per pod and policy instead of 120
 * (issue 17). Read through the same names as a PodMark.
 */
class StoredMark implements PodMark {
  readonly uid: string;
  readonly seq: number;
  readonly bits: number;
  readonly issue: string | undefined;

  constructor(m: PodMark) {
    this.uid = m.uid;
    this.seq = m.seq;
    this.issue = m.issue;
    this.bits =
      (m.counted ? bit.counted : 0) | (m.ready ? bit.ready : 0) | (m.available ? bit.available : 0) | (m.ungated ? bit.ungated : 0) |
      (m.foreign ? bit.foreign : 0) | (m.failing ? bit.failing : 0) | (m.gated ? bit.gated : 0) | (m.diverged === true ? bit.diverged : 0) |
      (m.probeIssue === true ? bit.probeIssue : 0);
  }

  get counted(): boolean {
    return (this.bits & bit.counted) !== 0;
  }
  get ready(): boolean {
    return (this.bits & bit.ready) !== 0;
  }
  get available(): boolean {
    return (this.bits & bit.available) !== 0;
  }
  get ungated(): boolean {
    return (this.bits & bit.ungated) !== 0;
  }
  get foreign(): boolean {
    return (this.bits & bit.foreign) !== 0;
  }
  get failing(): boolean {
    return (this.bits & bit.failing) !== 0;
  }
  get gated(): boolean {
    return (this.bits & bit.gated) !== 0;
  }
  get diverged(): boolean {
    return (this.bits & bit.diverged) !== 0;
  }
  get probeIssue(): boolean {
    return (this.bits & bit.probeIssue) !== 0;
  }
}

/** A mark's fields as plain data (a StoredMark's booleans are getters, which a spread would not copy). */
export function markFields(m: PodMark): PodMark {
  return {
    uid: m.uid, seq: m.seq, counted: m.counted, ready: m.ready, available: m.available, ungated: m.ungated, foreign: m.foreign,
    failing: m.failing, gated: m.gated, issue: m.issue, diverged: m.diverged === true, probeIssue: m.probeIssue === true,
  };
}

/**
 * One policy's status counts, kept as pods and targets change instead of
 * recomputed by a scan of every pod on every status tick (issue 18): the
 * sums always equal those over `marks`, and `erroring` holds the keys of the
 * policy's targets whose last attempts errored.
 */
export class PolicyTally {
  readonly #marks = new Map<string, StoredMark>();
  readonly #issues = new Map<string, StoredMark>();
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
  /** Over every mark, terminating pods included (the remediation budget's counts). */
  #budget = { pods: 0, failing: 0, notAvailable: 0 };

  /** The pods (by `namespace/name`) the policy selects. */
  podKeys(): IterableIterator<string> {
    return this.#marks.keys();
  }

  get(podKey: string): PodMark | undefined {
    return this.#marks.get(podKey);
  }

  set(podKey: string, mark: PodMark): void {
    const old = this.#marks.get(podKey);
    if (old !== undefined) this.#count(old, -1);
    if (old !== undefined) this.#countBudget(old, -1);
    const stored = new StoredMark(mark);
    this.#countBudget(stored, 1);
    // An existing key keeps its place and its key string (one copy per pod, shared with the other maps).
    this.#marks.set(podKey, stored);
    this.#count(stored, 1);
    if (stored.counted && stored.issue !== undefined) this.#issues.set(podKey, stored);
    else this.#issues.delete(podKey);
  }

  delete(podKey: string): void {
    const old = this.#marks.get(podKey);
    if (old === undefined) return;
    this.#marks.delete(podKey);
    this.#issues.delete(podKey);
    this.#count(old, -1);
    this.#countBudget(old, -1);
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

  /**
   * What `budgetCountsOf(candidate.uid, budgetPods(...))` gives, from counts
   * kept as marks change and the pods being remediated (few): O(remediating),
   * not O(pods).
   */
  budgetCounts(candidate: { readonly uid: string; readonly podKey: string }, remediating: ReadonlyMap<string, string>): BudgetCounts {
    let unavailable = this.#budget.notAvailable;
    const own = this.#marks.get(candidate.podKey);
    if (own !== undefined && own.uid === candidate.uid && !own.available) unavailable--;
    for (const [uid, podKey] of remediating) {
      const m = this.#marks.get(podKey);
      if (uid !== candidate.uid && m !== undefined && m.uid === uid && m.available) unavailable++;
    }
    return { pods: this.#budget.pods, failing: this.#budget.failing, unavailable };
  }

  #countBudget(m: StoredMark, by: 1 | -1): void {
    this.#budget.pods += by;
    if (m.failing) this.#budget.failing += by;
    if (!m.available) this.#budget.notAvailable += by;
  }

  #count(m: StoredMark, by: 1 | -1): void {
    if (!m.counted) return;
    this.pods += by;
    if (m.ready) this.ready += by;
    if (m.ungated) this.ungated += by;
    if (m.foreign) this.foreign += by;
    if (m.failing) this.failing += by;
    if (m.gated) this.gated += by;
    if (m.issue !== undefined && m.probeIssue) this.probeIssues += by;
    if (m.diverged) this.diverged += by;
  }
}
