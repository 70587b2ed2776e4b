import type { Logger } from './logger.ts';

/** The parts of a stop still under way, by name: what a stop that overran its time is waiting for. */
export class ShutdownStages {
  readonly #pending = new Set<string>();

  track<T>(name: string, work: Promise<T>): Promise<T> {
    this.#pending.add(name);
    return work.finally(() => this.#pending.delete(name));
  }

  get pending(): string[] {
    return [...this.#pending];
  }
}

/**
 * Bounds a stop: a quarter of the way in, says what it still waits for; at
 * the timeout, says it again as an error and exits 1 (the shard Lease, the
 * first thing released, is bounded on its own at 5 s and otherwise expires).
 * The timers never keep a finished process alive.
 */
export function watchShutdown(stages: ShutdownStages, timeoutMs: number, log: Logger): void {
  setTimeout(() => {
    if (stages.pending.length > 0) log.warn('shutdown is taking long', { waitingFor: stages.pending, afterMs: Math.round(timeoutMs / 4) });
  }, timeoutMs / 4).unref();
  setTimeout(() => {
    log.error('shutdown did not finish in time: exiting', { waitingFor: stages.pending, timeoutMs });
    process.exit(1);
  }, timeoutMs).unref();
}
