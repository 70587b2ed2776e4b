// Slot claims and run records. A plane claims slot s with the file <dir>/<s>.claim
// holding the PID that keeps it alive (stale once that PID is gone), and appends to
// <dir>/<s>.record one JSON line per namespace, root link or root nft table *before*
// creating it, so a SIGKILLed run's leftovers are listed even if it died mid-step.
import { appendFileSync, closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isAlive } from './procs.ts';
import { SLOTS } from './plan.ts';

export const CLAIM_DIR = process.env['OUTPROBE_NETNS_DIR'] ?? '/run/outprobe-netns';

export type RecordEntry =
  | { readonly kind: 'netns'; readonly name: string }
  | { readonly kind: 'link'; readonly name: string }
  | { readonly kind: 'table'; readonly family: string; readonly name: string }
  /** A real node's cgroup (its name under every hierarchy) and its directory of mounts (docs/adr/0047-real-nodes.md). */
  | { readonly kind: 'cgroup'; readonly name: string }
  | { readonly kind: 'mounts'; readonly dir: string };

export interface Claim {
  readonly slot: number;
  readonly setOwner: (pid: number) => void;
  readonly record: (e: RecordEntry) => void;
  readonly release: () => void;
}

const claimFile = (slot: number): string => path.join(CLAIM_DIR, `${slot}.claim`);
const recordFile = (slot: number): string => path.join(CLAIM_DIR, `${slot}.record`);

/** The PID holding slot `slot`, if its claim file exists and names a live process. */
export function liveOwner(slot: number): number | undefined {
  let owner: number;
  try { owner = Number(readFileSync(claimFile(slot), 'utf8')); } catch { return undefined; }
  return Number.isInteger(owner) && owner > 0 && isAlive(owner) ? owner : undefined;
}

function tryClaim(slot: number): boolean {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(claimFile(slot), 'wx');
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    if (liveOwner(slot) !== undefined) return false;
    rmSync(claimFile(slot), { force: true }); // stale: its run is gone
  }
  return false;
}

export function readRecord(slot: number): RecordEntry[] {
  let text: string;
  try { text = readFileSync(recordFile(slot), 'utf8'); } catch { return []; }
  const out: RecordEntry[] = [];
  for (const line of text.split('\n')) {
    try { if (line !== '') out.push(JSON.parse(line) as RecordEntry); } catch { /* a torn last line */ }
  }
  return out;
}

export function dropRecord(slot: number): void {
  rmSync(recordFile(slot), { force: true });
}

/**
 * Claims a free slot; `clean(slot)` runs before the claim is returned, to remove what a
 * dead earlier owner of the same slot left (its record is then dropped).
 */
export function claimSlot(clean: (slot: number) => void, random: () => number = Math.random): Claim {
  mkdirSync(CLAIM_DIR, { recursive: true });
  const start = Math.floor(random() * SLOTS);
  for (let k = 0; k < SLOTS; k++) {
    const slot = (start + k) % SLOTS;
    if (!tryClaim(slot)) continue;
    clean(slot);
    dropRecord(slot);
    return {
      slot,
      setOwner: (pid) => { writeFileSync(claimFile(slot), String(pid)); },
      record: (e) => { appendFileSync(recordFile(slot), `${JSON.stringify(e)}\n`); },
      release: () => { dropRecord(slot); rmSync(claimFile(slot), { force: true }); },
    };
  }
  throw new Error(`no free pod-network slot: all ${SLOTS} are claimed by live processes in ${CLAIM_DIR}`);
}

/** Holds a slot while a sweep removes its leftovers, so no run claims it meanwhile. */
export function tryClaimForSweep(slot: number): boolean {
  mkdirSync(CLAIM_DIR, { recursive: true });
  return tryClaim(slot);
}

export function releaseSweepClaim(slot: number): void {
  rmSync(claimFile(slot), { force: true });
}
