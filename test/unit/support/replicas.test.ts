// The logs-on-failure harness (test/support/replicas): a file whose test fails keeps its
// directory and prints the decisions about the pods the assertion named; a file whose tests
// all pass leaves nothing. Runs small test files in child processes, as node --test would.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { isDecision, linesThatMatter, subjectsIn } from '../../support/replicas/index.ts';
import type { LoggedLine } from '../../support/replicas/index.ts';

const harness = fileURLToPath(new URL('../../support/replicas/index.ts', import.meta.url));
const root = mkdtempSync(path.join(os.tmpdir(), 'outprobe-harness-test-'));
after(() => { rmSync(root, { recursive: true, force: true }); });

const line = (replica: string, time: string, o: Record<string, unknown>): LoggedLine => ({ replica, time, o: { time, ...o } });

/** A replica: a child printing the given JSON lines (and one stderr line), then exiting. */
function fixture(name: string, body: string): { out: string; status: number | null } {
  const file = path.join(root, `${name}.test.ts`);
  writeFileSync(file, `
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import { logsOnFailure } from ${JSON.stringify(harness)};
const lines = [
  { time: '2000-01-01T00:00:00.000Z', level: 'info', msg: 'transition', pod: 'ns/web-3', kind: 'readiness', from: 'an earlier test', to: 'failure' },
  { time: '2099-01-01T00:00:01.000Z', level: 'info', msg: 'shard membership changed', members: ['r1', 'r2'] },
  { time: '2099-01-01T00:00:02.000Z', level: 'info', msg: 'transition', pod: 'ns/web-3', kind: 'liveness', from: 'success', to: 'failure' },
  { time: '2099-01-01T00:00:02.500Z', level: 'info', msg: 'transition', pod: 'ns/web-30', kind: 'liveness', from: 'success', to: 'failure' },
  { time: '2099-01-01T00:00:03.000Z', level: 'debug', msg: 'gate written', pod: 'ns/web-3', status: 'True' },
  { time: '2099-01-01T00:00:04.000Z', level: 'info', msg: 'Evicted pod ns/web-3: liveness failed', pod: 'ns/web-3', result: 'evicted', policy: 'ns/web' },
  { time: '2099-01-01T00:00:05.000Z', level: 'debug', msg: 'pods reflector: relisted' },
];
describe('suite', () => {
  const logs = logsOnFailure('fixture-${name}', { root: ${JSON.stringify(root)} });
  logs.setup(async () => {
    const child = spawn(process.execPath, ['-e', \`for (const l of \${JSON.stringify(lines)}) console.log(JSON.stringify(l)); console.error('a stderr line');\`], { stdio: ['ignore', 'pipe', 'pipe'] });
    logs.record('r1', child);
    await new Promise((resolve) => child.once('close', resolve));
  });
  ${body}
});
`);
  const env = { ...process.env };
  delete env['NODE_TEST_CONTEXT']; // run as its own test run, not as a file of this one
  const r = spawnSync(process.execPath, ['--test', '--test-reporter=spec', file], { encoding: 'utf8', timeout: 60_000, env });
  return { out: `${r.stdout}${r.stderr}`, status: r.status };
}

const kept = (name: string): string[] => readdirSync(root).filter((d) => d.startsWith(`outprobe-logs-fixture-${name}-`));

