// `npm run cluster:up [-- --full] [-- --port N]`, `npm run cluster:down`,
// `npm run cluster:status`: one long-lived local control plane whose state lives in
// ${OUTPROBE_CLUSTER_DIR:-/tmp/outprobe-cluster} (PIDs, logs, PKI, kubeconfig).
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isAlive, startControlPlane } from '../test/support/cluster/index.ts';
import { stopPids } from '../test/support/cluster/proc.ts';
import { podNetSupport, sweepStale } from '../test/support/podnet/index.ts';

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

function portArg(args: readonly string[]): number | undefined {
  const i = args.indexOf('--port');
  return i >= 0 ? Number(args[i + 1]) : undefined;
}

async function up(args: readonly string[]): Promise<number> {
  if (!claimDir()) return 1;
  const full = args.includes('--full');
  const port = portArg(args);
  const t0 = Date.now();
  try {
    const cp = await startControlPlane({
      full, dir: DIR, detached: true, log: say, ...(port === undefined ? {} : { apiserverPort: port }),
    });
    await cp.kube.close();
    writeFileSync(path.join(DIR, 'state.json'), JSON.stringify({ full, server: cp.server, kubeconfig: cp.kubeconfigPath }, null, 2));
    say(`${full ? 'full' : 'minimal'} control plane ready in ${((Date.now() - t0) / 1000).toFixed(1)}s at ${cp.server}`);
    if (cp.net !== undefined) say(`pod network ${cp.net.clusterCidr}: nodes ${cp.net.nodes.map((n) => `${n.name} (netns ${n.netns}, ${n.ip})`).join(', ')}; Services ${cp.net.serviceCidr}`);
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
  say('usage: node scripts/cluster.ts up [--full] [--port N] | down | status');
  process.exitCode = 2;
} else {
  process.exitCode = await action();
}
