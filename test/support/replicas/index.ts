// Logs on failure for tests that start outprobe replicas and/or a control plane
// (docs/development.md, "When a test fails"). One harness per test file:
//
//   const logs = logsOnFailure('sharding');          // in the describe (or at top level)
//   logs.setup(async () => { cp = await startControlPlane(); logs.plane(cp); ... });
//   logs.record('r1', child);                         // a replica's stdout/stderr
//   logs.teardown(async () => { ...stop everything... });
//   logs.subjects(pod.name, pod.uid, 'web');          // before an assertion about them
//
// Every replica's stdout and stderr go, line by line as they come, to `<dir>/<id>.jsonl`
// (stderr lines wrapped as {"time","level":"stderr","msg"}). When a test of the file fails
// (its assertion, its timeout, the set-up or the teardown), the harness copies the plane's
// component logs into `<dir>/plane-<n>/`, keeps the directory, prints its path, and prints
// the lines that matter: every replica's decisions (probe transitions, gate writes, second
// opinions, remediation requests and results, guard holds, impairment, membership changes)
// about the pods and policies the failing assertion named: those set with subjects(), and
// any pod name, namespace/name, UID or policy of the replicas' logs that the failure message
// mentions. When every test passed, the directory is removed. No environment variable.
import type { ChildProcess } from 'node:child_process';
import { closeSync, cpSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, afterEach, before, beforeEach } from 'node:test';
import { createLogger } from '../../../src/observability/index.ts';
import type { Logger } from '../../../src/observability/index.ts';

/** What a plane must expose for its logs to be kept (ControlPlane does). */
export interface PlaneLogs {
  readonly logDir: string;
  stop(opts?: { keepDir?: boolean }): Promise<void>;
}

/** One parsed log line, with the replica it came from. */
export interface LoggedLine {
  readonly replica: string;
  readonly time: string;
  readonly o: Record<string, unknown>;
}

/**
 * Log messages that are decisions. Messages the product writes with a variable text
 * (panic, halt, remediation results) are recognised by their fields or words instead.
 */
const DECISION_MSGS = new Set([
  'transition', 'gate written', 'gate write failed, will retry', 'readiness gate changed by another writer: writing it back',
  'second opinion agreed: acting on the failure', 'second opinion disagreed: nothing written, the failure is held',
  'second opinion not available: holding the action, asking again',
  'replica impaired: writing no False gate, remediating nothing, giving up the shard lease', 'replica recovered: rejoining the shard',
  'shard membership changed', 'standing down: giving up every pod and the shard lease', 'rejoining the shard',
  'probe failure voided: this process stalled during the attempt; retried, not counted',
  'pod readiness diverged: the node and outprobe disagree', 'pod no longer diverged',
]);
const DECISION_WORDS = /\b(evict|delet|remediat|halt|panic|fail(ing|s)? open|guard|held|hold|second opinion|impair|membership|handover|budget|cap)\w*/i;
/** Fleet-wide decisions: shown whatever the subjects (they are few and say who owned what). */
const FLEET_MSGS = /^(shard membership changed|replica impaired|replica recovered|standing down|rejoining the shard)/;

/** A field as text: strings as they are, anything else as JSON. */
const str = (v: unknown): string => (typeof v === 'string' ? v : v === undefined ? '' : JSON.stringify(v));

export function isDecision(o: Record<string, unknown>): boolean {
  const msg = str(o['msg']);
  if (DECISION_MSGS.has(msg)) return true;
  if (o['result'] !== undefined && o['pod'] !== undefined) return true; // remediation results, second-opinion answers
  if (o['level'] === 'stderr') return false;
  return DECISION_WORDS.test(msg);
}

const UID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g;
const NAMEISH = /[a-z0-9](?:[-a-z0-9.]*[a-z0-9])?(?:\/[a-z0-9](?:[-a-z0-9.]*[a-z0-9])?)?/g;

/**
 * The strings a line is about: its pod (namespace/name and name) and any UID in it; a line
 * about no pod is about its policy (a halt, a panic), so a policy named by the failure brings
 * its policy-wide decisions, not every probe of its pods.
 */
function aboutOf(o: Record<string, unknown>): string[] {
  const out: string[] = [];
  const key = typeof o['pod'] === 'string' ? 'pod' : 'policy';
  const v = o[key];
  if (typeof v === 'string') {
    out.push(v);
    const slash = v.indexOf('/');
    if (slash >= 0) out.push(v.slice(slash + 1));
  }
  for (const u of JSON.stringify(o).match(UID) ?? []) out.push(u);
  return out;
}

