// Processes inside network namespaces, found without spawning anything: a process is
// in a named namespace when /proc/<pid>/ns/net names the inode of /run/netns/<name>.
// Used to kill what is left in a namespace before deleting it.
import { readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';

/** True while a process with this PID runs; zombies count as gone. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
}

function netnsInode(name: string): number | undefined {
  try {
    return statSync(`/run/netns/${name}`).ino;
  } catch {
    return undefined;
  }
}

/** PIDs (other than ours) whose network namespace is one of the named ones. */
export function pidsInNetns(names: readonly string[]): number[] {
  const inodes = new Set(names.map(netnsInode).filter((i) => i !== undefined));
  if (inodes.size === 0) return [];
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    let link: string;
    try { link = readlinkSync(`/proc/${pid}/ns/net`); } catch { continue; }
    const m = /^net:\[(\d+)\]$/.exec(link);
    if (m !== null && inodes.has(Number(m[1]))) pids.push(pid);
  }
  return pids;
}

/** SIGKILLs every process left in the named namespaces; returns their PIDs. */
export function killInNetns(names: readonly string[]): number[] {
  const pids = pidsInNetns(names);
  for (const pid of pids) {
    try { process.kill(pid, 'SIGKILL'); } catch { /* already gone */ }
  }
  return pids;
}
