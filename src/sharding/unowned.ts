import type { Pod } from '../kube/index.ts';

/**
 * The `outprobe_unowned_pods` gauge of one replica (what OutprobeUnownedPods
 * alerts on): the running pods some valid policy selects that no live member
 * owns. 0 while this replica is a member (every pod has an owner among the
 * members), and 0 while it is not one but live proven peers are (they own
 * every pod and report their own gauge: a replica not joined yet, standing
 * down, or unable to prove itself must not page for pods its peers probe).
 */
export function unownedCount(o: {
  readonly members: readonly string[] | undefined;
  /** Live, proven members other than this replica. */
  readonly livePeers: number;
  readonly pods: Iterable<Pod>;
  /** Does a valid policy select the pod? @default every pod counts */
  readonly selected?: ((pod: Pod) => boolean) | undefined;
}): number {
  if (o.members !== undefined && o.members.length > 0) return 0;
  if (o.livePeers > 0) return 0;
  let n = 0;
  for (const p of o.pods) if (p.phase !== 'Succeeded' && p.phase !== 'Failed' && (o.selected?.(p) ?? true)) n++;
  return n;
}
