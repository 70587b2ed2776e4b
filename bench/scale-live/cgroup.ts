/**
 * `--replica-memory-limit-mb`: each replica in a memory cgroup of its own, as
 * a container with `resources.limits.memory` runs it. Node sizes V8's heap
 * limit and young generation from the cgroup's limit (libuv's
 * `uv_get_constrained_memory`): unconstrained on this 24 GiB machine a
 * replica gets a 4 GiB heap limit and a 128 MiB young generation; in a
 * 1 GiB cgroup 560 MB and 32 MiB. So RSS measured without a limit is not
 * what a replica in a pod with a limit would show.
 *
 * cgroup v1 (`/sys/fs/cgroup/memory/`) or v2 (`/sys/fs/cgroup/`, the
 * memory controller enabled for children); needs root. The replica enters
 * the cgroup before it execs Node (`sh -c 'echo $$ > cgroup.procs; exec …'`),
 * so its heap is sized from the limit from the start.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface MemoryCgroup {
  readonly dir: string;
  readonly limitBytes: number;
  /** The cgroup's `cgroup.procs`: a process writes its PID there to enter. */
  readonly procsFile: string;
  /** Highest memory charged to the cgroup so far (v1 max_usage_in_bytes, v2 memory.peak), if the kernel reports it. */
  peakBytes(): number | undefined;
  /** OOM kills inside the cgroup so far, if the kernel reports them. */
  oomKills(): number | undefined;
  /** Removes the cgroup (its processes must have exited). Never throws. */
  remove(): void;
}

const v1Root = '/sys/fs/cgroup/memory';
const v2Root = '/sys/fs/cgroup';

function readNumber(file: string): number | undefined {
  try {
    const n = Number(readFileSync(file, 'utf8').trim());
    return Number.isFinite(n) ? n : undefined;
  } catch {
    return undefined;
  }
}

function readKey(file: string, key: string): number | undefined {
  try {
    const line = readFileSync(file, 'utf8').split('\n').find((l) => l.startsWith(`${key} `));
    return line === undefined ? undefined : Number(line.slice(key.length + 1));
  } catch {
    return undefined;
  }
}

/** Creates the memory cgroup `name` with `limitBytes`; throws with the reason if this machine cannot. */
export function createMemoryCgroup(name: string, limitBytes: number): MemoryCgroup {
  if (!/^[a-z0-9-]+$/.test(name)) throw new Error(`bad cgroup name ${JSON.stringify(name)}`);
  if (existsSync(path.join(v1Root, 'memory.limit_in_bytes'))) {
    const dir = path.join(v1Root, name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'memory.limit_in_bytes'), String(limitBytes));
    return cgroupAt(dir, limitBytes, 'memory.max_usage_in_bytes', 'memory.oom_control');
  }
  const controllers = existsSync(path.join(v2Root, 'cgroup.controllers')) ? readFileSync(path.join(v2Root, 'cgroup.controllers'), 'utf8') : '';
  if (!controllers.split(/\s+/).includes('memory')) throw new Error('no memory cgroup controller (neither cgroup v1 memory nor v2 with memory)');
  const subtree = readFileSync(path.join(v2Root, 'cgroup.subtree_control'), 'utf8');
  if (!subtree.split(/\s+/).includes('memory')) writeFileSync(path.join(v2Root, 'cgroup.subtree_control'), '+memory');
  const dir = path.join(v2Root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'memory.max'), String(limitBytes));
  return cgroupAt(dir, limitBytes, 'memory.peak', 'memory.events');
}

/** The cgroup at `dir`: its peak from the file `peakFile`, its OOM kills from the `oom_kill` line of `oomFile`. */
function cgroupAt(dir: string, limitBytes: number, peakFile: string, oomFile: string): MemoryCgroup {
  return {
    dir, limitBytes, procsFile: path.join(dir, 'cgroup.procs'),
    peakBytes: () => readNumber(path.join(dir, peakFile)),
    oomKills: () => readKey(path.join(dir, oomFile), 'oom_kill'),
    remove: () => { try { rmdirSync(dir); } catch { /* still busy or gone */ } },
  };
}

/** `command args…` prefixed so that the process enters `cgroup` before it execs. */
export function inCgroup(cgroup: MemoryCgroup | undefined, command: string, args: readonly string[]): [string, string[]] {
  if (cgroup === undefined) return [command, [...args]];
  return ['sh', ['-c', 'echo $$ > "$0" && exec "$@"', cgroup.procsFile, command, ...args]];
}

/** V8's heap limit (MB) and the young generation's largest size (MB) that Node picks in `cgroup` with `nodeArgs`. */
export function heapLimitsIn(cgroup: MemoryCgroup | undefined, nodeArgs: readonly string[]): { heap_limit_mb: number; young_generation_max_mb: number } {
  // Allocate until the young generation has grown to its largest size, as a replica's does.
  const script = "const v8=require('v8');let keep=[],max=0;for(let i=0;i<3e6;i++){const o={a:i,b:'x'+i};if(i%3===0)keep.push(o);if(keep.length>2e5)keep=keep.slice(1e5);if(i%1e5===0)max=Math.max(max,v8.getHeapSpaceStatistics().find(s=>s.space_name==='new_space').space_size)}console.log(JSON.stringify({heap_limit_mb:Math.round(v8.getHeapStatistics().heap_size_limit/1048576),young_generation_max_mb:Math.round(max/1048576)}))";
  const [cmd, args] = inCgroup(cgroup, process.execPath, [...nodeArgs, '-e', script]);
  return JSON.parse(execFileSync(cmd, args, { encoding: 'utf8', timeout: 60_000 })) as { heap_limit_mb: number; young_generation_max_mb: number };
}
