import type { Clock } from '../kernel/index.ts';
import type { Pod } from '../kube/index.ts';
import { fleetBudgetDecision } from '../writeback/index.ts';
import type { BudgetDecision, BudgetSpec, EntryPod, FleetBudgetInput, LedgerEntry, LedgerStore } from '../writeback/index.ts';
import { fleetWait } from './fleet-wait.ts';
import type { FleetWait } from './fleet-wait.ts';
import type { PolicyTally } from './policy-tally.ts';
import type { RemediationRequest } from './remediation.ts';

/**
 * What the Remediator asks the fleet (ADR 0033): whether to wait, what the
 * fleet-wide budget allows, and the ledger reservation that is the last
 * word before an eviction or delete.
 */
export interface FleetGuard {
  /** Why remediation of this request must wait now; undefined when it need not. */
  wait(req: RemediationRequest, since: number): FleetWait | undefined;
  /** The budget over the fleet's view: peers' failing counts and the ledger as last read. */
  decide(req: RemediationRequest, pod: Pod, policyUid: string, budget: BudgetSpec, remediating: ReadonlyMap<string, string>): BudgetDecision;
  /** Reads the ledger, decides again over it, and appends this remediation when still allowed. */
  reserve(req: RemediationRequest, pod: Pod, policyUid: string, budget: BudgetSpec, remediating: ReadonlyMap<string, string>): Promise<BudgetDecision>;
  /** The remediation did not happen: its entry goes (best effort). */
  release(req: RemediationRequest, pod: Pod, policyUid: string): void;
}

/** The fleet as the guard reads it: membership, peers' Leases and counts (src/sharding). */
export interface FleetView {
  readonly leaseDurationMs: number;
  /** When the live membership last changed. */
  membershipChangedAt(): number | undefined;
  /** The live peers' Leases (not this replica's own). */
  peers(): readonly { readonly holder: string; readonly renewedAt: number }[];
  /** This replica's failing count for the policy plus what the live peers published. */
  failing(policyKey: string, local: number): number;
  owns(pod: Pod): boolean;
}

export interface FleetRemediationDeps {
  readonly clock: Clock;
  readonly store: LedgerStore;
  readonly fleet: FleetView;
  readonly tally: (policyKey: string) => PolicyTally | undefined;
  readonly pod: (key: string) => Pod | undefined;
  /** Did this replica's event loop stall within the last `ms`? @default never */
  readonly stalledWithin?: (ms: number) => boolean;
  /** A ledger write that failed (not a refusal). */
  readonly onError?: (error: unknown) => void;
}

/** The FleetGuard over a LedgerStore, the shard membership and this replica's tallies. */
export class FleetRemediation implements FleetGuard {
  readonly #d: FleetRemediationDeps;
  /** The policy's pods this replica owns, counted at most once a second (a walk over the policy's pods: ADR 0031 keeps it off every step). */
  readonly #owned = new Map<string, { readonly at: number; readonly n: number }>();

  constructor(deps: FleetRemediationDeps) {
    this.#d = deps;
  }

  wait(req: RemediationRequest, since: number): FleetWait | undefined {
    const { clock, fleet } = this.#d;
    return fleetWait({
      now: clock.now(),
      since,
      settleMs: req.settleMs,
      // The request carries period + timeout: the wait is at least as long as one period.
      periodMs: req.settleMs,
      leaseDurationMs: fleet.leaseDurationMs,
      membershipChangedAt: fleet.membershipChangedAt(),
      peers: fleet.peers(),
      stalled: this.#d.stalledWithin?.(req.settleMs) === true,
    });
  }

  decide(req: RemediationRequest, pod: Pod, policyUid: string, budget: BudgetSpec, remediating: ReadonlyMap<string, string>): BudgetDecision {
    return fleetBudgetDecision(this.#input(req, pod, this.#d.store.cached(policyUid), remediating), budget);
  }

  async reserve(req: RemediationRequest, pod: Pod, policyUid: string, budget: BudgetSpec, remediating: ReadonlyMap<string, string>): Promise<BudgetDecision> {
    return this.#d.store.reserve(policyUid, { uid: pod.uid, key: req.podKey }, (entries) => fleetBudgetDecision(this.#input(req, pod, entries, remediating), budget));
  }

  release(_req: RemediationRequest, pod: Pod, policyUid: string): void {
    this.#d.store.release(policyUid, pod.uid).catch((error: unknown) => this.#d.onError?.(error));
  }

  #ownedPods(policyKey: string, tally: PolicyTally, now: number): number {
    const cached = this.#owned.get(policyKey);
    if (cached !== undefined && now - cached.at < 1000 && now >= cached.at) return cached.n;
    let n = 0;
    for (const key of tally.podKeys()) {
      const p = this.#d.pod(key);
      if (p !== undefined && p.deletionTimestamp === undefined && this.#d.fleet.owns(p)) n++;
    }
    this.#owned.set(policyKey, { at: now, n });
    return n;
  }

  #input(req: RemediationRequest, pod: Pod, ledger: readonly LedgerEntry[], remediating: ReadonlyMap<string, string>): FleetBudgetInput {
    const tally = this.#d.tally(req.policy);
    const self = this.#d.store.replica;
    const now = this.#d.clock.now();
    // This replica's remediations in flight that the ledger it last read does not show yet: of
    // this policy's pods only (the map holds every policy's; another policy's pod would read
    // as a pod of this one remediated and gone, and halt it: seen in test/e2e/rbac.test.ts).
    const known = new Set(ledger.map((e) => e.uid));
    const entries = [...ledger];
    for (const [uid, key] of remediating) if (!known.has(uid) && tally?.get(key)?.uid === uid) entries.push({ uid, key, replica: self, at: now });
    const podOf = (e: LedgerEntry): EntryPod => {
      const m = tally?.get(e.key);
      if (m === undefined || m.uid !== e.uid) return 'gone';
      if (!m.counted) return 'terminating';
      return m.available ? 'available' : 'unavailable';
    };
    return {
      self,
      candidateUid: pod.uid,
      pods: tally?.pods ?? 0,
      ownedPods: tally === undefined ? 0 : this.#ownedPods(req.policy, tally, now),
      failing: this.#d.fleet.failing(req.policy, tally?.failing ?? 0),
      unavailable: tally?.budgetCounts({ uid: pod.uid, podKey: req.podKey }, new Map()).unavailable ?? 0,
      entries,
      podOf,
    };
  }
}
