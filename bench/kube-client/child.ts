/**
 * One measured side of bench/kube-client: lists and watches the pods of a
 * namespace with outprobe's reflector (`ours`: held as outprobe's Pod projection;
 * `ours-raw`: held as the JSON, as the informer does) or client-node's
 * makeInformer (`client-node`), and reports on stdout, as JSON lines:
 *   {"phase":"listed", cpuS, heapMiB, objects, ms}   once the LIST is held
 *   {"phase":"watching"}                             1 s later: send the burst now
 *   {"phase":"burst", cpuS, heapMiB, events, ms}      once `burst` watch events arrived
 * CPU is this process's user + system time; heap is heapUsed after a full GC
 * minus the same before the LIST (libraries already loaded).
 *   usage: node --expose-gc child.ts <ours|ours-raw|client-node> <kubeconfig> <namespace> <burst>
 */
import { CoreV1Api, KubeConfig, makeInformer } from '@kubernetes/client-node';
import type { V1Pod } from '@kubernetes/client-node';
import { systemClock, systemRandom } from '../../src/kernel/index.ts';
import { KubeClient, Reflector, fromKubeconfig, projectPod } from '../../src/kube/index.ts';
import type { Pod, PodJson } from '../../src/kube/index.ts';

const [side = 'ours', kubeconfig = '', namespace = 'default', burstArg = '1000'] = process.argv.slice(2);
const burst = Number(burstArg);
const gc = (globalThis as { gc?: () => void }).gc ?? ((): void => {
  throw new Error('run with --expose-gc');
});
const heap = (): number => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};
const report = (o: Record<string, unknown>): void => {
  process.stdout.write(`${JSON.stringify(o)}\n`);
};

interface Meter {
  cpu: NodeJS.CpuUsage;
  heap0: number;
  at: number;
}
const start = (heap0: number): Meter => ({ cpu: process.cpuUsage(), heap0, at: performance.now() });
const figures = (m: Meter): { cpuS: number; heapMiB: number; ms: number } => {
  const c = process.cpuUsage(m.cpu);
  const ms = Math.round(performance.now() - m.at);
  return { cpuS: (c.user + c.system) / 1e6, heapMiB: (heap() - m.heap0) / 2 ** 20, ms };
};

let events = 0;
let burstMeter: Meter | undefined;
let held: { size: () => number } | undefined;
const onEvent = (): void => {
  if (burstMeter === undefined) return;
  events++;
  if (events === burst) {
    report({ phase: 'burst', side, events, objects: held?.size(), ...figures(burstMeter) });
    process.exit(0);
  }
};
const listed = (m: Meter, objects: number, base: number): void => {
  report({ phase: 'listed', side, objects, ...figures(m) });
  // The burst is measured on an established watch: both sides open their watch connection after the LIST (the
  // informer before start() resolves, the reflector just after onSynced), so 1 s is left for that first. CPU from
  // then on; heap against the baseline before the LIST.
  setTimeout(() => {
    burstMeter = { cpu: process.cpuUsage(), heap0: base, at: performance.now() };
    report({ phase: 'watching', side });
  }, 1000);
};

/** `raw`: hold the JSON as it came (what the informer holds) instead of outprobe's Pod projection. */
async function ours(raw: boolean): Promise<void> {
  const client = new KubeClient({ connection: fromKubeconfig(kubeconfig), clock: systemClock, random: systemRandom, qps: 1000, burst: 1000 });
  const base = heap();
  const m = start(base);
  let synced = false;
  const reflector = new Reflector<Pod | PodJson, PodJson>({
    client, clock: systemClock, random: systemRandom,
    path: `/api/v1/namespaces/${namespace}/pods`,
    project: raw ? (p) => p : (p, previous) => projectPod(p, previous as Pod | undefined),
    // The reflector holds the projected pods in its own store.
    onEvent: () => {
      if (synced) onEvent();
    },
    onSynced: () => {
      if (synced) return;
      synced = true;
      listed(m, reflector.store.size, base);
    },
  });
  held = { size: () => reflector.store.size };
  await reflector.run(new AbortController().signal);
}

async function clientNode(): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const api = kc.makeApiClient(CoreV1Api);
  const base = heap();
  const m = start(base);
  const informer = makeInformer<V1Pod>(kc, `/api/v1/namespaces/${namespace}/pods`, () => api.listNamespacedPod({ namespace }));
  held = { size: () => informer.list().length };
  informer.on('update', onEvent);
  informer.on('add', onEvent);
  informer.on('error', (err: unknown) => {
    process.stderr.write(`informer error: ${String(err)}\n`);
  });
  await informer.start();
  listed(m, informer.list().length, base);
}

// Bounded, and never outliving the parent: exit when its end of stdin closes, fail after 5 minutes.
process.stdin.resume();
process.stdin.on('close', () => process.exit(0));
setTimeout(() => {
  process.stderr.write(`${side}: no result after 5 minutes (${events} of ${burst} burst events)\n`);
  process.exit(1);
}, 300_000).unref();
await (side === 'client-node' ? clientNode() : ours(side === 'ours-raw'));
