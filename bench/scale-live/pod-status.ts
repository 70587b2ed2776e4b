/**
 * Pods brought to Running by the benchmark itself (`--pod-status bench`, issue
 * 31 item 5), pure: each pod's address on its node's podCIDR and the status
 * kwok's two pod stages (test/support/cluster/kwok-stages.yaml:
 * outprobe-pod-create, then outprobe-pod-ready) leave on a pod, written in one
 * status write instead of kwok's two. kwok is told to leave these pods alone
 * (`disregardStatusWithLabelSelector` on `statusLabel`), so nothing else
 * writes their status.
 */
import type { LiveBenchOptions } from './options.ts';

/** The label kwok is configured to disregard: a pod carrying it has its status written by the benchmark. */
export const statusLabel = 'bench.outprobe.io/status';
export const statusLabelValue = 'bench';

/** Nodes per loopback /16 (plane.ts: nodes 0–249 on the plane's network, every further 250 on one more). */
const nodesPerNetwork = 250;

/**
 * The address of pod i: on node ⌊i / podsPerNode⌋, whose podCIDR is
 * `<prefix>n.0/24` (`prefixes[k]` = `127.X.` of the k-th network, node n
 * on network ⌊n / 250⌋ as `n mod 250`), host part 1 + (i mod podsPerNode).
 * Distinct for every i, as kwok's per-node pool hands them out.
 */
export function podIpOf(o: Pick<LiveBenchOptions, 'podsPerNode'>, prefixes: readonly string[], i: number): string {
  const node = Math.floor(i / o.podsPerNode);
  const prefix = prefixes[Math.floor(node / nodesPerNetwork)];
  if (prefix === undefined) throw new Error(`pod ${i} is on node ${node}, past the ${prefixes.length} pod network(s)`);
  return `${prefix}${node % nodesPerNetwork}.${1 + (i % o.podsPerNode)}`;
}

export interface CreatedPod {
  readonly metadata: { readonly uid: string };
  readonly spec: { readonly containers: readonly { readonly name: string; readonly image: string }[] };
}

/**
 * The status a kwok-managed pod has once kwok's stages ran: Running with
 * `podIP`/`podIPs` and the node's address (kwok's `--node-ip`, 127.0.0.1; like kwok, no `hostIPs`),
 * conditions Initialized and ContainersReady True and Ready False for the
 * readiness gate, every container started, ready, running since `now`, with
 * kwok's containerID and imageID. Sent as a JSON merge patch of the status
 * subresource (lists replaced whole: a new pod has none of its own).
 */
export function runningStatus(pod: CreatedPod, podIP: string, now: Date, hostIP = '127.0.0.1'): Record<string, unknown> {
  const at = now.toISOString().replace(/\.\d{3}Z$/, 'Z'); // the API's seconds
  return {
    phase: 'Running',
    conditions: [
      { type: 'Initialized', status: 'True', lastProbeTime: null, lastTransitionTime: at },
      { type: 'Ready', status: 'False', reason: 'ReadinessGatesNotReady', message: 'the status of pod readiness gate is not "True"', lastProbeTime: null, lastTransitionTime: at },
      { type: 'ContainersReady', status: 'True', lastProbeTime: null, lastTransitionTime: at },
    ],
    hostIP,
    podIP,
    podIPs: [{ ip: podIP }],
    startTime: at,
    containerStatuses: pod.spec.containers.map((c) => ({
      name: c.name,
      image: c.image,
      imageID: `kwok-image://${c.image}`,
      containerID: `kwok://${pod.metadata.uid}-${c.name}-0`,
      ready: true,
      restartCount: 0,
      started: true,
      state: { running: { startedAt: at } },
    })),
  };
}

/** A strategic-merge patch of pods/status removing the condition of `type` (the reset between the write ceiling and the convergence). */
export function conditionRemoval(type: string): Record<string, unknown> {
  return { status: { conditions: [{ type, $patch: 'delete' }] } };
}
