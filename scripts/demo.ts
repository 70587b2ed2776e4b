// `npm run demo`: outprobe on a local control plane, end to end.
//
// Brings up the full local control plane (etcd, kube-apiserver, KCM, scheduler,
// kwok with fake nodes whose pods get 127.x IPs), installs the CRD, starts a
// Deployment whose pods carry the readiness gate and serve real endpoints,
// applies a ProbePolicy, runs the controller as its own process, then flips
// pods unhealthy and back while printing what a user would look at. Ctrl-C
// ends it cleanly. `--exit-after-scenario` ends after the scripted scenario
// (used by the e2e test of the demo).
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { startControlPlane } from '../test/support/cluster/index.ts';
import type { ControlPlane } from '../test/support/cluster/index.ts';
import { startWorkloads } from '../test/support/workloads/index.ts';
import type { Workloads } from '../test/support/workloads/index.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const NS = 'shop';
const exitAfterScenario = process.argv.includes('--exit-after-scenario');
const say = (m: string): void => {
  process.stdout.write(`\n\x1b[1m== ${m}\x1b[0m\n`);
};

function kubectl(cp: ControlPlane, args: readonly string[]): string {
  try {
    return execFileSync(cp.binaries.kubectl, ['--kubeconfig', cp.kubeconfigPath, ...args], { encoding: 'utf8' });
  } catch (err: unknown) {
    return `kubectl ${args.join(' ')}: ${err instanceof Error ? err.message : String(err)}\n`;
  }
}

function show(cp: ControlPlane): void {
  process.stdout.write(`$ kubectl get probepolicies -n ${NS} -o wide\n${kubectl(cp, ['get', 'probepolicies', '-n', NS, '-o', 'wide'])}`);
  process.stdout.write(`$ kubectl get pods -n ${NS} -o wide\n${kubectl(cp, ['get', 'pods', '-n', NS, '-o', 'wide'])}`);
  const events = kubectl(cp, ['get', 'events', '-n', NS, '--sort-by=.lastTimestamp', '-o', 'custom-columns=LAST:.lastTimestamp,TYPE:.type,REASON:.reason,OBJECT:.involvedObject.name,COUNT:.count,MESSAGE:.message']);
  const lines = events.trimEnd().split('\n');
  process.stdout.write(`$ kubectl get events -n ${NS} --sort-by=.lastTimestamp (last 8)\n${[lines[0], ...lines.slice(1).slice(-8)].join('\n')}\n`);
}

const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: NS },
  spec: {
    replicas: 3,
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: {
        terminationGracePeriodSeconds: 2,
        readinessGates: [{ conditionType: 'outprobe.io/web' }],
        containers: [{ name: 'web', image: 'example.invalid/web:1', ports: [{ name: 'http', containerPort: 8080 }] }],
      },
    },
  },
};

async function podNames(cp: ControlPlane): Promise<string[]> {
  const list = await cp.kube.get(`/api/v1/namespaces/${NS}/pods?labelSelector=app%3Dweb`);
  return (list['items'] as { metadata: { name: string; deletionTimestamp?: string } }[]).filter((p) => p.metadata.deletionTimestamp === undefined).map((p) => p.metadata.name).sort();
}

async function gatesTrue(cp: ControlPlane): Promise<number> {
  const list = await cp.kube.get(`/api/v1/namespaces/${NS}/pods?labelSelector=app%3Dweb`);
  return (list['items'] as { status?: { conditions?: { type: string; status: string }[] } }[]).filter((p) => p.status?.conditions?.some((c) => c.type === 'outprobe.io/web' && c.status === 'True') === true).length;
}

async function watchFor(cp: ControlPlane, seconds: number, everyS = 5): Promise<void> {
  for (let t = 0; t < seconds; t += everyS) {
    await sleep(everyS * 1000);
    show(cp);
  }
}

