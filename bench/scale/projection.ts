// `node bench/scale/projection.ts [SRC_ROOT] [--pods 20000] [--rounds 3]`: CPU of the pod
// projection per watch event (issue 17): N realistic pods (two containers with 12 literal env
// vars each, five labels, four conditions, a 200-character annotation), each projected once
// as new and once more given its previous projection (what the reflector does for a MODIFIED
// event). SRC_ROOT (default this checkout) is the root of the tree whose src/kube is loaded,
// so two trees can be compared with one script. JSON parsing is outside the timed part.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { pods: { type: 'string', default: '20000' }, rounds: { type: 'string', default: '3' } } });
const root = resolve(positionals[0] ?? new URL('../..', import.meta.url).pathname);
type Project = (raw: unknown, previous?: unknown) => unknown;
const { projectPod } = (await import(pathToFileURL(`${root}/src/kube/index.ts`).href)) as { projectPod: Project };
const n = Number(values.pods);

const pod = (i: number): unknown => ({
  metadata: {
    name: `web-7d9f8c6b5-${i}`, namespace: 'shop', uid: `1b4e28ba-2fa1-11d2-883f-${String(i).padStart(12, '0')}`, resourceVersion: String(i),
    labels: { app: 'web', 'pod-template-hash': '7d9f8c6b5', tier: 'front', team: 'checkout', version: 'v1.2.3' }, annotations: { note: 'x'.repeat(200) },
  },
  spec: {
    nodeName: `node-${i % 50}`, restartPolicy: 'Always', terminationGracePeriodSeconds: 30, readinessGates: [{ conditionType: 'outprobe.io/web' }],
    containers: [0, 1].map((c) => ({
      name: `c${c}`, image: 'registry.example/web:1.2.3', ports: [{ name: 'http', containerPort: 8080 + c }],
      env: Array.from({ length: 12 }, (_, k) => ({ name: `ENV_${k}`, value: `value-${k}` })),
      readinessProbe: { httpGet: { path: '/healthz', port: 8080 + c }, periodSeconds: 10 },
    })),
  },
  status: {
    phase: 'Running', podIP: `10.1.${(i >> 8) & 255}.${i & 255}`,
    conditions: ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({ type, status: 'True', lastTransitionTime: '2026-11-27T10:00:00Z' })),
    containerStatuses: [0, 1].map((c) => ({ name: `c${c}`, containerID: `containerd://${i}-${c}`, restartCount: 0, started: true, ready: true, state: { running: { startedAt: '2026-11-27T10:00:00Z' } } })),
  },
});
const texts = Array.from({ length: n }, (_, i) => JSON.stringify(pod(i)));
const us = (t: NodeJS.CpuUsage): number => Math.round(((t.user + t.system) / n) * 100) / 100;
const rounds = [];
for (let r = 0; r < Number(values.rounds); r++) {
  const fresh = texts.map((t) => JSON.parse(t) as unknown);
  const again = texts.map((t) => JSON.parse(t) as unknown);
  let t = process.cpuUsage();
  const first = fresh.map((o) => projectPod(o));
  const firstUs = us(process.cpuUsage(t));
  t = process.cpuUsage();
  again.forEach((o, i) => projectPod(o, first[i]));
  rounds.push({ firstUsPerPod: firstUs, withPreviousUsPerPod: us(process.cpuUsage(t)) });
}
process.stdout.write(`${JSON.stringify({ bench: 'projection', root, pods: n, rounds })}\n`);
