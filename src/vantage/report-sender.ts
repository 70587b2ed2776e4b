import { batchBody, maxReportsPerRequest, vantageReportPath } from './report-protocol.ts';
import type { VantageReport } from './report-protocol.ts';

/** POSTs one batch to a peer (its `host:port`); resolves true when it took it. Never throws. */
export type SendBatch = (address: string, body: string) => Promise<boolean>;

/**
 * Sends with this replica's *peer* token (ADR 0037, never its API token),
 * read on every send; no redirect is followed.
 */
export function httpSendBatch(token: () => string | undefined | Promise<string | undefined>, timeoutMs = 5000): SendBatch {
  return async (address, body) => {
    const bearer = await token();
    if (bearer === undefined || bearer === '') return false;
    try {
      const res = await fetch(`http://${address}${vantageReportPath}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` },
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(timeoutMs),
      });
      await res.body?.cancel();
      return res.status === 200;
    } catch {
      return false;
    }
  };
}

export interface ReportSenderOptions {
  readonly identity: string;
  /** The owner's peer address (`host:port`), if it is a live member that publishes one. */
  readonly addressOf: (owner: string) => string | undefined;
  readonly send: SendBatch;
  /** A batch was sent or failed (metrics, logs). */
  readonly onSent?: (owner: string, count: number, ok: boolean) => void;
}

/**
 * The reports of this replica's vantages, queued per owner (the latest
 * verdict per policy and pod wins) and sent by `flush()`, at most
 * `maxReportsPerRequest` per request and one request per owner at a time. A
 * batch that fails is queued again under anything newer (the next flush
 * retries it); an owner that is gone drops its queue.
 */
export class ReportSender {
  readonly #o: ReportSenderOptions;
  readonly #queues = new Map<string, Map<string, VantageReport>>();
  readonly #busy = new Set<string>();

  constructor(options: ReportSenderOptions) {
    this.#o = options;
  }

  queue(owner: string, report: VantageReport): void {
    let q = this.#queues.get(owner);
    if (q === undefined) this.#queues.set(owner, (q = new Map<string, VantageReport>()));
    q.set(`${report.policy}/${report.podUid}`, report);
  }

  /** Reports waiting, over every owner. */
  get pending(): number {
    let n = 0;
    for (const q of this.#queues.values()) n += q.size;
    return n;
  }

  /** Starts a send to every owner with reports waiting and none in flight; resolves when those end. */
  async flush(): Promise<void> {
    const sends: Promise<void>[] = [];
    for (const [owner, q] of this.#queues) {
      if (q.size === 0 || this.#busy.has(owner)) continue;
      const address = this.#o.addressOf(owner);
      if (address === undefined) {
        this.#queues.delete(owner);
        continue;
      }
      const batch = [...q.values()].slice(0, maxReportsPerRequest);
      for (const r of batch) q.delete(`${r.policy}/${r.podUid}`);
      this.#busy.add(owner);
      sends.push(this.#send(owner, address, batch));
    }
    await Promise.all(sends);
  }

  async #send(owner: string, address: string, batch: readonly VantageReport[]): Promise<void> {
    const ok = await this.#o.send(address, batchBody({ from: this.#o.identity, reports: batch }));
    this.#busy.delete(owner);
    this.#o.onSent?.(owner, batch.length, ok);
    if (ok) return;
    const q = this.#queues.get(owner) ?? new Map<string, VantageReport>();
    this.#queues.set(owner, q);
    for (const r of batch) {
      const key = `${r.policy}/${r.podUid}`;
      if (!q.has(key)) q.set(key, r);
    }
  }
}
