// Readiness polling that fails fast, naming the component and its log, when the
// component's process dies.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Component } from './proc.ts';
import { tail } from './proc.ts';

export class ComponentError extends Error {
  readonly component: string;
  readonly logFile: string;
  constructor(c: Component, what: string) {
    super(`${c.name}: ${what} (log: ${c.logFile})\n--- last lines of ${c.logFile} ---\n${tail(c.logFile)}`);
    this.component = c.name;
    this.logFile = c.logFile;
  }
}

/** Polls `check` until it returns true; throws a ComponentError on exit or timeout. */
export async function waitReady(c: Component, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    if (c.exit !== undefined) throw new ComponentError(c, `exited during start (${c.exit})`);
    try {
      if (await check()) return;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    if (Date.now() > deadline) {
      throw new ComponentError(c, `not ready after ${timeoutMs / 1000}s${last === '' ? '' : `: ${last}`}`);
    }
    await sleep(200);
  }
}
