/**
 * Prometheus blackbox_exporter as the comparison: installed from the Debian
 * package if missing (its system service is then stopped and disabled), run
 * as our own instance on a free 127.0.0.1 port with our own config, and
 * driven with `/probe?module=...&target=...` over keep-alive connections.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { freePort, httpGet, startPeer } from './peer.ts';

export const blackboxBinary = '/usr/bin/prometheus-blackbox-exporter';
const service = 'prometheus-blackbox-exporter';

const config = `# Written by outprobe bench/probes/blackbox.ts
modules:
  http_2xx:
    prober: http
    timeout: 1s
    http:
      method: GET
      valid_status_codes: []  # default: 2xx
      preferred_ip_protocol: ip4
      ip_protocol_fallback: false
  tcp_connect:
    prober: tcp
    timeout: 1s
    tcp:
      preferred_ip_protocol: ip4
      ip_protocol_fallback: false
`;

function quietly(command: string, args: readonly string[]): void {
  spawnSync(command, args, { stdio: 'ignore', timeout: 30_000 });
}

/**
 * Installs the Debian package when the binary is missing. Debian's postinst
 * may start and enable the service; the benchmark runs its own instance, so
 * the service is stopped and disabled right after installing.
 */
export function ensureBlackbox(log: (line: string) => void): void {
  if (existsSync(blackboxBinary)) return;
  log(`${blackboxBinary} missing: apt-get update && apt-get install -y ${service}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update'], { stdio: ['ignore', 'ignore', 'inherit'], env, timeout: 300_000 });
  execFileSync('apt-get', ['install', '-y', '--no-install-recommends', service], { stdio: ['ignore', 'ignore', 'inherit'], env, timeout: 600_000 });
  quietly('systemctl', ['disable', '--now', service]);
  quietly('service', [service, 'stop']);
  quietly('update-rc.d', [service, 'disable']);
  if (!existsSync(blackboxBinary)) throw new Error(`${blackboxBinary} still missing after apt-get install`);
}

export function blackboxVersion(): string {
  const out = spawnSync(blackboxBinary, ['--version'], { encoding: 'utf8' });
  return `${out.stdout}${out.stderr}`.split('\n')[0]?.trim() ?? 'unknown';
}

export interface Blackbox {
  readonly pid: number;
  readonly port: number;
  stop(): Promise<void>;
}

/** Starts our own instance and waits (bounded) until /-/healthy answers. */
export async function startBlackbox(): Promise<Blackbox> {
  const dir = mkdtempSync(join(tmpdir(), 'outprobe-bench-blackbox-'));
  const configFile = join(dir, 'blackbox.yml');
  writeFileSync(configFile, config);
  const port = await freePort();
  const args = [`--config.file=${configFile}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'];
  const { child, stop } = startPeer(blackboxBinary, args, 'blackbox', dir, 'SIGTERM');
  const agent = new http.Agent({ keepAlive: false });
  for (let attempt = 0; attempt < 100; attempt++) {
    if (child.exitCode !== null) break;
    const ok = await httpGet(`http://127.0.0.1:${port}/-/healthy`, agent, 10_000).then((r) => r.status === 200, () => false);
    if (ok && child.pid !== undefined) return { pid: child.pid, port, stop };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await stop();
  throw new Error('blackbox_exporter did not become healthy within 10 s');
}

export interface DriveResult {
  readonly probes: number;
  readonly succeeded: number;
  readonly failed: number;
  readonly sampleProblems: readonly string[];
  readonly wallMs: number;
}

/**
 * Sends `count` probe requests, `concurrency` in flight, over keep-alive
 * connections to blackbox; targets are taken round-robin. A probe counts as
 * succeeded only when the body says `probe_success 1`.
 */
export async function driveBlackbox(blackbox: Blackbox, module: string, targets: readonly string[], count: number, concurrency: number): Promise<DriveResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const base = `http://127.0.0.1:${blackbox.port}/probe?module=${encodeURIComponent(module)}&target=`;
  const urls = targets.map((target) => base + encodeURIComponent(target));
  const problems = new Set<string>();
  let next = 0;
  let succeeded = 0;
  let failed = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const url = urls[next++ % urls.length]!;
      try {
        const { status, body } = await httpGet(url, agent, 10_000);
        if (status === 200 && /^probe_success 1$/m.test(body)) succeeded++;
        else {
          failed++;
          if (problems.size < 5) problems.add(`${module}: HTTP ${status}, ${/^probe_success .*$/m.exec(body)?.[0] ?? body.slice(0, 200)}`);
        }
      } catch (error: unknown) {
        failed++;
        if (problems.size < 5) problems.add(String(error));
      }
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const wallMs = performance.now() - start;
  agent.destroy();
  return { probes: count, succeeded, failed, sampleProblems: [...problems], wallMs };
}
