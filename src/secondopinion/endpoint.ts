import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthDecision } from '../observability/index.ts';
import { maxRequestBytes, parseRequest } from './protocol.ts';
import type { SecondOpinionAnswer, SecondOpinionRequest } from './protocol.ts';

export interface SecondOpinionEndpointOptions {
  /**
   * Decides on the `Authorization` header and the caller's address (a peer
   * token of a proven member, ADR 0037), before anything else: known peers
   * are answered from a cache, strangers are shed first.
   */
  readonly authorize: (authorization: string | undefined, remoteAddress: string | undefined) => Promise<AuthDecision>;
  /** Probes the target once from this replica. Never throws for a probe result. */
  readonly answer: (request: SecondOpinionRequest, signal: AbortSignal) => Promise<SecondOpinionAnswer>;
  /** Authorized requests answered at once (probes run for peers); more answer 429. Unauthenticated requests never count. @default 16 */
  readonly maxInFlight?: number;
  /** Reading the body may take this long; then 408. @default 5000 */
  readonly bodyTimeoutMs?: number;
  /** The whole answer may take this long (the probe's own timeout bounds it first). @default 65000 */
  readonly answerTimeoutMs?: number;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

class HttpError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

/**
 * `POST /v1/second-opinion` (ADR 0018, on the peer port of ADR 0037).
 * Authenticated first, before the body is read and before any bound of its
 * own; then bounded: a fixed number of answers at once (429 beyond), a 4 KiB
 * body read within a timeout, an answer within a timeout. Replies carry only the
 * answer or a fixed text: no header, token or stack ever goes back or into a
 * log from here.
 */
export function secondOpinionEndpoint(o: SecondOpinionEndpointOptions): Handler {
  let inFlight = 0;
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
    if (inFlight >= (o.maxInFlight ?? 16)) {
      reply(res, 429, { error: 'too many second-opinion requests in flight' });
      return;
    }
    inFlight++;
    try {
      const parsed = parseRequest(await readJson(req, o.bodyTimeoutMs ?? 5000));
      if (!parsed.ok) throw new HttpError(400, parsed.error);
      const closed = new AbortController();
      res.once('close', () => closed.abort());
      const answer = await o.answer(parsed.request, AbortSignal.any([closed.signal, AbortSignal.timeout(o.answerTimeoutMs ?? 65_000)]));
      reply(res, 200, answer);
    } catch (err: unknown) {
      if (err instanceof HttpError) reply(res, err.status, { error: err.message });
      else reply(res, 500, { error: 'internal error' });
    } finally {
      inFlight--;
    }
  };
}

function readJson(req: IncomingMessage, timeoutMs: number): Promise<unknown> {
  const declared = Number(req.headers['content-length'] ?? '0');
  if (declared > maxRequestBytes) return Promise.reject(new HttpError(413, 'request body too large'));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const timer = setTimeout(() => fail(new HttpError(408, 'request body not received in time')), timeoutMs);
    const fail = (err: HttpError): void => {
      clearTimeout(timer);
      req.removeAllListeners('data');
      req.resume();
      reject(err);
    };
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > maxRequestBytes) fail(new HttpError(413, 'request body too large'));
      else chunks.push(c);
    });
    req.once('error', () => fail(new HttpError(400, 'request body unreadable')));
    req.once('end', () => {
      clearTimeout(timer);
      if (size > maxRequestBytes) return;
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown);
      } catch {
        reject(new HttpError(400, 'body must be JSON'));
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