/** Every pod and policy the lines speak of (what a failure message may name). */
function knownOf(lines: readonly LoggedLine[]): Set<string> {
  const out = new Set<string>();
  for (const l of lines) {
    for (const k of ['pod', 'policy']) {
      const v = l.o[k];
      if (typeof v !== 'string') continue;
      out.add(v);
      if (v.includes('/')) out.add(v.slice(v.indexOf('/') + 1));
    }
    for (const u of aboutOf(l.o)) out.add(u);
  }
  return out;
}

/**
 * The subjects a failure message names: the tokens of the message (UIDs, names, namespace/name)
 * that are pods or policies some replica's log speaks of.
 */
export function subjectsIn(message: string, known: ReadonlySet<string>): string[] {
  const tokens = new Set([...(message.match(UID) ?? []), ...(message.toLowerCase().match(NAMEISH) ?? [])]);
  return [...tokens].filter((t) => known.has(t));
}

/** The lines about any of `subjects` that are decisions, plus the fleet-wide ones, in time order. */
export function linesThatMatter(lines: readonly LoggedLine[], subjects: ReadonlySet<string>): LoggedLine[] {
  return lines
    .filter((l) => isDecision(l.o) && (FLEET_MSGS.test(str(l.o['msg'])) || aboutOf(l.o).some((a) => subjects.has(a)) || (l.o['pod'] === undefined && mentions(l.o, subjects))))
    .sort((a, b) => a.time.localeCompare(b.time));
}

/** A subject named inside the line's message or fields (a halt message naming the policy, an answer naming a pod). */
function mentions(o: Record<string, unknown>, subjects: ReadonlySet<string>): boolean {
  if (subjects.size === 0) return false;
  const text = JSON.stringify(o);
  for (const s of subjects) {
    if (s.length < 3) continue;
    const at = text.indexOf(s);
    if (at < 0) continue;
    const before = text[at - 1] ?? '"';
    const after = text[at + s.length] ?? '"';
    if (!/[\w-]/.test(before) && !/[\w-]/.test(after)) return true;
  }
  return false;
}

/** One line of the printout: replica, time of day, level, message, the other fields. */
export function formatLine(l: LoggedLine): string {
  const rest = Object.fromEntries(Object.entries(l.o).filter(([k]) => k !== 'time' && k !== 'level' && k !== 'msg'));
  const fields = Object.keys(rest).length === 0 ? '' : ` ${JSON.stringify(rest)}`;
  return `${l.replica} ${l.time.slice(11, 23)} ${str(l.o['level'])} ${str(l.o['msg'])}${fields}`;
}

/** Reads a replica file back (one JSON object per line; anything else kept as a message). */
export function readLines(file: string, replica: string): LoggedLine[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const out: LoggedLine[] = [];
  for (const raw of text.split('\n')) {
    if (raw === '') continue;
    let o: Record<string, unknown>;
    try {
      const parsed = JSON.parse(raw) as unknown;
      o = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : { msg: raw };
    } catch {
      o = { msg: raw };
    }
    out.push({ replica, time: typeof o['time'] === 'string' ? o['time'] : '', o });
  }
  return out;
}

export interface LogsOnFailureOptions {
  /** Parent of the per-file directory. @default os.tmpdir() */
  readonly root?: string;
  /** At most this many lines that matter are printed per failure (the last ones). @default 150 */
  readonly maxLines?: number;
  /** Where the printout goes. @default process.stderr */
  readonly out?: (text: string) => void;
}

interface Failure {
  readonly test: string;
  readonly error: unknown;
  /** When the failing test started (ISO time): earlier lines belong to earlier tests. Undefined for set-up and teardown. */
  readonly since?: string;
}

