import { createServer } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Clock } from '../kernel/index.ts';
import type { KeyPair } from './cert.ts';
import type { InjectionView } from './mutate.ts';
import { reviewPodCreate } from './review.ts';
import type { ReviewResult } from './review.ts';

export const mutatePodsPath = '/mutate-pods';
/** Above the API server's own request limit for one object (3 MiB) plus the review envelope. @default 4 MiB */
export const defaultMaxBodyBytes = 4 * 1024 * 1024;

/**
 * Reviews read or answered at once; more are refused at once with 429 and the connection
 * closed (the API server, with failurePolicy Ignore, creates the pod ungated). With the body
 * limit this bounds what the listener can be made to buffer: 16 × 4 MiB. @default 16
 */
export const defaultMaxInflight = 16;
/** The whole request (headers and body) must arrive within this; the API server sends it at once. */
export const requestTimeoutMs = 10_000;
export const headersTimeoutMs = 5_000;
/** Open connections at most (the API server keeps a small pool; anything beyond is a flood). */
export const maxConnections = 256;

/** One answered review, for metrics and logs. */
export interface WebhookReviewRecord {
  readonly result: ReviewResult | 'too_large' | 'busy';
  readonly gates: readonly string[];
  readonly durationMs: number;
}

export interface WebhookServerOptions {
  readonly host: string;
  /** 0: any free port. */
  readonly port: number;
  readonly tls: KeyPair;
  readonly view: InjectionView;
  readonly clock: Clock;
  /** @default 4 MiB */
  readonly maxBodyBytes?: number;
  /** @default 16 */
  readonly maxInflight?: number;
  readonly onReview?: (record: WebhookReviewRecord) => void;
}

export interface WebhookServer {
  readonly port: number;
  /** Serves `pair` to new connections from now on (rotation without a restart). */
  setCertificate(pair: KeyPair): void;
  close(): Promise<void>;
}

class TooLarge extends Error {}

async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? '0');
  if (declared > limit) throw new TooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new TooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * The admission webhook's HTTPS listener: `POST /mutate-pods` with an
 * AdmissionReview v1, answered from the caches in `view` (no API call per
 * request). Everything else is 404 or 405.
 */
export async function startWebhookServer(o: WebhookServerOptions): Promise<WebhookServer> {
  const limit = o.maxBodyBytes ?? defaultMaxBodyBytes;
  const maxInflight = o.maxInflight ?? defaultMaxInflight;
  let inflight = 0;
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const started = o.clock.now();
    // The API server appends ?timeout=<n>s to the configured URL.
    const path = (req.url ?? '').split('?')[0];
    if (path !== mutatePodsPath) {
      send(res, 404, { message: 'not found' });
      return;
    }
    if (req.method !== 'POST') {
      send(res, 405, { message: 'POST only' });
      return;
    }
    if (inflight >= maxInflight) {
      o.onReview?.({ result: 'busy', gates: [], durationMs: o.clock.now() - started });
      res.setHeader('connection', 'close');
      send(res, 429, { message: `more than ${maxInflight} reviews at once` });
      return;
    }
    inflight++;
    try {
      let body: Buffer;
      try {
        body = await readBody(req, limit);
      } catch (err: unknown) {
        if (!(err instanceof TooLarge)) throw err;
        o.onReview?.({ result: 'too_large', gates: [], durationMs: o.clock.now() - started });
        res.setHeader('connection', 'close');
        send(res, 413, { message: `request body above ${limit} bytes` });
        return;
      }
      const answer = reviewPodCreate(parseJson(body), o.view);
      send(res, 200, answer.body);
      o.onReview?.({ result: answer.result, gates: answer.gates, durationMs: o.clock.now() - started });
    } finally {
      inflight--;
    }
  };
  const server = createServer({ cert: o.tls.cert, key: o.tls.key, minVersion: 'TLSv1.2' }, (req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) send(res, 500, { message: 'internal error' });
      else res.destroy();
    });
  });
  server.headersTimeout = headersTimeoutMs;
  server.requestTimeout = requestTimeoutMs;
  server.maxConnections = maxConnections;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    setCertificate: (pair) => server.setSecureContext({ cert: pair.cert, key: pair.key, minVersion: 'TLSv1.2' }),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
