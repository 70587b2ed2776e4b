/**
 * When remediation waits (ADR 0033), pure: remediation is destructive, so
 * while outprobe cannot tell a dead pod from its own trouble it waits (and
 * keeps probing); when the wait ends and the pod still fails, it acts.
 *
 * - Handover in progress: the shard membership changed less than a lease
 *   duration plus one probe period ago. The old owner may still act, the new
 *   one has few results of its own, and peers' reports describe the old
 *   split.
 * - Peers' reports are older than the failure: a live peer has not renewed
 *   its shard Lease (which carries its per-policy failing count) since the
 *   failure settled here (observed + one period + the probe's timeout), so
 *   the fleet-wide halt would count a correlated failure as this replica's
 *   share only.
 * - This replica's own event loop stalled within the last probe run (period
 *   + timeout): its probes' timeouts may be its own.
 */
export interface FleetWaitInput {
  readonly now: number;
  /** When this replica observed the failure (its remediation request). */
  readonly since: number;
  /** One period plus the failing probe's timeout. */
  readonly settleMs: number;
  /** The failing probe's period. */
  readonly periodMs: number;
  readonly leaseDurationMs: number;
  /** When the live membership last changed; undefined before it was first computed (or without sharding). */
  readonly membershipChangedAt: number | undefined;
  /** The live peers' Leases: who, and when each last renewed. */
  readonly peers: readonly { readonly holder: string; readonly renewedAt: number }[];
  /** This replica's event loop stalled within the last `settleMs`. */
  readonly stalled: boolean;
}

export type WaitCause = 'handover' | 'peers-stale' | 'stall';

export interface FleetWait {
  readonly cause: WaitCause;
  readonly message: string;
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** Why remediation must wait now; undefined when it need not. */
export function fleetWait(i: FleetWaitInput): FleetWait | undefined {
  const quiet = i.leaseDurationMs + i.periodMs;
  if (i.membershipChangedAt !== undefined && i.now - i.membershipChangedAt < quiet) {
    return { cause: 'handover', message: `shard membership changed ${seconds(i.now - i.membershipChangedAt)} ago (handover in progress, under lease duration + one period = ${seconds(quiet)}): remediation waits` };
  }
  const settled = i.since + i.settleMs;
  const stale = i.peers.filter((p) => !(p.renewedAt >= settled)).map((p) => p.holder).sort();
  if (stale.length > 0) {
    return { cause: 'peers-stale', message: `peers ${stale.join(', ')} have not renewed their report since the failure began (their failing counts may not show it yet): remediation waits` };
  }
  if (i.stalled) {
    return { cause: 'stall', message: `this replica's event loop stalled within the last probe run (${seconds(i.settleMs)}): its own probes may have timed out, remediation waits` };
  }
  return undefined;
}
