import type { KubeClient } from '../kube/index.ts';
import { isKubeError } from '../kube/index.ts';
import type { GateCondition, GatePatchResult, PodRef } from './gate-writer.ts';

/**
 * The API calls of the write-back stage, each with the safety the design
 * requires: gate patches carry `metadata.uid` (never land on a recreated pod
 * of the same name) and only the one condition; evictions and deletes carry
 * `preconditions: {uid, resourceVersion}`.
 */

const podPath = (pod: PodRef): string => `/api/v1/namespaces/${encodeURIComponent(pod.namespace)}/pods/${encodeURIComponent(pod.name)}`;

/** Strategic-merge patch of one condition on pods/status (merges by `type`). */
/**
 * `throttled: 'throw'` hands a 429/503 to the caller at once (the gate-write
 * queue, ADR 0022); other retryable errors are still retried here.
 */
export async function patchGateCondition(client: KubeClient, pod: PodRef, condition: GateCondition, throttled: 'retry' | 'throw' = 'retry'): Promise<GatePatchResult> {
  try {
    const updated = await client.request<{ metadata?: { resourceVersion?: string } }>({
      method: 'PATCH',
      path: `${podPath(pod)}/status`,
      patch: 'strategic',
      body: { metadata: { uid: pod.uid }, status: { conditions: [condition] } },
      retry: true,
      retryThrottled: throttled === 'retry',
    });
    return { resourceVersion: updated.metadata?.resourceVersion ?? '' };
  } catch (err: unknown) {
    if (isKubeError(err, 'NotFound') || uidRefused(err)) return 'gone';
    throw err;
  }
}

/**
 * The name now belongs to another pod. Measured against kube-apiserver
 * v1.37.2 (test/integration/gate-uid.test.ts): a patch whose metadata.uid is
 * not the pod's is a 422 Invalid with the cause `metadata.uid: field is
 * immutable`, not a 409; no retry can ever succeed. A 409 is kept for a
 * server that checks the uid as a precondition instead.
 */
function uidRefused(err: unknown): boolean {
  if (isKubeError(err, 'Conflict')) return true;
  return isKubeError(err, 'Invalid') && err.causes.some((c) => c.field === 'metadata.uid');
}

export interface DisruptionTarget extends PodRef {
  readonly resourceVersion: string;
}

export type DisruptionResult = 'done' | 'not_found' | 'conflict' | 'pdb_blocked';

export interface DisruptionOptions {
  readonly gracePeriodSeconds: number;
  /** Returned by a PDB refusal (429), when the server says when to retry. */
  readonly onRetryAfter?: (ms: number) => void;
}

/** POST pods/eviction (honours PodDisruptionBudgets) with uid+resourceVersion preconditions. */
export async function evictPod(client: KubeClient, pod: DisruptionTarget, options: DisruptionOptions): Promise<DisruptionResult> {
  return disruption(options, () =>
    client.request({
      method: 'POST',
      path: `${podPath(pod)}/eviction`,
      body: {
        apiVersion: 'policy/v1',
        kind: 'Eviction',
        metadata: { name: pod.name, namespace: pod.namespace },
        deleteOptions: { gracePeriodSeconds: options.gracePeriodSeconds, preconditions: { uid: pod.uid, resourceVersion: pod.resourceVersion } },
      },
      retry: false,
    }),
  );
}

/** DELETE the pod with uid+resourceVersion preconditions. */
export async function deletePod(client: KubeClient, pod: DisruptionTarget, options: DisruptionOptions): Promise<DisruptionResult> {
  return disruption(options, () =>
    client.request({
      method: 'DELETE',
      path: podPath(pod),
      body: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: options.gracePeriodSeconds, preconditions: { uid: pod.uid, resourceVersion: pod.resourceVersion } },
      retry: false,
    }),
  );
}

async function disruption(options: DisruptionOptions, call: () => Promise<unknown>): Promise<DisruptionResult> {
  try {
    await call();
    return 'done';
  } catch (err: unknown) {
    if (isKubeError(err, 'NotFound')) return 'not_found';
    if (isKubeError(err, 'Conflict')) return 'conflict';
    if (isKubeError(err, 'TooManyRequests')) {
      if (err.retryAfterMs !== undefined) options.onRetryAfter?.(err.retryAfterMs);
      return 'pdb_blocked';
    }
    throw err;
  }
}
