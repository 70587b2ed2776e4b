/**
 * The divergence view (issue 15, ADR 0023): where the node's idea of a pod's
 * readiness (the kubelet's `ContainersReady`, probed from the pod's own node)
 * and outprobe's (probed from another node) disagree. Pure: the caller reads
 * both views and the clock.
 */

/** outprobe's confirmed readiness: its results stage's value once thresholds are met; `null` while not confirmed. */
export type OutsideView = 'success' | 'failure' | null;

/** The node's view: the pod's ContainersReady condition, if it has one. */
export interface NodeView {
  readonly status: 'True' | 'False' | 'Unknown';
  /** `lastTransitionTime` in ms; `undefined` when the condition carries none. */
  readonly since: number | undefined;
  readonly reason?: string | undefined;
}

export interface DivergenceInput {
  readonly outside: OutsideView;
  readonly node: NodeView | undefined;
  /** The readiness probe's period: how long ContainersReady must have held its status to count as stable. */
  readonly periodMs: number;
  readonly now: number;
}

export type Divergence =
  | { readonly diverged: false }
  /** `node`: what ContainersReady says; outprobe says the opposite. */
  | { readonly diverged: true; readonly node: 'ready' | 'unready' };

const agree: Divergence = { diverged: false };

/**
 * Diverged when both views are known, stable and opposite:
 * - outprobe's result is confirmed (its probes reached the threshold for it);
 * - ContainersReady is True or False (not Unknown, not missing) and has held
 *   that status for at least one probe period, so a pod merely starting, or a
 *   kubelet that has not caught up with a change yet, is not diverged. A
 *   condition without lastTransitionTime counts as stable (the kubelet
 *   always writes one; without it there is no start to wait from).
 */
export function decideDivergence(i: DivergenceInput): Divergence {
  const { outside, node } = i;
  if (outside === null || node === undefined || node.status === 'Unknown') return agree;
  if (node.since !== undefined && i.now - node.since < i.periodMs) return agree;
  if (node.status === 'True' && outside === 'failure') return { diverged: true, node: 'ready' };
  if (node.status === 'False' && outside === 'success') return { diverged: true, node: 'unready' };
  return agree;
}

/** The Event text naming both views (no probe output for a success; a failure's output is what Unhealthy Events carry). */
export function divergenceMessage(d: {
  readonly node: 'ready' | 'unready';
  readonly nodeReason?: string | undefined;
  readonly policy: string;
  readonly container: string;
  readonly replica: string;
  readonly output: string;
}): string {
  const who = `ProbePolicy ${d.policy}, container ${d.container}`;
  if (d.node === 'ready') {
    return `${who}: node says ready (ContainersReady=True), outprobe's readiness probe fails from replica ${d.replica}: ${d.output || 'probe failed'}`;
  }
  const reason = d.nodeReason === undefined || d.nodeReason === '' ? '' : `, ${d.nodeReason}`;
  return `${who}: node says not ready (ContainersReady=False${reason}), outprobe's readiness probe succeeds from replica ${d.replica}`;
}
