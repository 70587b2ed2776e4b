/**
 * The objects the benchmark creates: namespaces, pods (bound to a kwok node
 * directly, so the scheduler is not what is measured) and ProbePolicies.
 * Pod i belongs to policy i mod P; policy j lives in namespace j mod N.
 */
import type { LiveBenchOptions, PodStatusBy } from './options.ts';
import { statusLabel, statusLabelValue } from './pod-status.ts';

export const conditionType = 'outprobe.io/bench';
export const policyLabel = 'bench.outprobe.io/policy';
export const runLabel = 'bench.outprobe.io/run';

export function namespaceName(run: string, n: number): string {
  return `bench-${run}-${n}`;
}

export function policyName(j: number): string {
  return `pol-${j}`;
}

export function policyNamespace(o: Pick<LiveBenchOptions, 'namespaces'>, run: string, j: number): string {
  return namespaceName(run, j % o.namespaces);
}

export interface PodRef {
  readonly namespace: string;
  readonly name: string;
  readonly policy: number;
}

export function podRef(o: Pick<LiveBenchOptions, 'namespaces' | 'policies'>, run: string, i: number): PodRef {
  const policy = i % o.policies;
  return { namespace: policyNamespace(o, run, policy), name: `pod-${i}`, policy };
}

export function namespaceObject(run: string, n: number): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespaceName(run, n), labels: { [runLabel]: run } } };
}

/** Pod i; with `podStatus: 'bench'` labelled for kwok to leave its status to the driver (pod-status.ts). */
export function podObject(o: Pick<LiveBenchOptions, 'namespaces' | 'policies' | 'podsPerNode'> & { readonly podStatus?: PodStatusBy }, run: string, i: number, port: number): Record<string, unknown> {
  const ref = podRef(o, run, i);
  const labels = { [runLabel]: run, [policyLabel]: policyName(ref.policy), ...(o.podStatus === 'bench' ? { [statusLabel]: statusLabelValue } : {}) };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: ref.name, namespace: ref.namespace, labels },
    spec: {
      nodeName: `kwok-node-${Math.floor(i / o.podsPerNode)}`,
      readinessGates: [{ conditionType }],
      containers: [{ name: 'app', image: 'bench', ports: [{ name: 'http', containerPort: port }] }],
      terminationGracePeriodSeconds: 0,
    },
  };
}

export function policyObject(o: Pick<LiveBenchOptions, 'namespaces' | 'periodMs' | 'probe' | 'failureThreshold'> & { readonly vantageCount?: number }, run: string, j: number): Record<string, unknown> {
  const handler = o.probe === 'http' ? { httpGet: { path: '/healthz', port: 'http' } } : { tcpSocket: { port: 'http' } };
  return {
    apiVersion: 'outprobe.io/v1alpha1',
    kind: 'ProbePolicy',
    metadata: { name: policyName(j), namespace: policyNamespace(o, run, j) },
    spec: {
      selector: { matchLabels: { [policyLabel]: policyName(j) } },
      mode: 'Enforce',
      readiness: { conditionType, probe: { ...handler, periodSeconds: o.periodMs / 1000, ...(o.failureThreshold === undefined ? {} : { failureThreshold: o.failureThreshold }) } },
      ...((o.vantageCount ?? 1) > 1 ? { vantage: { count: o.vantageCount } } : {}),
    },
  };
}
