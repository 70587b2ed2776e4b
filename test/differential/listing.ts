/**
 * docs/kubelet-differences.md, machine-readable: every markdown table row
 * whose first cell is a scenario id (or a prefix ending in `*`) lists the
 * aspects in which that scenario is known to differ from the kubelet
 * (`decision`, `message`, `request`, comma-separated) and the reason.
 */
import { readFileSync } from 'node:fs';
import { aspects } from './run.ts';
import type { Aspect, Comparison } from './run.ts';

export interface Entry {
  readonly pattern: string;
  readonly aspects: readonly Aspect[];
  readonly reason: string;
}

export const listingFile = new URL('../../docs/kubelet-differences.md', import.meta.url);

export function parseListing(text: string): Entry[] {
  const entries: Entry[] = [];
  for (const line of text.split('\n')) {
    const cells = /^\|(.*)\|\s*$/.exec(line)?.[1]?.split('|').map((c) => c.trim().replace(/^`|`$/g, ''));
    if (cells === undefined || cells.length < 3) continue;
    const [pattern = '', list = '', ...rest] = cells;
    const named = list.split(',').map((a) => a.trim());
    if (!/^[a-z0-9][a-z0-9-]*\*?$/.test(pattern) || !named.every((a) => (aspects as readonly string[]).includes(a))) continue;
    entries.push({ pattern, aspects: named as Aspect[], reason: rest.join('|').trim() });
  }
  return entries;
}

export const readListing = (): Entry[] => parseListing(readFileSync(listingFile, 'utf8'));

const matches = (e: Entry, id: string): boolean => (e.pattern.endsWith('*') ? id.startsWith(e.pattern.slice(0, -1)) : id === e.pattern);

export interface Check {
  /** Differences no entry lists: the tier fails on these. */
  readonly unlisted: readonly { readonly id: string; readonly aspects: readonly Aspect[] }[];
  /** Listed (pattern, aspect) pairs that no scenario shows any more: warned about. */
  readonly stale: readonly { readonly pattern: string; readonly aspect: Aspect }[];
}

export function check(results: readonly Comparison[], entries: readonly Entry[]): Check {
  const unlisted: { id: string; aspects: Aspect[] }[] = [];
  const used = new Set<string>();
  for (const r of results) {
    const mine = entries.filter((e) => matches(e, r.id));
    const missing = r.differs.filter((a) => !mine.some((e) => e.aspects.includes(a)));
    if (missing.length > 0) unlisted.push({ id: r.id, aspects: missing });
    for (const e of mine) for (const a of e.aspects) if (r.differs.includes(a)) used.add(`${e.pattern} ${a}`);
  }
  const stale = entries.flatMap((e) => e.aspects.filter((a) => !used.has(`${e.pattern} ${a}`)).map((aspect) => ({ pattern: e.pattern, aspect })));
  return { unlisted, stale };
}

/** The current differences as table rows, reasons carried over from the entries that match. */
export function reportRows(results: readonly Comparison[], entries: readonly Entry[]): string[] {
  const rows = ['| scenario | differs | reason |', '|---|---|---|'];
  for (const r of results) {
    if (r.differs.length === 0) continue;
    const reasons = [...new Set(entries.filter((e) => matches(e, r.id) && e.aspects.some((a) => r.differs.includes(a))).map((e) => e.reason))];
    rows.push(`| ${r.id} | ${r.differs.join(', ')} | ${reasons.length > 0 ? reasons.join(' / ') : 'UNLISTED: give the reason'} |`);
  }
  return rows;
}

export function counts(results: readonly Comparison[]): string {
  const same = (a: Aspect): number => results.filter((r) => !r.differs.includes(a)).length;
  const all = results.filter((r) => r.differs.length === 0).length;
  return `${results.length} scenarios: ${all} identical in every aspect; decision ${same('decision')}/${results.length}, message ${same('message')}/${results.length}, request ${same('request')}/${results.length}`;
}