async function scenario(cp: ControlPlane, workloads: Workloads): Promise<void> {
  say('Waiting for the 3 pods to be served and gated Ready by outprobe');
  await workloads.waitServing(3, 90_000);
  for (let i = 0; i < 60 && (await gatesTrue(cp)) < 3; i++) await sleep(1000);
  show(cp);
  const [first, second] = await podNames(cp);
  if (first === undefined || second === undefined) throw new Error('expected 3 pods');
  say(`Pod ${first} turns unhealthy for 12 s: its readiness gate goes False after 2 failures (period 2 s), then True again`);
  await workloads.setHealthy(first, false);
  await watchFor(cp, 12, 6);
  await workloads.setHealthy(first, true);
  await watchFor(cp, 8, 4);
  say(`Pod ${second} turns unhealthy and stays so: liveness fails 4 times (period 5 s), outprobe evicts it and the Deployment replaces it`);
  await workloads.setHealthy(second, false);
  for (let t = 0; t < 60; t += 6) {
    await sleep(6000);
    show(cp);
    if (!(await podNames(cp)).includes(second)) break;
  }
  say('Scenario done: the evicted pod was replaced and the new one is gated Ready');
  await watchFor(cp, 10, 5);
}

async function main(): Promise<void> {
  say('Starting the local control plane (builds Kubernetes from Go modules on the first run: many minutes)');
  const cp = await startControlPlane({ full: true, log: (m) => process.stdout.write(`   ${m}\n`) });
  let controller: ChildProcess | undefined;
  let workloads: Workloads | undefined;
  let stopping = false;
  const stop = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    say('Stopping: controller, simulated pods, control plane');
    controller?.kill('SIGTERM');
    await workloads?.stop();
    await cp.stop();
  };
  process.once('SIGINT', () => {
    void stop().then(() => process.exit(0));
  });
  process.once('SIGTERM', () => {
    void stop().then(() => process.exit(0));
  });
  try {
    say('Installing the ProbePolicy CRD and a Deployment whose pods carry the readiness gate outprobe.io/web');
    const crd = parse(readFileSync(path.join(root, 'crds/outprobe.io_probepolicies.yaml'), 'utf8')) as unknown;
    await cp.kube.must('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd, [409]);
    await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    for (let i = 0; i < 50 && (await cp.kube.call('GET', `/apis/outprobe.io/v1alpha1/namespaces/${NS}/probepolicies`)).status !== 200; i++) await sleep(200);
    await cp.kube.create(`/apis/apps/v1/namespaces/${NS}/deployments`, deployment);
    workloads = startWorkloads({ kube: cp.kube, namespace: NS, labelSelector: 'app=web' });
    const policyFile = path.join(root, 'scripts/demo-policy.yaml');
    say(`Applying ${path.relative(root, policyFile)}`);
    process.stdout.write(readFileSync(policyFile, 'utf8'));
    process.stdout.write(kubectl(cp, ['apply', '-f', policyFile]));
    const log = path.join(cp.dir, 'logs', 'outprobe.log');
    say(`Running the controller: node src/main.ts (JSON logs in ${log})`);
    controller = spawn(process.execPath, [path.join(root, 'src/main.ts'), '--kubeconfig', cp.kubeconfigPath, '--namespace', NS, '--allowed-probe-cidrs', '127.0.0.0/8', '--metrics-addr', '127.0.0.1:0', '--identity', 'demo'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const out = createWriteStream(log);
    controller.stdout?.pipe(out);
    controller.stderr?.pipe(out);
    await scenario(cp, workloads);
    if (exitAfterScenario) {
      await stop();
      return;
    }
    say('Watching every 10 s; press Ctrl-C to stop');
    for (;;) await watchFor(cp, 10, 10);
  } catch (err: unknown) {
    process.stderr.write(`demo failed: ${err instanceof Error ? err.message : String(err)}\n`);
    await stop();
    process.exitCode = 1;
  }
}

await main();
