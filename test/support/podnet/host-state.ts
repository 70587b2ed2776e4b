// What a run with real nodes leaves outside network namespaces
// (docs/adr/0047-real-nodes.md): a cgroup per node in every cgroup hierarchy (the
// kubelet's cgroupRoot, holding the containers' processes) and mounts under the node's
// directory (containerd's overlay snapshots and pod network-namespace files, the
// kubelet's token and volume mounts). Synchronous, so exit hooks and the sweep use it.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmdirSync } from 'node:fs';
import path from 'node:path';

export const CGROUP_FS = '/sys/fs/cgroup';

/** Every cgroup v1 hierarchy (and the v2 one) mounted under /sys/fs/cgroup. */
export function cgroupHierarchies(): string[] {
  const mounts = readFileSync('/proc/self/mounts', 'utf8').split('\n');
  return mounts.flatMap((l) => {
    const [, mnt, type] = l.split(' ');
    return mnt !== undefined && (type === 'cgroup' || type === 'cgroup2') && mnt.startsWith(`${CGROUP_FS}/`) ? [mnt] : [];
  });
}

function subtree(dir: string): string[] {
  let entries: string[];
  try { entries = readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => path.join(dir, e.name)); } catch { return []; }
  return [...entries.flatMap(subtree), ...entries];
}

function pidsOf(dir: string): number[] {
  try { return readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number); } catch { return []; }
}

/** SIGKILLs the processes of cgroup directory `d` and removes it; false while it cannot be removed yet. */
function killAndRemove(d: string): boolean {
  for (const pid of pidsOf(d)) {
    try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
  }
  try {
    rmdirSync(d);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

/** SIGKILLs every process in cgroup `name` (in any hierarchy) and removes it, deepest first; returns what existed. */
export function removeCgroup(name: string): string[] {
  const roots = cgroupHierarchies().map((h) => path.join(h, name)).filter((d) => existsSync(d));
  if (roots.length === 0) return [];
  for (let attempt = 0; attempt < 50; attempt++) {
    const left = roots.flatMap((root) => [...subtree(root), root]).filter((d) => !killAndRemove(d)).length;
    if (left === 0) break;
    spawnSync('sleep', ['0.1']);
  }
  return [`cgroup ${name}`];
}

/** Mount points at or under `dir`, deepest first (from /proc/self/mountinfo). */
export function mountsUnder(dir: string): string[] {
  const prefix = dir.endsWith('/') ? dir : `${dir}/`;
  const points = readFileSync('/proc/self/mountinfo', 'utf8').split('\n').flatMap((l) => {
    const mp = l.split(' ')[4];
    if (mp === undefined) return [];
    const p = mp.replace(/\\(\d{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
    return p === dir || p.startsWith(prefix) ? [p] : [];
  });
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

/** Lazily unmounts everything under `dir`; returns a description of what was mounted. */
export function unmountUnder(dir: string): string[] {
  const points = mountsUnder(dir);
  if (points.length === 0) return [];
  for (let i = 0; i < points.length; i += 64) spawnSync('umount', ['-l', ...points.slice(i, i + 64)], { stdio: 'ignore' });
  return [`${points.length} mounts under ${dir}`];
}