void test('a failing assertion: the directory is kept and printed, with the decisions about the pod it names', () => {
  const { out, status } = fixture('fails', `it('evicts once', () => { assert.equal(2, 1, 'web-3 evicted twice'); });`);
  assert.equal(status, 1, out);
  const dirs = kept('fails');
  assert.equal(dirs.length, 1, out);
  const dir = path.join(root, dirs[0]!);
  assert.ok(existsSync(path.join(dir, 'r1.jsonl')));
  assert.match(out, new RegExp(`kept in ${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: replica logs r1\\.jsonl`));
  assert.match(out, /subjects: .*web-3/);
  assert.match(out, /r1 00:00:02\.000 info transition \{"pod":"ns\/web-3"/);
  assert.match(out, /r1 00:00:03\.000 debug gate written \{"pod":"ns\/web-3"/);
  assert.match(out, /r1 00:00:04\.000 info Evicted pod ns\/web-3/);
  assert.match(out, /r1 00:00:01\.000 info shard membership changed/, 'fleet-wide decisions too');
  assert.doesNotMatch(out, /web-30/, 'not another pod whose name starts the same');
  assert.doesNotMatch(out, /relisted/, 'not a line that is no decision');
  assert.doesNotMatch(out, /an earlier test/, 'not a line from before the test started');
  assert.match(readFileSync(path.join(dir, 'r1.jsonl'), 'utf8'), /"level":"stderr","msg":"a stderr line"/, 'stderr kept too');
});

void test('subjects() names what the assertion is about when its message does not', () => {
  const { out } = fixture('subjects', `it('counts', () => { logs.subjects('web-30'); assert.equal(2, 1, 'no other pod evicted'); });`);
  assert.match(out, /r1 00:00:02\.500 info transition \{"pod":"ns\/web-30"/);
  assert.doesNotMatch(out, /gate written/);
});

void test('a failing set-up is reported too', () => {
  const { out } = fixture('setup', `logs.setup(() => { throw new Error('pod web-3 never ready'); }); it('x', () => {});`);
  assert.match(out, /logs of a failed test ── set-up \(before\)/);
  assert.match(out, /r1 00:00:04\.000 info Evicted pod ns\/web-3/);
  assert.match(out, /an earlier test/, 'a set-up failure: every line');
  assert.equal(kept('setup').length, 1);
});

void test('every test passing: nothing printed, nothing left', () => {
  const { out, status } = fixture('passes', `it('ok', () => {});`);
  assert.equal(status, 0, out);
  assert.doesNotMatch(out, /logs of a failed test/);
  assert.deepEqual(kept('passes'), []);
});

// What failed CI once (controller.test.ts, 1 in 3 runs): an in-process controller's logger wrote a
// line after the teardown had removed the directory; the ENOENT became an unhandled rejection
// after the last test, and the file failed with every test passed.
void test('a log line after the teardown is dropped, never a failure of the file', () => {
  const { out, status } = fixture('late', `
  const log = logs.logger('controller-late');
  logs.teardown(() => { setTimeout(() => { log.info('a late line from a timer'); }, 50); });
  it('ok', () => { log.info('in the test'); });
  `);
  assert.equal(status, 0, out);
  assert.doesNotMatch(out, /ENOENT|asynchronous activity/);
  assert.deepEqual(kept('late'), []);
});

void test('decisions, subjects from a message, and the lines that matter', () => {
  assert.ok(isDecision({ msg: 'transition' }));
  assert.ok(isDecision({ msg: 'Evicted pod a/b', pod: 'a/b', result: 'evicted' }));
  assert.ok(isDecision({ msg: '3 of 12 pods fail liveness: remediation halted' }));
  assert.ok(!isDecision({ msg: 'pods reflector: relisted' }));
  const known = new Set(['ns/web-3', 'web-3', 'ns/web', 'web', '0f8c6a4e-1b2c-4d5e-8f9a-0123456789ab']);
  assert.deepEqual(subjectsIn('AssertionError: web-3 evicted once (uid 0f8c6a4e-1b2c-4d5e-8f9a-0123456789ab), web-30 too', known).sort(), ['0f8c6a4e-1b2c-4d5e-8f9a-0123456789ab', 'web-3']);
  const lines = [
    line('r2', '2099-01-01T00:00:02.000Z', { msg: 'transition', pod: 'ns/web-3' }),
    line('r1', '2099-01-01T00:00:01.000Z', { msg: 'gate written', pod: 'ns/web-3' }),
    line('r1', '2099-01-01T00:00:03.000Z', { msg: 'gate written', pod: 'ns/web-4' }),
  ];
  assert.deepEqual(linesThatMatter(lines, new Set(['web-3'])).map((l) => l.replica), ['r1', 'r2']);
});
