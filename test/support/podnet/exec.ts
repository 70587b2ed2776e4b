// Runs `ip` and `nft` with their input on stdin (`ip -batch -`, `nft -f -`), so one
// spawn carries many commands. At most MAX_SPAWNS run at once: 900 concurrent attaches
// must not fork 900 processes together. The sync variant serves exit hooks.
import { spawn, spawnSync } from 'node:child_process';

const MAX_SPAWNS = 8;
let running = 0;
const waiting: (() => void)[] = [];

async function slot(): Promise<void> {
  if (running < MAX_SPAWNS) { running++; return; }
  await new Promise<void>((resolve) => waiting.push(resolve));
}

function release(): void {
  const next = waiting.shift();
  if (next === undefined) running--;
  else next();
}

export class CommandError extends Error {
  readonly code = 'OUTPROBE_PODNET_COMMAND';
  readonly stderr: string;
  constructor(cmd: string, status: string, stderr: string, input: string) {
    super(`${cmd} failed (${status}): ${stderr.trim().split('\n').slice(0, 4).join(' | ')}${input === '' ? '' : `\ninput:\n${input.slice(0, 600)}`}`);
    this.stderr = stderr;
  }
}

function runOnce(cmd: string, args: readonly string[], input: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => { out += d; });
    child.stderr.setEncoding('utf8').on('data', (d: string) => { err += d; });
    child.once('error', reject);
    child.once('close', (code, sig) => {
      if (code === 0) resolve(out);
      else reject(new CommandError(`${cmd} ${args.join(' ')}`, sig ?? `exit ${code ?? '?'}`, err, input));
    });
    child.stdin.on('error', () => { /* the close handler reports the failure */ });
    child.stdin.end(input);
  });
}

/** Runs a command (input on stdin), resolving with stdout; rejects with CommandError. */
export async function run(cmd: string, args: readonly string[], input = ''): Promise<string> {
  await slot();
  try {
    return await runOnce(cmd, args, input);
  } finally {
    release();
  }
}

/** `ip [-n ns] [-force] -batch -`; with `force`, failing lines are skipped (clean-up). */
export async function ipBatch(lines: readonly string[], o: { netns?: string; force?: boolean } = {}): Promise<void> {
  if (lines.length === 0) return;
  await run('ip', ipArgs(o), `${lines.join('\n')}\n`).catch((err: unknown) => {
    if (o.force !== true) throw err;
  });
}

function ipArgs(o: { netns?: string; force?: boolean }): string[] {
  return [...(o.netns === undefined ? [] : ['-n', o.netns]), ...(o.force === true ? ['-force'] : []), '-batch', '-'];
}

/** `nft -f -` in the root namespace or (through `ip netns exec`) in `netns`. */
export async function nft(text: string, netns?: string): Promise<void> {
  if (netns === undefined) await run('nft', ['-f', '-'], text);
  else await run('ip', ['netns', 'exec', netns, 'nft', '-f', '-'], text);
}

/** Synchronous `ip -force -batch -` for exit hooks; never throws. */
export function ipBatchSync(lines: readonly string[], netns?: string): void {
  if (lines.length === 0) return;
  spawnSync('ip', ipArgs({ force: true, ...(netns === undefined ? {} : { netns }) }), { input: `${lines.join('\n')}\n`, stdio: ['pipe', 'ignore', 'ignore'] });
}

/** Synchronous command returning stdout ('' on any failure). */
export function runSync(cmd: string, args: readonly string[], input = ''): string {
  const r = spawnSync(cmd, args, { input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'ignore'] });
  return r.status === 0 ? r.stdout : '';
}
