// The kubelet sets six host-wide kernel tunables when it starts (its containerManager's
// setupKernelTunables, unless protectKernelDefaults, which makes it refuse to start on
// other values instead): vm.overcommit_memory=1, vm.panic_on_oom=0, kernel.panic=10,
// kernel.panic_on_oops=1, kernel.keys.root_maxkeys and root_maxbytes. On a shared test
// machine those are not the kubelet's to keep (panic_on_oops=1 turns any kernel oops into
// a reboot), so the real nodes snapshot them before their kubelets start and put them back
// once every kubelet is past that step (it runs once, at start) — docs/adr/0047-real-nodes.md.
import { readFileSync, writeFileSync } from 'node:fs';

export const KUBELET_TUNABLES: readonly string[] = [
  'vm/overcommit_memory', 'vm/panic_on_oom', 'kernel/panic', 'kernel/panic_on_oops', 'kernel/keys/root_maxkeys', 'kernel/keys/root_maxbytes',
];

export type Tunables = ReadonlyMap<string, string>;

export function snapshotTunables(): Tunables {
  const m = new Map<string, string>();
  for (const t of KUBELET_TUNABLES) {
    try { m.set(t, readFileSync(`/proc/sys/${t}`, 'utf8').trim()); } catch { /* absent on this kernel: the kubelet cannot set it either */ }
  }
  return m;
}

/** Writes back every tunable that changed since `before`; returns `name old→new` for each one restored. */
export function restoreTunables(before: Tunables): string[] {
  const restored: string[] = [];
  for (const [t, v] of before) {
    let now: string;
    try { now = readFileSync(`/proc/sys/${t}`, 'utf8').trim(); } catch { continue; }
    if (now === v) continue;
    writeFileSync(`/proc/sys/${t}`, v);
    restored.push(`${t.replace(/\//g, '.')} ${now}→${v}`);
  }
  return restored;
}