export interface LogsOnFailure {
  /** The per-file directory (kept when a test failed, removed otherwise). */
  readonly dir: string;
  /** Names the pods (names, namespace/names, UIDs) and policies the next assertions are about; replaces the previous ones. */
  readonly subjects: (...subjects: string[]) => void;
  /** Records a replica's stdout and stderr as `<dir>/<id>.jsonl` (appended to when the same id starts again). */
  readonly record: (id: string, child: ChildProcess) => void;
  /** A product Logger (debug level) writing to `<dir>/<id>.jsonl`, for a controller run in the test's process. */
  readonly logger: (id: string) => Logger;
  /**
   * The plane whose component logs are copied into the directory on a failure, or when it
   * stops (its stop() removes them; a test that stops it in a `finally` fails only after).
   */
  readonly plane: <P extends PlaneLogs>(cp: P) => P;
  /** Another file or directory to copy into the directory on a failure (a podserve log, a kubeconfig). */
  readonly keep: (name: string, file: string) => void;
  /** A `before` hook whose failure is reported like a test's. */
  setup(fn: () => Promise<void> | void): void;
  /** Clean-up run by the harness's `after` hook, in order, each whatever the others did; then the directory is kept or removed. */
  teardown(fn: () => Promise<void> | void): void;
  /** Every line recorded so far, all replicas (read back from the files). */
  readonly lines: () => LoggedLine[];
  /** Reports a failure now (used by the hooks; a test may call it for a failure it catches). */
  readonly failed: (test: string, error: unknown) => void;
}

