import type { Dispatcher } from 'undici';
import { joinHostPort } from '../request.ts';
import type { ProbeUrl } from './url.ts';

/** What one request/response hop produced. */
export type HopResult =
  | {
      readonly kind: 'response';
      readonly statusCode: number;
      readonly location: string | undefined;
      /** At most `bodyLimit` bytes; empty when the body was skipped. */
      readonly body: Buffer;
    }
  | {
      readonly kind: 'error';
      /** Whether the response head had arrived when the error happened. */
      readonly phase: 'headers' | 'body';
      /** True when the connection (TCP and TLS) was still being set up; undefined when the dispatcher does not say. */
      readonly connecting?: boolean | undefined;
      readonly error: unknown;
    };

export interface HopOptions {
  readonly url: ProbeUrl;
  readonly host: string;
  /** The lines after Host, in wire order (byte strings). */
  readonly headers: readonly (readonly [string, string])[];
  readonly signal: AbortSignal;
  readonly bodyLimit: number;
  /** Decides at head time whether the body is read (false: the hop ends at once). */
  readonly wantBody: (statusCode: number, location: string | undefined) => boolean;
}

class BodyLimitReached extends Error {}

/** The ProbeDispatcher's request context says whether the connection is still being set up. */
function isConnecting(context: unknown): boolean | undefined {
  if (typeof context !== 'object' || context === null || !('connecting' in context)) return undefined;
  return context.connecting === true;
}

/**
 * One GET through a Dispatcher with the undici v2 handler API. Reads at most
 * `bodyLimit` bytes (hitting the cap is not an error: the rest is dropped and
 * the connection closed, like the kubelet's ReadAtMost), and settles exactly
 * once whatever the peer does.
 */
export function exchange(dispatcher: Dispatcher, options: HopOptions): Promise<HopResult> {
  return new Promise<HopResult>((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let statusCode = 0;
    let location: string | undefined;
    let settled = false;
    let controller: Dispatcher.DispatchController | undefined;
    let context: unknown;
    const settle = (result: HopResult): void => {
      if (settled) return;
      settled = true;
      options.signal.removeEventListener('abort', onAbort);
      resolve(result);
    };
    const respond = (): void => {
      settle({ kind: 'response', statusCode, location, body: size === 0 ? Buffer.alloc(0) : Buffer.concat(chunks, size) });
    };
    const onAbort = (): void => {
      // Settle first: aborting makes the dispatcher report an error of its own.
      settle({ kind: 'error', phase: statusCode === 0 ? 'headers' : 'body', connecting: isConnecting(context), error: options.signal.reason });
      controller?.abort(options.signal.reason instanceof Error ? options.signal.reason : new Error('aborted'));
    };
    if (options.signal.aborted) {
      onAbort();
      return;
    }
    options.signal.addEventListener('abort', onAbort, { once: true });
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(ctl, ctx) {
        controller = ctl;
        context = ctx;
      },
      onResponseStart(ctl, code, headers) {
        if (code >= 100 && code < 200 && code !== 101) return; // an interim 1xx: the final response follows
        statusCode = code;
        const loc = headers['location'];
        location = Array.isArray(loc) ? loc[0] : loc;
        if (!options.wantBody(code, location)) {
          respond();
          ctl.abort(new BodyLimitReached('body not needed'));
        }
      },
      onResponseData(ctl, chunk) {
        const room = options.bodyLimit - size;
        const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
        chunks.push(part);
        size += part.length;
        if (size >= options.bodyLimit) {
          respond();
          ctl.abort(new BodyLimitReached('body limit reached'));
        }
      },
      onResponseEnd() {
        respond();
      },
      onResponseError(_ctl, error) {
        settle({ kind: 'error', phase: statusCode === 0 ? 'headers' : 'body', error });
      },
    };
    try {
      dispatcher.dispatch(
        {
          // The address comes from the hop's parsed hostname and port, the
          // values the redirect check compared; never from a URL string a
          // second parser would read again.
          origin: `${options.url.scheme}://${joinHostPort(options.url.hostname, options.url.port)}`,
          path: options.url.requestTarget,
          method: 'GET',
          headers: [['Host', options.host], ...options.headers].flat(),
          reset: true,
        },
        handler,
      );
    } catch (error: unknown) {
      settle({ kind: 'error', phase: 'headers', error });
    }
  });
}
