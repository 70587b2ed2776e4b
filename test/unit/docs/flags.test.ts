// docs/configuration.md's "Controller flags" table and the controller's own flags
// (`node src/main.ts --help`, from the config loader in-process) must name the same
// flags, each with the environment variable the loader reads for it (issue 30).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '../../../src/config/index.ts';
import { read, tableAfter } from './markdown.ts';

const page = 'docs/configuration.md';

/** flag → its environment variable ('' when it has none), from `--help`. */
function helpFlags(): Map<string, string> {
  const help = loadConfig(['--help'], {});
  assert.ok(!help.ok && help.help, 'loadConfig --help gives the help text');
  const flags = new Map<string, string>();
  for (const line of help.message.split('\n')) {
    const m = /^ {2}--([a-z0-9-]+)/.exec(line);
    if (m !== null) flags.set(m[1]!, /\[\$([A-Z0-9_]+)\]$/.exec(line)?.[1] ?? '');
  }
  return flags;
}

/** Each row of the table: the flags its first cell names and the variables in brackets. */
function documentedRows(): { flags: string[]; envs: string[]; cell: string }[] {
  return tableAfter(read(page), 'Controller flags').map((cells) => {
    const cell = cells[0]!;
    return {
      cell,
      flags: [...cell.matchAll(/`--([a-z0-9-]+)`/g)].map((m) => m[1]!),
      envs: [...cell.matchAll(/`(OUTPROBE_[A-Z0-9_]+)`/g)].map((m) => m[1]!),
    };
  });
}

describe(`${page}: the controller flags table`, () => {
  it('reads both lists (a parser that finds nothing must not pass)', () => {
    assert.ok(helpFlags().size >= 40, `--help lists ${helpFlags().size} flags`);
    const rows = documentedRows();
    assert.ok(rows.length >= 30, `the table has ${rows.length} rows`);
    for (const r of rows) assert.ok(r.flags.length > 0, `row without a flag: ${r.cell}`);
  });

  it('documents every flag the controller has, and no flag it lacks', () => {
    const inHelp = new Set(helpFlags().keys());
    const inDocs = new Set(documentedRows().flatMap((r) => r.flags));
    const missing = [...inHelp].filter((f) => !inDocs.has(f)).map((f) => `--${f}`);
    const extra = [...inDocs].filter((f) => !inHelp.has(f)).map((f) => `--${f}`);
    assert.deepEqual({ missing, extra }, { missing: [], extra: [] }, `flags missing from ${page} / documented there but not in --help`);
  });

  it('names, for each flag, the environment variable the controller reads, and no other', () => {
    const env = helpFlags();
    const wrong: string[] = [];
    for (const row of documentedRows()) {
      const expected = row.flags.map((f) => env.get(f) ?? '').filter((e) => e !== '');
      if ([...expected].sort().join() !== [...row.envs].sort().join()) wrong.push(`${row.cell}: expected [${expected.join(', ')}]`);
    }
    assert.deepEqual(wrong, []);
  });
});
