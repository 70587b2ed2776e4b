/**
 * Just enough Markdown for the docs tests: headings and GitHub's anchors,
 * relative links, and table rows, all outside fenced code blocks.
 */
import { readFileSync } from 'node:fs';

export function read(path: string): string {
  return readFileSync(path, 'utf8');
}

/** The lines outside fenced code blocks, with their 1-based line numbers. */
export function proseLines(text: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let fenced = false;
  text.split('\n').forEach((t, i) => {
    if (/^\s*```/.test(t)) fenced = !fenced;
    else if (!fenced) out.push({ line: i + 1, text: t });
  });
  return out;
}

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}_\- ]/gu, '').replace(/ /g, '-');
}

export type Heading = { readonly level: number; readonly title: string; readonly anchor: string };

/** Headings in order, anchors made unique as GitHub does (`-1`, `-2`, …). */
export function headings(text: string): Heading[] {
  const seen = new Map<string, number>();
  const out: Heading[] = [];
  for (const { text: t } of proseLines(text)) {
    const m = /^(#{1,6}) (.*)$/.exec(t);
    if (m === null) continue;
    const base = slug(m[2]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.push({ level: m[1]!.length, title: m[2]!, anchor: n === 0 ? base : `${base}-${n}` });
  }
  return out;
}

/** Link targets (`[text](target)`) outside code blocks, with their line. */
export function links(text: string): { line: number; target: string }[] {
  const out: { line: number; target: string }[] = [];
  for (const { line, text: t } of proseLines(text)) {
    for (const m of t.matchAll(/\]\(([^)\s]+)\)/g)) out.push({ line, target: m[1]! });
  }
  return out;
}

/** The rows of the first table after the heading `title`, each as its cells. */
export function tableAfter(text: string, title: string): string[][] {
  const lines = proseLines(text).map((l) => l.text);
  const start = lines.findIndex((l) => /^#{1,6} /.test(l) && l.replace(/^#+ /, '') === title);
  if (start < 0) throw new Error(`no heading "${title}"`);
  const rows: string[][] = [];
  for (const l of lines.slice(start + 1)) {
    if (/^#{1,6} /.test(l)) break;
    if (!l.startsWith('|')) {
      if (rows.length > 0) break;
      continue;
    }
    rows.push(l.slice(1, l.endsWith('|') ? -1 : undefined).split(' | ').map((c) => c.trim()));
  }
  return rows.slice(2); // header and separator
}
