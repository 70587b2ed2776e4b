/**
 * grpc-go's blocking dial (`grpc.WithBlock()`), which the kubelet uses: the
 * dial returns only once a connection is READY, i.e. the server's HTTP/2
 * SETTINGS arrived. A failed attempt (refused, reset, not HTTP/2, closed) is
 * not final: grpc-go backs off and tries again until the caller's deadline,
 * so every connect problem ends as the deadline. The same happens here.
 */
import http2 from 'node:http2';

/** grpc-go's per-attempt connect budget (minConnectTimeout), stretched to the backoff when that is longer. */
const minConnectTimeoutMs = 20_000;

/**
 * grpc-go's reconnect backoff (DefaultExponential: 1 s base, ×1.6, 20 %
 * jitter, 120 s cap). The first retry waits exactly the base delay.
 */
export function reconnectDelayMs(retries: number, random: () => number): number {
  if (retries === 0) return 1000;
  const base = Math.min(1000 * 1.6 ** retries, 120_000);
  return base * (1 + 0.2 * (random() * 2 - 1));
}

const ignore = (): void => undefined;

/**
 * Resolves with a READY session, or undefined once `signal` aborts. The
 * caller owns (and must destroy) a returned session. Throws only if the
 * authority cannot be turned into a URL at all.
 */
export async function dialBlocking(authority: string, signal: AbortSignal, random: () => number): Promise<http2.ClientHttp2Session | undefined> {
  const url = new URL(`http://${authority}`);
  for (let retries = 0; !signal.aborted; retries++) {
    const backoff = reconnectDelayMs(retries, random);
    const session = await attempt(url, Math.max(minConnectTimeoutMs, backoff), signal);
    if (session !== undefined) return session;
    await pause(backoff, signal);
  }
  return undefined;
}

/** One connection attempt: the session once the server's SETTINGS arrive, else undefined (and nothing left open). */
function attempt(url: URL, budgetMs: number, signal: AbortSignal): Promise<http2.ClientHttp2Session | undefined> {
  return new Promise((resolve) => {
    const session = http2.connect(url, { settings: { enablePush: false } });
    // Errors are read from the stream and the session state; an unheard
    // 'error' event must never reach the process.
    session.on('error', ignore);
    const settle = (ready: boolean): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', fail);
      session.off('remoteSettings', succeed);
      session.off('close', fail);
      if (!ready) session.destroy();
      resolve(ready ? session : undefined);
    };
    const succeed = (): void => settle(true);
    const fail = (): void => settle(false);
    const timer = setTimeout(fail, budgetMs);
    signal.addEventListener('abort', fail, { once: true });
    session.once('remoteSettings', succeed);
    session.once('close', fail);
  });
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
