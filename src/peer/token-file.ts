import { readFile } from 'node:fs/promises';
import type { Clock } from '../kernel/index.ts';

/**
 * The peer token this replica presents (ADR 0037): a projected
 * ServiceAccount token of the peer audience, read from a file the kubelet
 * rewrites as it rotates it. Read again when older than `maxAgeMs`; a read
 * that fails keeps nothing (no token: the ask fails, never falls back to the
 * API token).
 */
export class PeerTokenFile {
  readonly #path: string;
  readonly #clock: Pick<Clock, 'now'>;
  readonly #maxAgeMs: number;
  #token: string | undefined;
  #readAt = Number.NEGATIVE_INFINITY;

  constructor(options: { readonly path: string; readonly clock: Pick<Clock, 'now'>; readonly maxAgeMs?: number }) {
    this.#path = options.path;
    this.#clock = options.clock;
    this.#maxAgeMs = options.maxAgeMs ?? 10_000;
  }

  async token(): Promise<string | undefined> {
    const now = this.#clock.now();
    if (this.#token !== undefined && now - this.#readAt < this.#maxAgeMs) return this.#token;
    try {
      const text = (await readFile(this.#path, 'utf8')).trim();
      this.#token = text === '' ? undefined : text;
    } catch {
      this.#token = undefined;
    }
    this.#readAt = now;
    return this.#token;
  }
}
