/**
 * Creating the benchmark's objects fast (bounded concurrent creates) and
 * watching its pods into a GateTracker (list, then watch; relist when the
 * watch ends).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeClient } from '../../test/support/cluster/index.ts';
import type { GateTracker, PodLike } from './gates.ts';

/** Runs `fn(i)` for i in [0, n) with at most `limit` in flight; rejects on the first error. */
export async function forEachBounded(n: number, limit: number, fn: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < n) await fn(next++);
  };
  await Promise.all(Array.from({ length: Math.min(limit, n) }, worker));
}

/**
 * A request that retries 429/5xx and connection errors a few times (the API
 * server is busy while 20,000 pods arrive); resolves with the response of the
 * first other status, or throws after the last attempt.
 */
export async function callWithRetry(kube: KubeClient, method: string, path: string, body: unknown, contentType?: string): Promise<{ readonly status: number; readonly body: unknown }> {
  let last: unknown;
  for (let attempt = 1; attempt <= 5; attempt++) {
    try {
      const r = await kube.call(method, path, body, contentType);
      if (r.status !== 429 && r.status < 500) return r;
      last = new Error(`${method} ${path}: HTTP ${r.status}: ${JSON.stringify(r.body)}`);
    } catch (err: unknown) {
      last = err;
    }
    await sleep(200 * attempt);
  }
  throw last;
}

/** POST with callWithRetry; 409 counts as done. Resolves with the created object (undefined after a 409). */
export async function createWithRetry(kube: KubeClient, path: string, obj: unknown): Promise<Record<string, unknown> | undefined> {
  const { status, body } = await callWithRetry(kube, 'POST', path, obj);
  if (status === 409) return undefined;
  if (status !== 201 && status !== 200) throw new Error(`POST ${path}: HTTP ${status}: ${JSON.stringify(body)}`);
  return body as Record<string, unknown>;
}

export interface PodWatch {
  readonly tracker: GateTracker;
  stop(): Promise<void>;
}

/** Lists and watches pods with the label selector into a tracker until stopped. */
export function watchPods(kube: KubeClient, selector: string, tracker: GateTracker, log: (m: string) => void): PodWatch {
  const abort = new AbortController();
  const q = `labelSelector=${encodeURIComponent(selector)}`;
  const relist = async (): Promise<string> => {
    let cont = '';
    let rv = '';
    const seen = new Set<string>();
    do {
      const page = await kube.get(`/api/v1/pods?${q}&limit=2000${cont === '' ? '' : `&continue=${encodeURIComponent(cont)}`}`);
      for (const p of (page['items'] as PodLike[] | undefined) ?? []) {
        seen.add(`${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`);
        tracker.apply('MODIFIED', p);
      }
      const meta = page['metadata'] as { continue?: string; resourceVersion?: string } | undefined;
      cont = meta?.continue ?? '';
      rv = meta?.resourceVersion ?? rv;
    } while (cont !== '');
    tracker.retainOnly(seen);
    return rv;
  };
  const stopped = (): boolean => abort.signal.aborted;
  const loop = async (): Promise<void> => {
    while (!stopped()) {
      try {
        const rv = await relist();
        await kube.watch('/api/v1/pods', `${q}&resourceVersion=${rv}&timeoutSeconds=1800`, (e) => {
          if (e.type === 'ERROR') throw new Error(`watch error: ${JSON.stringify(e.object)}`);
          if (e.type !== 'BOOKMARK') tracker.apply(e.type, e.object);
        }, abort.signal);
      } catch (err: unknown) {
        if (!stopped()) log(`pod watch ended (${String(err)}); relisting`);
      }
      if (!stopped()) await sleep(500).catch(() => undefined);
    }
  };
  const running = loop();
  return {
    tracker,
    stop: async () => {
      abort.abort();
      await running;
    },
  };
}
