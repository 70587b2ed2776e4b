/**
 * `bench:scale --write-ceiling`: how fast this plane takes gate writes when
 * nothing probes. Run by the driver in a process of its own, in place of the
 * replicas, once every pod is Running:
 *
 *   node write-ceiling.ts <kubeconfig> <label selector> <in flight>
 *
 * It lists the pods, then writes each pod's gate condition True exactly as a
 * replica does (the condition from `gateConditionFor`, sent by
 * `patchGateCondition`: a strategic-merge patch of pods/status carrying
 * `metadata.uid` and the one condition, on outprobe's own client),
 * `in flight` at a time, and prints one JSON line: the writes, their seconds,
 * and its own CPU. No probe, no Event, no watch of its own: what is left is
 * the API server's, etcd's and the other watchers' share of a gate write.
 */
import { gateConditionFor } from '../../src/controller/index.ts';
import { KubeClient, loadConnection } from '../../src/kube/index.ts';
import { systemClock, systemRandom } from '../../src/kernel/index.ts';
import { patchGateCondition } from '../../src/writeback/index.ts';
import type { PodRef } from '../../src/writeback/index.ts';
import { conditionType } from './fixtures.ts';

interface Listed {
  readonly items?: readonly { readonly metadata?: { readonly name?: string; readonly namespace?: string; readonly uid?: string } }[];
  readonly metadata?: { readonly continue?: string };
}

async function main(): Promise<void> {
  const [kubeconfig, selector, inflightArg] = process.argv.slice(2);
  const inflight = Number(inflightArg);
  if (kubeconfig === undefined || selector === undefined || !Number.isInteger(inflight) || inflight < 1) {
    throw new Error('usage: write-ceiling.ts <kubeconfig> <label selector> <in flight>');
  }
  const client = new KubeClient({ connection: loadConnection({ kubeconfig }), clock: systemClock, random: systemRandom, qps: 1_000_000, burst: 1_000_000, userAgent: 'outprobe-bench/write-ceiling' });
  const pods: PodRef[] = [];
  let cont = '';
  do {
    const page = await client.request<Listed>({ method: 'GET', path: '/api/v1/pods', query: { labelSelector: selector, limit: 2000, continue: cont === '' ? undefined : cont } });
    for (const p of page.items ?? []) {
      const m = p.metadata;
      if (m?.name !== undefined && m.namespace !== undefined && m.uid !== undefined) pods.push({ namespace: m.namespace, name: m.name, uid: m.uid });
    }
    cont = page.metadata?.continue ?? '';
  } while (cont !== '');
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  let next = 0;
  let gone = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < pods.length; i = next++) {
      const pod = pods[i]!;
      // The condition a replica writes when the pod's first probe succeeds (container `app`, fixtures.ts).
      const condition = gateConditionFor(conditionType, 'app', {
        key: { podUid: pod.uid, container: 'app', kind: 'readiness', policy: '' }, kind: 'readiness',
        from: null, to: 'success', cause: 'probe', output: '', at: Date.now(), instance: null,
      });
      if (condition === null) throw new Error('a success has a gate condition');
      const r = await patchGateCondition(client, pod, condition);
      if (r === 'gone') gone++;
    }
  };
  await Promise.all(Array.from({ length: Math.min(inflight, pods.length) }, worker));
  const seconds = (performance.now() - start) / 1000;
  const cpu = process.cpuUsage(cpu0);
  await client.close();
  process.stdout.write(`${JSON.stringify({ writes: pods.length - gone, gone, inflight, seconds: Math.round(seconds * 1000) / 1000, writes_per_s: Math.round(((pods.length - gone) / seconds) * 10) / 10, writer_cpu_s: Math.round((cpu.user + cpu.system) / 1e4) / 100 })}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exitCode = 1;
});
