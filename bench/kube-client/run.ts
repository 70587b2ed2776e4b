/**
 * Issue 14, deliverable 3: outprobe's reflector and rate-limited transport
 * against client-node's makeInformer and API classes on the same work, side by
 * side in one run on one control plane:
 *  - decode and hold N pods (default 10,000) from a LIST;
 *  - then a burst of B watch events (default 1,000 pods patched) on the
 *    established watch (1 s after the LIST, so neither side's watch
 *    connection set-up is counted in the burst).
 * Each side runs in a process of its own (child.ts) so CPU-seconds and heap
 * are its own. Pods are plain pods bound to a node no kubelet runs.
 *   npm run bench:kube-client [-- --pods 10000 --burst 1000 --rounds 1]
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createInterface } from 'node:readline';
import { startControlPlane } from '../../test/support/cluster/index.ts';
import type { ControlPlane } from '../../test/support/cluster/index.ts';
import { fakePodManifest } from '../../test/integration/support/fake-kubelet.ts';
import { createWithRetry, forEachBounded } from '../scale-live/objects.ts';

const { values } = parseArgs({ options: { pods: { type: 'string', default: '10000' }, burst: { type: 'string', default: '1000' }, rounds: { type: 'string', default: '1' } } });
const pods = Number(values.pods);
const burst = Number(values.burst);
const rounds = Number(values.rounds);
const NS = 'bench';
const child = fileURLToPath(new URL('./child.ts', import.meta.url));
const log = (m: string): void => {
  process.stderr.write(`[kube-client] ${m}\n`);
};

interface Figures {
  readonly phase: string;
  readonly side: string;
  readonly cpuS: number;
  readonly heapMiB: number;
  readonly ms: number;
  readonly objects?: number;
  readonly events?: number;
}

/** A realistic pod: labels, a probe, env, resources, a readiness gate. */
function pod(i: number): Record<string, unknown> {
  const base = fakePodManifest(NS, `web-${i}`, {
    labels: { app: 'web', 'app.kubernetes.io/name': 'web', 'pod-template-hash': '5d9c7b8f6c', shard: String(i % 16) },
    gate: 'outprobe.io/web',
    container: {
      readinessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 5 },
      env: [{ name: 'MODE', value: 'production' }, { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
      resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '256Mi' } },
    },
  }, 'bench-node');
  return base;
}

async function side(cp: ControlPlane, name: string, round: number): Promise<Figures[]> {
  const c = spawn(process.execPath, ['--expose-gc', ...(process.env['BENCH_NODE_ARGS'] ?? '').split(' ').filter((a) => a !== ''), child, name, cp.kubeconfigPath, NS, String(burst)], { stdio: ['pipe', 'pipe', 'inherit'] });
  children.add(c);
  c.once('exit', () => children.delete(c));
  const out: Figures[] = [];
  const lines = createInterface({ input: c.stdout });
  const exited = new Promise<number | null>((resolve) => c.once('exit', resolve));
  for await (const line of lines) {
    const f = JSON.parse(line) as Figures;
    if (f.phase !== 'watching') {
      out.push(f);
      log(`round ${round} ${name} ${f.phase}: ${f.cpuS.toFixed(2)} CPU-s, ${f.heapMiB.toFixed(1)} MiB heap, ${f.ms} ms (${f.objects ?? f.events ?? ''})`);
    } else {
      // The burst: B pods patched (a label), bounded concurrency; each is one MODIFIED watch event.
      await forEachBounded(burst, 32, async (i) => {
        const r = await cp.kube.call('PATCH', `/api/v1/namespaces/${NS}/pods/web-${i}`, { metadata: { labels: { burst: `${round}-${name}-${i}` } } }, 'application/merge-patch+json');
        if (r.status !== 200) throw new Error(`patch web-${i}: HTTP ${r.status}`);
      });
    }
    if (f.phase === 'burst') break;
  }
  const code = await exited;
  if (code !== 0 || out.length !== 2) throw new Error(`${name}: exit ${String(code)} after ${out.length} reports`);
  return out;
}

const children = new Set<ChildProcess>();
const cp = await startControlPlane({ log });
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(sig, () => {
    for (const c of children) c.kill('SIGKILL');
    void cp.stop().finally(() => process.exit(1));
  });
}
try {
  await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  const t0 = performance.now();
  await forEachBounded(pods, 48, (i) => createWithRetry(cp.kube, `/api/v1/namespaces/${NS}/pods`, pod(i)));
  log(`${pods} pods created in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  const all: Figures[] = [];
  for (let round = 1; round <= rounds; round++) {
    // Alternate the order, so neither side always meets a warmer API server.
    const order = round % 2 === 1 ? ['ours', 'ours-raw', 'client-node'] : ['client-node', 'ours-raw', 'ours'];
    for (const name of order) all.push(...(await side(cp, name, round)));
  }
  const row = (s: string, phase: string): string => {
    const f = all.filter((x) => x.side === s && x.phase === phase);
    const avg = (k: 'cpuS' | 'heapMiB' | 'ms'): number => f.reduce((a, x) => a + x[k], 0) / f.length;
    return `| ${s} | ${phase === 'listed' ? `LIST of ${pods} pods, held` : `${burst} watch events`} | ${avg('cpuS').toFixed(2)} | ${avg('heapMiB').toFixed(1)} | ${(avg('ms') / 1000).toFixed(1)} |`;
  };
  process.stdout.write(`\n| side | work | CPU-s | retained heap MiB | wall s |\n|---|---|---|---|---|\n`);
  for (const phase of ['listed', 'burst']) for (const s of ['ours', 'ours-raw', 'client-node']) process.stdout.write(`${row(s, phase)}\n`);
  process.stdout.write(`\n(${rounds} round(s), averages; heap after the burst is against the same pre-LIST baseline)\n`);
} finally {
  for (const c of children) c.kill('SIGKILL');
  await cp.stop();
}
