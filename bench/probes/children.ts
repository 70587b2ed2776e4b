/**
 * Child processes of the benchmark: spawned, tracked and always cleaned up
 * (normal exit, error, SIGINT/SIGTERM/SIGHUP). Node children also exit by
 * themselves when their stdin closes (see `exitWhenParentGoes`), so a driver
 * killed with SIGKILL does not leave them behind.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess, SpawnOptions } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';

const live = new Set<ChildProcess>();
let hooked = false;
let interruptedBy: NodeJS.Signals | undefined;

/** The signal that stopped the run, if one did (errors that follow it are its consequences). */
export function interrupted(): NodeJS.Signals | undefined {
  return interruptedBy;
}

/** Kills every child still running (SIGTERM, then SIGKILL for stragglers). */
export function killAll(): void {
  for (const child of live) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  }
  const stragglers = [...live];
  if (stragglers.length === 0) return;
  setTimeout(() => {
    for (const child of stragglers) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  }, 2000).unref();
}

function hookExit(): void {
  if (hooked) return;
  hooked = true;
  process.on('exit', () => {
    // Synchronous only: SIGKILL what is left.
    for (const child of live) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      interruptedBy = signal;
      process.stderr.write(`\n${signal}: stopping child processes\n`);
      killAll();
      process.exitCode = 130;
      setTimeout(() => process.exit(130), 300).unref();
    });
  }
}

/** Spawns and tracks a child; stderr is passed through with a prefix. */
export function track(command: string, args: readonly string[], label: string, options: SpawnOptions = {}): ChildProcess {
  hookExit();
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], ...options });
  live.add(child);
  child.once('exit', () => live.delete(child));
  child.once('error', () => live.delete(child));
  if (child.stderr !== null) {
    const lines = createInterface({ input: child.stderr });
    lines.on('line', (line) => process.stderr.write(`  [${label}] ${line}\n`));
  }
  return child;
}

/**
 * Spawns `bench/probes/<script>` with the running Node (process.execPath), config in an env var.
 * `BENCH_NODE_ARGS` (space-separated) adds Node flags, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`.
 */
export function spawnNode(script: string, config: unknown, label: string): ChildProcess {
  const nodeArgs = (process.env['BENCH_NODE_ARGS'] ?? '').split(' ').filter((arg) => arg !== '');
  return track(process.execPath, [...nodeArgs, new URL(script, import.meta.url).pathname], label, {
    env: { ...process.env, OUTPROBE_BENCH_CONFIG: JSON.stringify(config) },
  });
}

/** Resolves with the first stdout line that parses as a JSON object; rejects if the child exits first. */
export async function firstJsonLine<T>(child: ChildProcess, timeoutMs: number): Promise<T> {
  if (child.stdout === null) throw new Error('child has no stdout');
  const lines = createInterface({ input: child.stdout });
  const timeout = AbortSignal.timeout(timeoutMs);
  // 'close' (not 'exit') fires after stdout is drained; one more turn lets the last line be read.
  const exited = once(child, 'close', { signal: timeout }).then(async ([code, signal]) => {
    await new Promise((resolve) => setImmediate(resolve));
    throw new Error(`child exited before reporting (code ${String(code)}, signal ${String(signal)})`);
  });
  const reported = (async (): Promise<T> => {
    for await (const line of lines) {
      if (line.startsWith('{')) return JSON.parse(line) as T;
    }
    throw new Error('child closed stdout before reporting');
  })();
  try {
    return await Promise.race([reported, exited]);
  } finally {
    lines.close();
    exited.catch(() => undefined);
  }
}

/** Runs a Node child to completion and returns its last JSON stdout line. */
export async function runNodeForJson<T>(script: string, config: unknown, label: string, timeoutMs: number): Promise<T> {
  const child = spawnNode(script, config, label);
  try {
    return await firstJsonLine<T>(child, timeoutMs);
  } finally {
    // The child exits by itself after its report (writing a --cpu-prof profile
    // on the way out); a straggler is stopped.
    if (child.exitCode === null && child.signalCode === null) {
      await Promise.race([once(child, 'exit'), new Promise((resolve) => setTimeout(resolve, 5000).unref())]);
    }
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  }
}

/** In a child: exit when the parent goes away (its end of our stdin closes). */
export function exitWhenParentGoes(): void {
  process.stdin.on('end', () => process.exit(0));
  process.stdin.on('error', () => process.exit(0));
  process.stdin.resume();
}

/** In a child: the JSON config the parent put in OUTPROBE_BENCH_CONFIG. */
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- the caller names the shape it was sent
export function childConfig<T>(): T {
  const raw = process.env['OUTPROBE_BENCH_CONFIG'];
  if (raw === undefined) throw new Error('OUTPROBE_BENCH_CONFIG is not set: this script is started by bench/probes/run.ts');
  return JSON.parse(raw) as T;
}
