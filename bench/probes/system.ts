/**
 * Facts about processes and sockets read from the OS: CPU time of another
 * process from /proc/<pid>/stat, its RSS, and TIME-WAIT socket counts.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

let clockTicks: number | undefined;

/** `getconf CLK_TCK`: the unit of utime/stime in /proc/<pid>/stat (almost always 100). */
export function clkTck(): number {
  if (clockTicks === undefined) {
    const out = execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim();
    const parsed = Number.parseInt(out, 10);
    clockTicks = Number.isFinite(parsed) && parsed > 0 ? parsed : 100;
  }
  return clockTicks;
}

/**
 * User + system CPU seconds of a whole process (all threads) so far. The
 * comm field may contain spaces and parentheses, so fields are counted from
 * the last `)`: utime and stime are fields 14 and 15 of the line.
 */
export function processCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state), so field n is fields[n - 3].
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return (utime + stime) / clkTck();
}

/** Resident set size of a process in bytes (VmRSS), or undefined once it is gone. */
export function processRssBytes(pid: number): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(status);
    return match?.[1] === undefined ? undefined : Number(match[1]) * 1024;
  } catch {
    return undefined;
  }
}

export interface TimeWaitCount {
  /** Every TIME-WAIT socket on the machine (`ss -tan state time-wait | wc -l`, minus the header). */
  readonly all: number;
  /** Those with an endpoint on one of the benchmark's target addresses. */
  readonly ours: number;
  /** Of those, the prober's own sockets (the peer is a target address): the side node-libraries.md §3.4 worries about. */
  readonly proberSide: number;
  /** Of `ours`, those that entered TIME-WAIT within the last `sinceSeconds` (judged by their remaining timer). */
  readonly recent: number;
  readonly recentProberSide: number;
}

/** net.ipv4.tcp_max_tw_buckets: past it the kernel drops new TIME-WAIT entries, so counts stop growing. */
export function timeWaitCap(): number | undefined {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/tcp_max_tw_buckets', 'utf8').trim());
  } catch {
    return undefined;
  }
}

/** Linux keeps a socket in TIME-WAIT for TCP_TIMEWAIT_LEN, a fixed 60 s. */
const timeWaitLengthS = 60;

/** Remaining time of `timer:(timewait,17sec,0)`, `...,1.5ms,0)`, `...,1min,0)`; 0 when expired or unparsable. */
function remainingSeconds(line: string): number {
  const match = /timer:\(timewait,([\d.]*)(ms|sec|min)?,/.exec(line);
  const value = Number(match?.[1] ?? '');
  if (match === null || !Number.isFinite(value)) return 0;
  const unit = match[2] === 'ms' ? 1e-3 : match[2] === 'min' ? 60 : 1;
  return value * unit;
}

/**
 * Counts TIME-WAIT sockets; `ours` filters by the target IPs the benchmark
 * listens on. With `sinceSeconds` (< 60), `recent` counts those created in
 * that window: a socket's TIME-WAIT timer starts at 60 s and counts down.
 */
export function timeWaitSockets(targetIps: ReadonlySet<string>, sinceSeconds = Number.POSITIVE_INFINITY): TimeWaitCount {
  let out: string;
  try {
    out = execFileSync('ss', ['-tano', 'state', 'time-wait'], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  } catch {
    return { all: -1, ours: -1, proberSide: -1, recent: -1, recentProberSide: -1 };
  }
  const lines = out.split('\n').filter((line) => line.trim() !== '');
  // The timer shows whole seconds; half a second of slack keeps sockets born at the window's start.
  const minRemaining = timeWaitLengthS - sinceSeconds - 0.5;
  let ours = 0;
  let proberSide = 0;
  let recent = 0;
  let recentProberSide = 0;
  for (const line of lines.slice(1)) {
    // Columns: Recv-Q Send-Q Local:Port Peer:Port (the state column is omitted with a state filter).
    const columns = line.trim().split(/\s+/);
    const [local, peer] = columns.slice(2, 4).map((addr) => addr.slice(0, addr.lastIndexOf(':')));
    const isProber = targetIps.has(peer ?? '');
    if (!isProber && !targetIps.has(local ?? '')) continue;
    ours++;
    if (isProber) proberSide++;
    if (remainingSeconds(line) < minRemaining) continue;
    recent++;
    if (isProber) recentProberSide++;
  }
  return { all: Math.max(0, lines.length - 1), ours, proberSide, recent, recentProberSide };
}
