/**
 * Cloudprober as a peer of `bench:probes` (issue 16): built from its Go module
 * (tools/cloudprober, scripts/build-cloudprober.sh; cached outside the
 * repository), run as its own process per phase with the committed config
 * bench/probes/cloudprober/probes.cfg against the benchmark's targets, and
 * counted from its own /metrics (the `total` and `success` counters of every
 * probe and target) over a window whose CPU comes from /proc/<pid>/stat.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { freePort, httpGet, startPeer } from './peer.ts';
import { processCpuSeconds, processRssBytes } from './system.ts';
import type { Listener } from './targets.ts';

const root = new URL('../../', import.meta.url).pathname;
export const cloudproberConfigFile = join(root, 'bench/probes/cloudprober/probes.cfg');

export interface CloudproberBinary {
  readonly path: string;
  readonly version: string;
}

/**
 * Builds Cloudprober if needed (first use on a machine: minutes; then the
 * cached binary). Never throws: a failed build is reported as `error`, and
 * the benchmark runs its other peers without Cloudprober.
 */
export function ensureCloudprober(log: (line: string) => void): CloudproberBinary | { readonly error: string } {
  log('cloudprober: scripts/build-cloudprober.sh (cached after the first build) ...');
  const started = performance.now();
  const build = spawnSync('bash', [join(root, 'scripts/build-cloudprober.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 3_600_000 });
  const tail = build.stderr.trim().split('\n').slice(-5).join(' | ');
  if (build.status !== 0) return { error: `build failed (${build.error?.message ?? `exit ${String(build.status)}`}): ${tail}` };
  const path = build.stdout.trim().split('\n').at(-1) ?? '';
  const version = spawnSync(path, ['--version'], { encoding: 'utf8', timeout: 30_000 });
  if (version.status !== 0) return { error: `${path} --version failed: ${version.stderr.trim()}` };
  log(`cloudprober: ${path} (${Math.round((performance.now() - started) / 1000)} s)`);
  return { path, version: `${version.stdout}${version.stderr}`.trim().split('\n')[0] ?? 'unknown' };
}

export type CloudproberKind = 'http' | 'tcp' | 'grpc';

export interface CloudproberSetup {
  readonly kind: CloudproberKind;
  readonly targets: readonly Listener[];
  /** Probe definitions of that kind, each over every target. */
  readonly copies: number;
  readonly intervalMs: number;
  readonly timeoutMs: number;
}

export interface CloudproberCounts {
  readonly total: number;
  readonly success: number;
  /** Series (probe × target) that have reported so far. */
  readonly series: number;
}

export interface Cloudprober {
  readonly pid: number;
  /** Sums `total` and `success` over every series of our probes on /metrics. */
  counts(): Promise<CloudproberCounts>;
  cpuSeconds(): number;
  rssBytes(): number | undefined;
  stop(): Promise<void>;
}

/**
 * `total{ptype="http",probe="http-0",dst="127.0.0.2:41234"} 1234 1700000000000`:
 * the counters of our probes (named `<kind>-<n>`), summed over every series.
 */
export function sumCounters(text: string, kind: string): CloudproberCounts {
  let total = 0;
  let success = 0;
  let series = 0;
  const probe = new RegExp(`[{,]probe="${kind}-\\d+"`);
  for (const line of text.split('\n')) {
    const isTotal = line.startsWith('total{');
    if (!isTotal && !line.startsWith('success{')) continue;
    if (!probe.test(line)) continue;
    const value = Number(line.slice(line.indexOf('} ') + 2).split(' ')[0]);
    if (!Number.isFinite(value)) continue;
    if (isTotal) {
      total += value;
      series++;
    } else success += value;
  }
  return { total, success, series };
}

/**
 * Resource list in Cloudprober's textproto format: one resource per listening
 * port. Names must be unique (`<ip>_<port>`); the `fqdn` label is what the
 * HTTP probe puts in Host (`<ip>:<port>`, as the kubelet sends); the probe
 * connects to `ip` (Cloudprober resolves first when a target has an IP).
 */
function targetsFile(targets: readonly Listener[]): string {
  return targets
    .map(({ ip, port }) => `resource {\n  name: "${ip}_${String(port)}"\n  ip: "${ip}"\n  port: ${String(port)}\n  labels { key: "fqdn" value: "${ip}" }\n}\n`)
    .join('');
}

/** Starts Cloudprober with the committed config and waits (bounded) until every series of every probe has reported. */
export async function startCloudprober(binary: CloudproberBinary, setup: CloudproberSetup): Promise<Cloudprober> {
  const dir = mkdtempSync(join(tmpdir(), 'outprobe-bench-cloudprober-'));
  const targetsPath = join(dir, 'targets.textpb');
  writeFileSync(targetsPath, targetsFile(setup.targets));
  const port = await freePort();
  const env = {
    ...process.env,
    CP_KIND: setup.kind,
    CP_COPIES: String(setup.copies),
    CP_INTERVAL_MSEC: String(setup.intervalMs),
    CP_TIMEOUT_MSEC: String(setup.timeoutMs),
    CP_TARGETS_FILE: targetsPath,
    CP_PORT: String(port),
  };
  const args = [`--config_file=${cloudproberConfigFile}`, '--min_log_level=WARNING', '--disable_sys_metrics'];
  const { child, stop } = startPeer(binary.path, args, `cloudprober-${setup.kind}`, dir, 'SIGKILL', { env, stdio: ['ignore', 'ignore', 'pipe'] });
  const metricsUrl = `http://127.0.0.1:${String(port)}/metrics`;
  const counts = async (): Promise<CloudproberCounts> => {
    const { status, body } = await httpGet(metricsUrl, false, 30_000);
    if (status !== 200) throw new Error(`GET ${metricsUrl}: HTTP ${String(status)}`);
    return sumCounters(body, setup.kind);
  };
  const expected = setup.targets.length * setup.copies;
  // The first export of a target comes one stats-export interval (max(interval, 10 s)) after its first probe.
  const deadline = performance.now() + 60_000 + 3 * setup.intervalMs;
  let seen = 0;
  while (performance.now() < deadline && child.exitCode === null && child.pid !== undefined) {
    seen = await counts().then(
      (c) => c.series,
      () => 0,
    );
    if (seen >= expected) {
      const pid = child.pid;
      return { pid, counts, cpuSeconds: () => processCpuSeconds(pid), rssBytes: () => processRssBytes(pid), stop };
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  await stop();
  throw new Error(`cloudprober ${setup.kind}: ${String(seen)} of ${String(expected)} series reported within the start-up bound (exit code ${String(child.exitCode)})`);
}
