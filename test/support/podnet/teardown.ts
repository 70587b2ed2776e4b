// Removing a run: what its record lists plus every name of its slot's family still on
// the machine (namespaces, root links, root nft tables). Processes left in those
// namespaces are SIGKILLed first. Synchronous, so exit hooks can use it.
import { readdirSync } from 'node:fs';
import { dropRecord, liveOwner, readRecord, tryClaimForSweep, releaseSweepClaim } from './claim.ts';
import { ipBatchSync, runSync } from './exec.ts';
import { SLOTS, slotOfName } from './plan.ts';
import { killInNetns } from './procs.ts';
import { cgroupHierarchies, removeCgroup, unmountUnder } from './host-state.ts';

export interface Leftovers {
  readonly netns: readonly string[];
  readonly links: readonly string[];
  readonly tables: readonly { readonly family: string; readonly name: string }[];
  /** Real nodes' cgroups (names under each hierarchy). */
  readonly cgroups: readonly string[];
  /** Real nodes' directories whose mounts must go (from the record only). */
  readonly mountDirs: readonly string[];
}

function listDir(dir: string): string[] {
  try { return readdirSync(dir); } catch { return []; }
}

/** Everything of our name family in the root namespace right now. */
export function scanFamily(): Leftovers {
  const tables = runSync('nft', ['list', 'tables']).split('\n').flatMap((line) => {
    const m = /^table (\w+) (\S+)$/.exec(line.trim());
    return m?.[1] !== undefined && m[2] !== undefined && slotOfName(m[2]) !== undefined ? [{ family: m[1], name: m[2] }] : [];
  });
  return {
    netns: listDir('/run/netns').filter((n) => slotOfName(n) !== undefined),
    links: listDir('/sys/class/net').filter((n) => slotOfName(n) !== undefined),
    tables,
    cgroups: [...new Set(cgroupHierarchies().flatMap((h) => listDir(h)).filter((n) => slotOfName(n) !== undefined))],
    mountDirs: [],
  };
}

function ofSlot(slot: number, found: Leftovers): Leftovers {
  const rec = readRecord(slot);
  const mine = (name: string): boolean => slotOfName(name) === slot;
  const uniq = (xs: string[]): string[] => [...new Set(xs)];
  const tables = [...rec.flatMap((e) => (e.kind === 'table' ? [e] : [])), ...found.tables.filter((t) => mine(t.name))];
  return {
    netns: uniq([...rec.flatMap((e) => (e.kind === 'netns' ? [e.name] : [])), ...found.netns.filter(mine)]),
    links: uniq([...rec.flatMap((e) => (e.kind === 'link' ? [e.name] : [])), ...found.links.filter(mine)]),
    tables: [...new Map(tables.map((t) => [`${t.family} ${t.name}`, { family: t.family, name: t.name }])).values()],
    cgroups: uniq([...rec.flatMap((e) => (e.kind === 'cgroup' ? [e.name] : [])), ...found.cgroups.filter(mine)]),
    mountDirs: uniq(rec.flatMap((e) => (e.kind === 'mounts' ? [e.dir] : []))),
  };
}

/** Removes `items` (whatever of them exists); returns a description of what existed and went. */
export function removeItems(items: Leftovers, present: Leftovers = scanFamily()): string[] {
  killInNetns(items.netns); // kubelets, containerds and their shims run in their node's namespace
  // Then the containers (in pod namespaces, found by their node's cgroup), their mounts, their cgroups.
  const hostState = [...items.cgroups.flatMap(removeCgroup), ...items.mountDirs.flatMap(unmountUnder)];
  ipBatchSync(items.links.map((l) => `link del ${l}`));
  ipBatchSync(items.netns.map((n) => `netns del ${n}`));
  const liveTables = new Set(present.tables.map((t) => `${t.family} ${t.name}`));
  const tables = items.tables.filter((t) => liveTables.has(`${t.family} ${t.name}`));
  for (const t of tables) runSync('nft', ['delete', 'table', t.family, t.name]);
  const netns = new Set(present.netns);
  const links = new Set(present.links);
  return [
    ...items.netns.filter((n) => netns.has(n)).map((n) => `netns ${n}`),
    ...items.links.filter((l) => links.has(l)).map((l) => `link ${l}`),
    ...tables.map((t) => `nft table ${t.family} ${t.name}`),
    ...hostState,
  ];
}

/** Removes what slot `slot` left (its record and its family names) and drops its record. */
export function removeSlot(slot: number, found: Leftovers = scanFamily()): string[] {
  const removed = removeItems(ofSlot(slot, found), found);
  dropRecord(slot);
  return removed;
}

/** Removes the leftovers of every slot whose owner is gone (holding the slot while doing so). */
export function sweepStaleSync(log?: (m: string) => void): string[] {
  const found = scanFamily();
  const removed: string[] = [];
  for (let slot = 0; slot < SLOTS; slot++) {
    if (liveOwner(slot) !== undefined || !tryClaimForSweep(slot)) continue;
    try {
      const gone = removeSlot(slot, found);
      if (gone.length > 0) log?.(`podnet: removed what a dead run left in slot ${slot}: ${gone.join(', ')}`);
      removed.push(...gone);
    } finally {
      releaseSweepClaim(slot);
    }
  }
  return removed;
}
