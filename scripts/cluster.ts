// `npm run cluster:up [-- --full] [-- --port N] [-- --real-nodes N]`, `npm run cluster:down`,
// `npm run cluster:status`: one long-lived local control plane whose state lives in
// ${OUTPROBE_CLUSTER_DIR:-/tmp/outprobe-cluster} (PIDs, logs, PKI, kubeconfig).
// A full plane gets 2 real nodes (a real kubelet with containerd and runc each,
// docs/adr/0047-real-nodes.md) where the host can run them, and says why not where it
// cannot; --real-nodes 0 leaves them out.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isAlive, startControlPlane } from '../test/support/cluster/index.ts';
import { stopPids } from '../test/support/cluster/proc.ts';
import { podNetSupport, sweepStale } from '../test/support/podnet/index.ts';
import { realNodeSupport } from '../test/support/realnode/index.ts';

const DIR = process.env['OUTPROBE_CLUSTER_DIR'] ?? '/tmp/outprobe-cluster';
const say = (m: string): void => { process.stderr.write(`cluster: ${m}\n`); };

interface Recorded { readonly name: string; readonly pid: number; readonly logFile: string }

function recorded(): Recorded[] {
  const file = path.join(DIR, 'pids.json');
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) as Recorded[] : [];
}

function starterPid(): number | undefined {
  const file = path.join(DIR, 'up.pid');
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, 'utf8'));
  return pid !== process.pid && isAlive(pid) ? pid : undefined;
}

/** Refuses when a control plane runs (or is starting) in DIR; clears stale state. */
function claimDir(): boolean {
  if (existsSync(DIR)) {
    const starting = starterPid();
    const alive = recorded().filter((r) => isAlive(r.pid));
    if (starting !== undefined || alive.length > 0) {
      say(`a control plane is already running in ${DIR}` +
        (starting === undefined ? '' : ` (cluster:up pid ${starting} is still starting it)`) +
        (alive.length > 0 ? ` — ${alive.map((r) => `${r.name} pid ${r.pid}`).join(', ')}` : ''));
      say(`kubeconfig: ${path.join(DIR, 'kubeconfig')}; stop it with: npm run cluster:down`);
      return false;
    }
    say(`removing stale state in ${DIR} (left by an earlier run; none of its processes is alive)`);
    rmSync(DIR, { recursive: true, force: true });
  }
  mkdirSync(DIR, { recursive: true });
  writeFileSync(path.join(DIR, 'up.pid'), String(process.pid));
  return true;
}

function numberArg(args: readonly string[], flag: string): number | undefined {
  const i = args.indexOf(flag);
  return i >= 0 ? Number(args[i + 1]) : undefined;
}

/** Real nodes for a full plane: --real-nodes N, else 2 where the host can run them (else 0, saying why). */
function realNodeCount(full: boolean, args: readonly string[]): number {
  const asked = numberArg(args, '--real-nodes');
  if (!full) return 0;
  if (asked !== undefined) return asked;
  const support = realNodeSupport();
  if (support.ok) return 2;
  say(`no real nodes: ${support.why}`);
  return 0;
}

async function up(args: readonly string[]): Promise<number> {
  if (!claimDir()) return 1;
  const full = args.includes('--full');
  const port = numberArg(args, '--port');
  const realNodes = realNodeCount(full, args);
  const t0 = Date.now();
  try {
    const cp = await startControlPlane({
      full, dir: DIR, detached: true, log: say, realNodes, ...(port === undefined ? {} : { apiserverPort: port }),
    });
    await cp.kube.close();
    const images = cp.images === undefined ? {} : { pause: cp.images.pause.name, podserve: cp.images.podserve.name, outprobe: cp.images.outprobe.name };
    writeFileSync(path.join(DIR, 'state.json'), JSON.stringify({
      full, server: cp.server, kubeconfig: cp.kubeconfigPath, realNodes: cp.realNodes.map((r) => r.node.name), images,
    }, null, 2));
    say(`${full ? 'full' : 'minimal'} control plane ready in ${((Date.now() - t0) / 1000).toFixed(1)}s at ${cp.server}`);
    if (cp.net !== undefined) say(`pod network ${cp.net.clusterCidr}: nodes ${cp.net.nodes.map((n) => `${n.name} (netns ${n.netns}, ${n.ip})`).join(', ')}; Services ${cp.net.serviceCidr}`);
    if (cp.images !== undefined) say(`real nodes ${cp.realNodes.map((r) => r.node.name).join(', ')} (taint outprobe.test/real-node=true:NoSchedule); images ${cp.images.outprobe.name}, ${cp.images.podserve.name}`);
    say(`logs: ${path.join(DIR, 'logs')}; kubectl: ${cp.binaries.kubectl}`);
    say(`export KUBECONFIG=${cp.kubeconfigPath}`);
    process.stdout.write(`${cp.kubeconfigPath}\n`);
    return 0;
  } catch (err) {
    say(err instanceof Error ? err.message : String(err));
    if (recorded().length === 0) {
      rmSync(DIR, { recursive: true, force: true });
      say('start failed before any process was started');
    } else {
      say(`start failed; every started process was stopped; logs are kept in ${DIR}/logs (cluster:down removes them)`);
    }
    return 1;
  } finally {
    rmSync(path.join(DIR, 'up.pid'), { force: true });
  }
}

/** Drops the pod-network claim (test/support/cluster/podnet.ts) owned by our etcd. */
function releasePodNetwork(pids: readonly string[]): void {
  const dir = process.env['OUTPROBE_PODNET_DIR'] ?? '/tmp/outprobe-podnet';
  if (!existsSync(dir)) return;
  for (const f of readdirSync(dir)) {
    const file = path.join(dir, f);
    if (pids.includes(readFileSync(file, 'utf8').trim())) rmSync(file, { force: true });
  }
}

async function down(): Promise<number> {
  if (!existsSync(DIR)) {
    say(`nothing to stop: ${DIR} does not exist`);
    return 0;
  }
  const procs = recorded();
  const alive = procs.filter((r) => isAlive(r.pid));
  say(`stopping ${alive.length} process(es): ${alive.map((r) => `${r.name} (pid ${r.pid})`).join(', ') || 'none alive'}`);
  await stopPids(procs.map((r) => r.pid).reverse());
  releasePodNetwork(procs.map((r) => String(r.pid)));
  // The pod network's owner (etcd) is gone now: remove its namespaces, links and tables.
  if (podNetSupport().ok) for (const gone of await sweepStale()) say(`removed ${gone}`);
  rmSync(DIR, { recursive: true, force: true });
  say(`stopped; removed ${DIR}`);
  return 0;
}

function status(): number {
  const procs = recorded();
  if (procs.length === 0) {
    say(`no control plane recorded in ${DIR}`);
    return 1;
  }
  for (const r of procs) say(`${r.name.padEnd(24)} pid ${String(r.pid).padEnd(8)} ${isAlive(r.pid) ? 'running' : 'DEAD'}  ${r.logFile}`);
  say(`kubeconfig: ${path.join(DIR, 'kubeconfig')}`);
  return procs.every((r) => isAlive(r.pid)) ? 0 : 1;
}

const [cmd, ...rest] = process.argv.slice(2);
const actions: Record<string, () => Promise<number> | number> = { up: () => up(rest), down, status };
const action = actions[cmd ?? ''];
if (action === undefined) {
  say('usage: node scripts/cluster.ts up [--full] [--port N] [--real-nodes N] | down | status');
  process.exitCode = 2;
} else {
  process.exitCode = await action();
}
