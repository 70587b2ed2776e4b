/**
 * Knobs of `npm run bench:scale`: `--name=value` (or `--name value`)
 * flags, else `BENCH_NAME` environment variables, else the defaults below.
 */

export type ProbeHandler = 'http' | 'tcp';
export type PodStatusBy = 'bench' | 'kwok';

export interface LiveBenchOptions {
  /** Gated pods. @default 1000 */
  readonly pods: number;
  /** outprobe replicas (real processes, identities bench-0 …), sharded by their Leases. @default 1 */
  readonly replicas: number;
  /** ProbePolicies; pod i is selected by policy i mod policies. @default 5 */
  readonly policies: number;
  /** Namespaces; policy j lives in namespace j mod namespaces. @default min(policies, 10) */
  readonly namespaces: number;
  /** Readiness probe period of every policy. @default 10000 */
  readonly periodMs: number;
  /** Steady-state window measured after every gate is True. @default 60 */
  readonly durationS: number;
  /** Seconds observed after the policy recreate (0 skips the phase). @default 45 */
  readonly recreateS: number;
  /** Readiness handler of every policy. @default 'http' */
  readonly probe: ProbeHandler;
  /** Give up waiting for all gates True after this many seconds. @default 900 */
  readonly convergeTimeoutS: number;
  /** Pods per kwok node (each node's podCIDR is a /24). @default 200 */
  readonly podsPerNode: number;
  /** Object creates in flight at once. @default 64 */
  readonly createConcurrency: number;
  /** Seconds between samples of the controller's metrics and /proc. @default 2 */
  readonly sampleS: number;
  /** Extra flags for the controller (space separated), e.g. `--kube-api-qps 200`. @default '' */
  readonly controllerArgs: readonly string[];
  /** Node flags for every replica (space separated), e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`. @default '' */
  readonly controllerNodeArgs: readonly string[];
  /**
   * Niceness of the pod server (`nice -n`). Negative by default: the pods'
   * side must answer at once, as pods on their own nodes would, or probes time
   * out on the pods' side (at 10 it starved under load and 417 of 200,534
   * attempts of a 10,000-pod run failed). Without CAP_SYS_NICE `nice` warns
   * and runs it at the benchmark's own niceness (`env.pod_server_nice`).
   * @default -10
   */
  readonly podServerNice: number;
  /** Keep the control plane's directory (logs) after the run. @default false */
  readonly keep: boolean;
  /**
   * Each replica in a memory cgroup with this limit (MiB), as a container
   * with `resources.limits.memory` runs it: Node sizes its heap from the
   * limit. Needs root. Unset: no cgroup. @default undefined
   */
  readonly replicaMemoryLimitMb: number | undefined;
  /**
   * Who brings the pods to Running with their addresses (issue 31 item 5):
   * `bench`, the driver itself, one status write per pod right after its
   * create (pod-status.ts; kwok is told to leave pods labelled
   * `bench.outprobe.io/status=bench` alone); or `kwok`, its two stages per
   * pod at kwok's own pace (about 18 pods/s on the 2-core machine).
   * @default 'bench'
   */
  readonly podStatus: PodStatusBy;
  /**
   * The write-ceiling phase (issue 31 item 4): once every pod is Running and
   * before the replicas start, a bare writer (`write-ceiling.ts`) writes every
   * pod's gate condition True with this many writes in flight and nothing
   * probing: the plane's own pace for the same writes. The driver then removes
   * the condition from every pod again, and the replicas converge on the same
   * pods; the run prints `convergence_over_ceiling`. 0 skips the phase.
   * @default 64 (a replica's `--gate-write-max-inflight`)
   */
  readonly writeCeiling: number;
  /** Stop after the write-ceiling phase: no replica runs (the `--write-ceiling` mode before issue 31). @default false */
  readonly ceilingOnly: boolean;
  /**
   * The engine-alone phase (issue 31 item 3): after the replicas are
   * stopped, outprobe's Scheduler and executor alone probe the same pods for
   * this many seconds (after one period to spread), and the run prints the
   * steady controller CPU per probe over the engine's. 0 skips it. @default `--duration-s`
   */
  readonly engineS: number;
  /** Seconds waited after every gate is True before the steady window (the convergence's queued Events drain). @default 0 */
  readonly settleS: number;
  /**
   * Percent of the pods made to fail (their HTTP readiness answers 503) in
   * the detection phase after the recreate; 0 skips it. @default 1
   */
  readonly failPercent: number;
  /** Seconds the detection phase waits for every failed pod's gate False (and again for True after healing). @default max(120, 6 periods) */
  readonly detectTimeoutS: number;
  /** `failureThreshold` of every policy's readiness probe (unset: the API default, 3). */
  readonly failureThreshold: number | undefined;
  /**
   * Urgency under load: during convergence, once the replicas' queued
   * first-time gate writes (`outprobe_gate_write_queue{urgency="initial"}`)
   * reach this many, `--fail-percent` of the pods whose gate is True fail,
   * and the time from each verdict to its False landing is measured while
   * the initial writes wait. 0: off. @default 0
   */
  readonly urgencyQueued: number;
  /**
   * `spec.vantage.count` of every policy (ADR 0058). Above 1 the replicas
   * report to each other over the peer channel: the bench gives them a peer
   * token (a ServiceAccount token of the peer audience) and a loopback
   * advertised address. @default 1
   */
  readonly vantageCount: number;
}

