import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthDecision } from '../observability/index.ts';
import { maxReportBytes, parseBatch } from './report-protocol.ts';
import type { ReportBatch } from './report-protocol.ts';

export interface VantageReportEndpointOptions {
  /** The peer channel's admission (ADR 0037): a peer token of a proven member, before the body is read. */
  readonly authorize: (authorization: string | undefined, remoteAddress: string | undefined) => Promise<AuthDecision>;
  /** Is `from` the live member whose pod has this address? A batch that names another replica is refused (403). */
  readonly isFrom: (from: string, remoteAddress: string | undefined) => boolean;
  /** Takes the verdicts (synchronous: they only update the owner's board). */
  readonly accept: (batch: ReportBatch) => void;
  /** @default 5000 */
  readonly bodyTimeoutMs?: number;
}

/**
 * `POST /v1/vantage-reports` on the peer port (ADR 0058): a pod's other
 * vantages send their verdicts to its owner. Authenticated first (ADR 0037),
 * then the body is read within bounds (512 KiB, 5 s), and the sender must be
 * the member the caller's address belongs to. Replies carry a count or a
 * fixed text, nothing else.
 */
export function vantageReportEndpoint(o: VantageReportEndpointOptions): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      reply(res, 405, { error: 'method not allowed' });
      return;
    }
    const decision = await o.authorize(req.headers.authorization, req.socket.remoteAddress);
    if (decision.status !== 200) {
      if (decision.status === 401) res.setHeader('www-authenticate', 'Bearer realm="outprobe"');
      reply(res, decision.status, { error: decision.message });
      return;
    }
    const body = await readBody(req, o.bodyTimeoutMs ?? 5000);
    if (typeof body === 'number') {
      reply(res, body, { error: body === 413 ? 'request body too large' : body === 408 ? 'request body not received in time' : 'body must be JSON' });
      return;
    }
    const parsed = parseBatch(body.value);
    if (!parsed.ok) {
      reply(res, 400, { error: parsed.error });
      return;
    }
    if (!o.isFrom(parsed.batch.from, req.socket.remoteAddress)) {
      reply(res, 403, { error: 'Forbidden: the sender is not the member at this address' });
      return;
    }
    o.accept(parsed.batch);
    reply(res, 200, { accepted: parsed.batch.reports.length });
  };
}

function readBody(req: IncomingMessage, timeoutMs: number): Promise<{ readonly value: unknown } | number> {
  if (Number(req.headers['content-length'] ?? '0') > maxReportBytes) return Promise.resolve(413);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const end = (v: { readonly value: unknown } | number): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (typeof v === 'number') {
        req.removeAllListeners('data');
        req.resume();
      }
      resolve(v);
    };
    const timer = setTimeout(() => end(408), timeoutMs);
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > maxReportBytes) end(413);
      else chunks.push(c);
    });
    req.once('error', () => end(400));
    req.once('end', () => {
      try {
        end({ value: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown });
      } catch {
        end(400);
      }
    });
  });
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const text = `${JSON.stringify(body)}\n`;
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
  res.end(text);
}
