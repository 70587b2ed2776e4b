// Component processes: spawned with output to a per-component log file, tracked by
// PID, stopped with SIGTERM then SIGKILL.
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

export interface Component {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  /** Set once the process has exited (code or signal). */
  exit: string | undefined;
}

export interface SpawnOptions {
  readonly name: string;
  readonly bin: string;
  readonly args: readonly string[];
  readonly logFile: string;
  /** Detach into its own session so it outlives this Node process (CLI mode). */
  readonly detached: boolean;
}

/** Starts a component; throws if it cannot be spawned at all. */
export function startComponent(o: SpawnOptions): Component {
  const fd = openSync(o.logFile, 'a');
  try {
    const child = spawn(o.bin, o.args, { stdio: ['ignore', fd, fd], detached: o.detached });
    if (child.pid === undefined) throw new Error(`${o.name}: could not start ${o.bin} (log: ${o.logFile})`);
    const c: Component = { name: o.name, pid: child.pid, logFile: o.logFile, exit: undefined };
    child.once('error', (err) => { c.exit = `spawn error: ${err.message}`; });
    child.once('exit', (code, signal) => { c.exit = signal === null ? `exit code ${code ?? '?'}` : `signal ${signal}`; });
    if (o.detached) child.unref();
    return c;
  } finally {
    closeSync(fd);
  }
}

function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
}

/**
 * True while a process with this PID runs. Zombies count as gone: a detached
 * component whose parent exited may be left unreaped by the container's PID 1.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  return !isZombie(pid);
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try { process.kill(pid, sig); } catch { /* already gone */ }
}

async function waitGone(pids: readonly number[], ms: number): Promise<number[]> {
  const deadline = Date.now() + ms;
  let alive = pids.filter(isAlive);
  while (alive.length > 0 && Date.now() < deadline) {
    await sleep(50);
    alive = alive.filter(isAlive);
  }
  return alive;
}

/**
 * Stops the PIDs one at a time in the given order (dependents first: kube-apiserver
 * hangs in shutdown if etcd goes first): SIGTERM, then SIGKILL after `graceMs`.
 */
export async function stopPids(pids: readonly number[], graceMs = 10_000): Promise<void> {
  const stuck: number[] = [];
  for (const pid of pids) {
    signal(pid, 'SIGTERM');
    if ((await waitGone([pid], graceMs)).length === 0) continue;
    signal(pid, 'SIGKILL');
    stuck.push(...await waitGone([pid], 5_000));
  }
  if (stuck.length > 0) throw new Error(`processes still alive after SIGKILL: ${stuck.join(', ')}`);
}

/** Synchronous last resort (process 'exit' hooks): SIGKILL every PID. */
export function killNow(pids: readonly number[]): void {
  for (const pid of pids) signal(pid, 'SIGKILL');
}

/** The last `n` lines of a log file, for error messages. */
export function tail(file: string, n = 15): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-n).join('\n');
  } catch {
    return '(no log)';
  }
}