function raw(name: string, argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg.startsWith(`--${name}=`)) return arg.slice(name.length + 3);
    if (arg === `--${name}`) {
      const next = argv[i + 1];
      return next === undefined || (next.startsWith('--') && name !== 'controller-args' && name !== 'controller-node-args') ? 'true' : next;
    }
  }
  return process.env[`BENCH_${name.toUpperCase().replaceAll('-', '_')}`];
}

function int(name: string, fallback: number, argv: readonly string[], min = 0): number {
  const value = raw(name, argv);
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < min) throw new Error(`--${name} must be an integer ≥ ${min}, got ${JSON.stringify(value)}`);
  return parsed;
}

function bool(name: string, argv: readonly string[]): boolean {
  const value = raw(name, argv);
  return value !== undefined && !['0', 'false', 'no', 'off'].includes(value.toLowerCase());
}

const known = new Set(['pods', 'replicas', 'fail-percent', 'detect-timeout-s', 'failure-threshold', 'urgency-queued', 'policies', 'namespaces', 'period-ms', 'duration-s', 'recreate-s', 'probe', 'converge-timeout-s', 'pods-per-node', 'create-concurrency', 'sample-s', 'controller-args', 'controller-node-args', 'keep', 'pod-server-nice', 'replica-memory-limit-mb', 'write-ceiling', 'ceiling-only', 'pod-status', 'vantage-count', 'engine-s', 'settle-s']);

export function liveBenchOptions(argv: readonly string[]): LiveBenchOptions {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const name = /^--([a-z-]+)/.exec(arg)?.[1];
    if (name !== undefined && !known.has(name)) throw new Error(`unknown flag --${name}; known: ${[...known].map((k) => `--${k}`).join(' ')}`);
    if (arg === '--controller-args' || arg === '--controller-node-args') i++; // its value is the controller's flags
  }
  const probe = raw('probe', argv) ?? 'http';
  if (probe !== 'http' && probe !== 'tcp') throw new Error(`--probe must be http or tcp, got ${JSON.stringify(probe)}`);
  const policies = int('policies', 5, argv, 1);
  const pods = int('pods', 1000, argv, 1);
  const podsPerNode = int('pods-per-node', 200, argv, 1);
  if (podsPerNode > 250) throw new Error('--pods-per-node must be ≤ 250 (a node\'s podCIDR is a /24)');
  // Nodes past the first 250 get /24s of more loopback /16s (run.ts claims one per 250 nodes).
  if (Math.ceil(pods / podsPerNode) > 250 * 8) throw new Error(`--pods ${pods} needs more than 2,000 nodes at --pods-per-node ${podsPerNode}`);
  const periodMs = int('period-ms', 10_000, argv, 1000);
  if (periodMs % 1000 !== 0) throw new Error('--period-ms must be whole seconds (periodSeconds is an integer)');
  const failPercent = Number(raw('fail-percent', argv) ?? 1);
  if (!(failPercent >= 0 && failPercent <= 100)) throw new Error(`--fail-percent must be between 0 and 100, got ${String(failPercent)}`);
  const threshold = raw('failure-threshold', argv);
  const urgencyQueued = int('urgency-queued', 0, argv);
  if ((failPercent > 0 || urgencyQueued > 0) && probe !== 'http') throw new Error('--fail-percent and --urgency-queued need --probe http (a failing pod answers 503); use --fail-percent 0 with --probe tcp');
  if (urgencyQueued > 0 && failPercent === 0) throw new Error('--urgency-queued needs --fail-percent > 0');
  const podStatus = raw('pod-status', argv) ?? 'bench';
  if (podStatus !== 'bench' && podStatus !== 'kwok') throw new Error(`--pod-status must be bench or kwok, got ${JSON.stringify(podStatus)}`);
  const writeCeiling = int('write-ceiling', 64, argv);
  const ceilingOnly = bool('ceiling-only', argv);
  if (ceilingOnly && writeCeiling === 0) throw new Error('--ceiling-only needs --write-ceiling > 0');
  return {
    pods,
    replicas: int('replicas', 1, argv, 1),
    failPercent,
    detectTimeoutS: int('detect-timeout-s', Math.max(120, (6 * periodMs) / 1000), argv, 1),
    failureThreshold: threshold === undefined ? undefined : int('failure-threshold', 3, argv, 1),
    urgencyQueued,
    vantageCount: int('vantage-count', 1, argv, 1),
    policies,
    namespaces: Math.min(policies, int('namespaces', Math.min(policies, 10), argv, 1)),
    periodMs,
    durationS: int('duration-s', 60, argv, 1),
    recreateS: int('recreate-s', 45, argv),
    probe,
    convergeTimeoutS: int('converge-timeout-s', 900, argv, 1),
    podsPerNode,
    createConcurrency: int('create-concurrency', 64, argv, 1),
    sampleS: int('sample-s', 2, argv, 1),
    controllerArgs: (raw('controller-args', argv) ?? '').split(' ').filter((a) => a !== ''),
    controllerNodeArgs: (raw('controller-node-args', argv) ?? '').split(' ').filter((a) => a !== ''),
    podServerNice: int('pod-server-nice', -10, argv, -20),
    keep: bool('keep', argv),
    replicaMemoryLimitMb: raw('replica-memory-limit-mb', argv) === undefined ? undefined : int('replica-memory-limit-mb', 0, argv, 64),
    podStatus,
    writeCeiling,
    ceilingOnly,
    engineS: int('engine-s', int('duration-s', 60, argv, 1), argv),
    settleS: int('settle-s', 0, argv),
  };
}
