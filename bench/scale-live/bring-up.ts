/**
 * Bringing the benchmark's pods to Running with their addresses (issue 31
 * item 5). `--pod-status kwok`: the driver creates the pods and kwok's stages
 * run them, two status writes a pod at kwok's pace (about 18 pods/s on the
 * 2-core machine: 10,000 pods took about 9 minutes, 100,000 an hour).
 * `--pod-status bench`: the driver creates each pod and at once writes its
 * Running status itself (pod-status.ts) through the status subresource, the
 * two requests of one pod back to back and `--create-concurrency` pods in
 * flight; kwok, configured to disregard the pods' label, never touches them.
 */
import type { KubeClient } from '../../test/support/cluster/index.ts';
import { podObject, podRef } from './fixtures.ts';
import { callWithRetry, createWithRetry, forEachBounded } from './objects.ts';
import type { LiveBenchOptions } from './options.ts';
import { podIpOf, runningStatus } from './pod-status.ts';
import type { CreatedPod } from './pod-status.ts';

export interface BroughtUp {
  /** Seconds until every create (and, in bench mode, every status write) was answered. */
  readonly seconds: number;
  /** Status writes the driver sent (0 in kwok mode). */
  readonly statusWrites: number;
}

/** Creates pods 0 … N-1 (and in bench mode writes each one's Running status); `prefixes` are the pod networks' `127.X.`. */
export async function bringUpPods(kube: KubeClient, o: LiveBenchOptions, run: string, port: number, prefixes: readonly string[]): Promise<BroughtUp> {
  const start = Date.now();
  let statusWrites = 0;
  await forEachBounded(o.pods, o.createConcurrency, async (i) => {
    const ns = podRef(o, run, i).namespace;
    const created = await createWithRetry(kube, `/api/v1/namespaces/${ns}/pods`, podObject(o, run, i, port));
    if (o.podStatus !== 'bench') return;
    const name = podRef(o, run, i).name;
    // After a retried create answered 409, the pod is there but its UID is not in hand.
    const pod = (created ?? (await kube.get(`/api/v1/namespaces/${ns}/pods/${name}`))) as unknown as CreatedPod;
    const path = `/api/v1/namespaces/${ns}/pods/${name}/status`;
    const r = await callWithRetry(kube, 'PATCH', path, { status: runningStatus(pod, podIpOf(o, prefixes, i), new Date()) }, 'application/merge-patch+json');
    if (r.status !== 200) throw new Error(`PATCH ${path}: HTTP ${r.status}: ${JSON.stringify(r.body)}`);
    statusWrites++;
  });
  return { seconds: (Date.now() - start) / 1000, statusWrites };
}