const safe = (s: string): string => s.replace(/[^A-Za-z0-9_.-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60) || 'test';

/**
 * Creates the harness and registers its node:test hooks (beforeEach/afterEach/after) in the
 * current suite (or at the top level of the file). `name` names the directory.
 */
export function logsOnFailure(name: string, o: LogsOnFailureOptions = {}): LogsOnFailure {
  const root = o.root ?? os.tmpdir();
  const dir = mkdtempSync(path.join(root, `outprobe-logs-${safe(name)}-`));
  const out = o.out ?? ((t: string): void => { process.stderr.write(t); });
  const maxLines = o.maxLines ?? 150;
  const fds = new Map<string, number>();
  const planes: PlaneLogs[] = [];
  const extra = new Map<string, string>();
  const cleanups: (() => Promise<void> | void)[] = [];
  const failures: Failure[] = [];
  let subjects: string[] = [];
  let running: { readonly name: string; readonly since: string } | undefined;
  let snapshots = 0;

  const fileOf = (id: string): string => path.join(dir, `${safe(id)}.jsonl`);
  // Set by the teardown: a line that comes later (a child's last output, a timer of an
  // in-process controller) has nowhere to go and is dropped, never an error of the test.
  let closed = false;
  const write = (id: string, text: string): void => {
    if (closed) return;
    try {
      let fd = fds.get(id);
      if (fd === undefined) {
        fd = openSync(fileOf(id), 'a');
        fds.set(id, fd);
      }
      writeSync(fd, text);
    } catch { /* the directory is gone: nothing left to keep */ }
  };
  const note = (id: string, msg: string, fields: Record<string, unknown> = {}): void => {
    write(id, `${JSON.stringify({ time: new Date().toISOString(), level: 'harness', msg, ...fields })}\n`);
  };
  const lineSink = (id: string, stream: NodeJS.ReadableStream | null, wrap: boolean): void => {
    if (stream === null) return;
    let rest = '';
    stream.on('data', (d: Buffer | string) => {
      const text = rest + d.toString();
      const parts = text.split('\n');
      rest = parts.pop() ?? '';
      for (const line of parts) write(id, wrap ? `${JSON.stringify({ time: new Date().toISOString(), level: 'stderr', msg: line })}\n` : `${line}\n`);
    });
    stream.on('end', () => {
      if (rest !== '') write(id, wrap ? `${JSON.stringify({ time: new Date().toISOString(), level: 'stderr', msg: rest })}\n` : `${rest}\n`);
      rest = '';
    });
  };

  const allLines = (): LoggedLine[] => {
    if (!existsSync(dir)) return [];
    return readdirSync(dir).filter((f) => f.endsWith('.jsonl')).flatMap((f) => readLines(path.join(dir, f), f.slice(0, -'.jsonl'.length)));
  };

  const copyPlane = (cp: PlaneLogs): string | undefined => {
    if (!existsSync(cp.logDir)) return undefined;
    const to = path.join(dir, `plane-${++snapshots}`);
    try {
      cpSync(cp.logDir, to, { recursive: true });
      return path.basename(to);
    } catch {
      return undefined; // the plane is being removed
    }
  };
  const stoppedPlanes: string[] = [];
  const snapshot = (): string[] => {
    const kept: string[] = [...stoppedPlanes];
    for (const cp of planes) {
      const to = copyPlane(cp);
      if (to !== undefined) kept.push(to);
    }
    for (const [n, file] of extra) {
      if (!existsSync(file)) continue;
      try {
        cpSync(file, path.join(dir, safe(n)), { recursive: true });
        kept.push(safe(n));
      } catch { /* gone meanwhile */ }
    }
    return kept;
  };

  const report = (f: Failure): void => {
    const copied = snapshot();
    const lines = allLines();
    const known = knownOf(lines);
    const cause = f.error instanceof Error ? f.error.cause : undefined;
    const message = f.error instanceof Error ? `${f.error.message}\n${cause instanceof Error ? cause.message : str(cause)}` : str(f.error);
    const named = new Set([...subjects, ...subjectsIn(message, known)]);
    const matter = linesThatMatter(f.since === undefined ? lines : lines.filter((l) => l.time >= f.since!), named);
    const shown = matter.slice(-maxLines);
    const replicas = [...new Set(lines.map((l) => l.replica))];
    const firstLine = (f.error instanceof Error ? f.error.message : String(f.error)).split('\n')[0] ?? '';
    const text = [
      `── logs of a failed test ── ${f.test}`,
      `failure: ${firstLine.slice(0, 300)}`,
      `kept in ${dir}: ${replicas.length === 0 ? 'no replica logs' : `replica logs ${replicas.map((r) => `${r}.jsonl`).join(' ')}`}${copied.length === 0 ? '' : `; ${copied.join(' ')}`}`,
      `subjects: ${named.size === 0 ? '(none named: set them with subjects() before asserting; fleet-wide decisions only)' : [...named].join(' ')}`,
      `the lines that matter (decisions about the subjects and fleet-wide ones${f.since === undefined ? '' : ` since the test started at ${f.since.slice(11, 23)}`}, by time${matter.length > shown.length ? `; the last ${shown.length} of ${matter.length}` : ''}):`,
      ...(shown.length === 0 ? ['(none)'] : shown.map(formatLine)),
      '── end of the logs of the failed test',
    ];
    out(`${text.map((l) => `# ${l}`).join('\n')}\n`);
  };

  const failed = (test: string, error: unknown, since?: string): void => {
    const f: Failure = since === undefined ? { test, error } : { test, error, since };
    failures.push(f);
    try {
      report(f);
    } catch (err) {
      out(`# logs of a failed test: could not print them (${String(err)}); kept in ${dir}\n`);
    }
  };

  beforeEach((t) => {
    running = { name: t.fullName, since: new Date().toISOString() };
  });
  afterEach((t) => {
    const since = running?.since;
    running = undefined;
    const ctx = t as unknown as { passed?: boolean; error?: unknown };
    if (ctx.passed === false) failed(t.fullName, ctx.error ?? new Error('failed'), since);
  });
  after(async () => {
    // A test still running here was cancelled (its suite timed out): a failure too.
    if (running !== undefined) failed(running.name, new Error('did not finish (cancelled: its suite timed out or failed)'), running.since);
    let teardownError: Error | undefined;
    for (const fn of cleanups) {
      try {
        await fn();
      } catch (err) {
        teardownError ??= err instanceof Error ? err : new Error(str(err));
        failed('teardown', err);
      }
    }
    closed = true;
    for (const fd of fds.values()) closeSync(fd);
    fds.clear();
    if (failures.length === 0) rmSync(dir, { recursive: true, force: true });
    else out(`# logs of ${failures.length} failure${failures.length === 1 ? '' : 's'} kept in ${dir}\n`);
    if (teardownError !== undefined) throw teardownError;
  });

  return {
    dir,
    subjects: (...s) => { subjects = s; },
    record: (id, child) => {
      note(id, 'harness: replica started', { pid: child.pid ?? null });
      lineSink(id, child.stdout, false);
      lineSink(id, child.stderr, true);
      child.once('exit', (code, signal) => { note(id, 'harness: replica exited', { code, signal }); });
    },
    logger: (id) => {
      const stream = new Writable({
        write(chunk: Buffer | string, _enc, cb): void {
          write(id, chunk.toString());
          cb();
        },
      });
      return createLogger({ level: 'debug', stream });
    },
    plane: (cp) => {
      planes.push(cp);
      const stop = cp.stop.bind(cp);
      cp.stop = async (opts) => {
        const i = planes.indexOf(cp);
        if (i >= 0) {
          planes.splice(i, 1);
          const to = copyPlane(cp);
          if (to !== undefined) stoppedPlanes.push(`${to} (as it stopped)`);
        }
        await stop(opts);
      };
      return cp;
    },
    keep: (n, file) => { extra.set(n, file); },
    setup: (fn) => {
      before(async () => {
        try {
          await fn();
        } catch (err) {
          failed('set-up (before)', err);
          throw err;
        }
      });
    },
    teardown: (fn) => { cleanups.push(fn); },
    lines: allLines,
    failed,
  };
}
