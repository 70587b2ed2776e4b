/**
 * The TCP probe path of several copies of the tree, side by side in one
 * process (issue 31 item 6): each `--trees` directory is a copy of the
 * repository at some commit (`git archive <commit> src bench test/support
 * package.json | tar -x -C <dir>`, plus a `node_modules` link); its
 * `tcpProbe` runs through its own `Scheduler` exactly as `bench:probes`
 * runs it (its bench/probes/saturate.ts), beside the kernel's floor
 * (floor.ts), on the same targets, taking turns round after round with the
 * order rotated each round. Probes per CPU-second of this process, user and
 * system time apart; the last stdout line is JSON.
 *
 *   ./node_modules/.bin/node bench/probes/tcp-trees.ts --trees=/tmp/s0,/tmp/s1 [--probes=30000] [--rounds=6]
 */
import { rawTcp } from '../../src/probing/rawtcp/index.ts';
import { killAll } from './children.ts';
import { startFleet } from './fleet.ts';
import { runFloor } from './floor.ts';
import type { Probe, RunResult, SaturateOptions } from './saturate.ts';

type Run = (quota: number) => Promise<NodeJS.CpuUsage>;

function flag(name: string): string | undefined {
  return process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
}

const probes = Number(flag('probes') ?? 30_000);
const rounds = Number(flag('rounds') ?? 6);
const trees = (flag('trees') ?? '').split(',').filter((t) => t !== '');

interface Tree {
  readonly tcpProbe: (req: { ip: string; port: number; timeoutMs: number }, signal?: AbortSignal) => Promise<{ kind: string }>;
}
interface Saturate {
  readonly runQuota: (probes: readonly Probe[], quota: number, keyPrefix: string, options: SaturateOptions) => Promise<RunResult>;
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
};

async function main(): Promise<void> {
  if (trees.length === 0) throw new Error('--trees=<dir>,<dir>,... is required');
  const raw = rawTcp();
  if (raw === undefined) throw new Error('no raw TCP handle for the floor');
  const fleet = await startFleet({ httpPorts: 0, tcpPorts: 500, grpcPorts: 0, targetProcs: 2, ips: 10 });
  const layers: [string, Run][] = [['floor', async (quota) => (await runFloor(raw, fleet.tcp, quota, 64)).cpu]];
  for (const dir of trees) {
    const tree = (await import(`${dir}/src/probing/index.ts`)) as Tree;
    const saturate = (await import(`${dir}/bench/probes/saturate.ts`)) as Saturate;
    const probesOf = fleet.tcp.map(({ ip, port }) => {
      const req = { ip, port, timeoutMs: 1000 };
      return (signal: AbortSignal) => tree.tcpProbe(req, signal) as ReturnType<Probe>;
    });
    layers.push([
      dir,
      async (quota) => {
        const result = await saturate.runQuota(probesOf, quota, 'tcp', { concurrency: 64, periodMs: 0 });
        if (result.outcomes.success !== quota) throw new Error(`${dir}: ${JSON.stringify(result.outcomes)}`);
        return result.cpu;
      },
    ]);
  }
  for (const [, run] of layers) await run(20_000); // warm-up
  const costs = new Map<string, NodeJS.CpuUsage[]>(layers.map(([name]) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < layers.length; i++) {
      const [name, run] = layers[(round + i) % layers.length] ?? layers[0]!;
      costs.get(name)?.push(await run(probes));
    }
  }
  const summary: Record<string, unknown> = { probes, rounds };
  for (const [name, list] of costs) {
    const total = list.reduce((sum, c) => sum + c.user + c.system, 0);
    const row = {
      probes_per_cpu_s: Math.round((probes * list.length) / (total / 1e6)),
      rounds: list.map((c) => Math.round(probes / ((c.user + c.system) / 1e6))),
      user_us_median: Math.round(median(list.map((c) => c.user / probes)) * 100) / 100,
      system_us_median: Math.round(median(list.map((c) => c.system / probes)) * 100) / 100,
    };
    console.log(`${name}: ${String(row.probes_per_cpu_s)} probes/CPU-s pooled, rounds ${row.rounds.join(' ')}, user ${String(row.user_us_median)} µs, system ${String(row.system_us_median)} µs per probe (medians)`);
    summary[name] = row;
  }
  console.log(JSON.stringify(summary));
}

main().then(
  () => {
    killAll();
    process.exit(0);
  },
  (error: unknown) => {
    process.stderr.write(`tcp-trees: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    killAll();
    process.exit(1);
  },
);
