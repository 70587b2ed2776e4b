import net from 'node:net';
import type { Dispatcher } from 'undici';
import { DeadlineSweep } from '../deadline.ts';
import type { DeadlineEntry, DeadlineList } from '../deadline.ts';
import { rawTcp } from '../rawtcp/index.ts';
import type { RawTcp } from '../rawtcp/index.ts';
import { errored, failure, success, warning } from '../outcome.ts';
import type { Outcome } from '../outcome.ts';
import type { HttpProbeRequest } from '../request.ts';
import { joinHostPort } from '../request.ts';
import { exchange } from './exchange.ts';
import type { HopResult } from './exchange.ts';
import { goBodyString } from './go-text.ts';
import { buildHeaders, headerLines } from './headers.ts';
import { punycodeHost } from './host-header.ts';
import type { BuiltHeaders } from './headers.ts';
import { getRequestHead, ProbeDispatcher } from './probe-dispatcher.ts';
import { RawHttpExchange } from './raw-exchange.ts';
import { firstHop, hopRequest, isFollowedRedirect, nextHop } from './redirect.ts';
import type { Hop as RedirectHop, NextHop } from './redirect.ts';
import { ParseError } from './response-parser.ts';
import { describeTransportError } from './transport-error.ts';
import { kubeletUrl } from './url.ts';
import type { ProbeUrl } from './url.ts';

/** The kubelet reads at most this much of a probe response body (maxRespBodyLength). */
export const maxBodyBytes = 10 * 1024;
/** Go's client refuses a redirect once this many requests were made. */
export const maxRedirects = 10;

export type HttpProber = (req: HttpProbeRequest, signal?: AbortSignal) => Promise<Outcome>;

export interface HttpProberOptions {
  /** `kube-probe/<major>.<minor>`, sent unless httpHeaders set User-Agent. */
  readonly userAgent: string;
  /**
   * The transport. @default a shared ProbeDispatcher (fresh connection per
   * probe); an undici Agent with `allowH2: false` gives the same semantics.
   */
  readonly dispatcher?: Dispatcher;
  /**
   * Without a dispatcher: plain-HTTP requests go over Node's TCP handle
   * (ADR 0025) when it is usable; false keeps them on the ProbeDispatcher
   * (node:net), as when it is not. Same results either way. @default true
   */
  readonly rawTcp?: boolean;
}

class ProbeTimeout extends Error {}
class ProbeCancelled extends Error {}

const cancelled = Object.freeze(errored('probe cancelled'));

/** Every HTTP probe's deadline, on one timer (deadline.ts). */
const deadlines = new DeadlineSweep();

/** One hop's request through a transport; ends with the hop's result, whatever happens. */
type Hop = (options: HopRequest, probe: ProbeRun) => Promise<HopResult>;

interface HopRequest {
  readonly url: ProbeUrl;
  readonly host: string;
  /** The lines after Host, in wire order (byte strings). */
  readonly headers: readonly (readonly [string, string])[];
  readonly wantBody: (statusCode: number, location: string | undefined) => boolean;
}

/**
 * One probe: its deadline (an entry of the shared sweep) and its caller's
 * cancellation (it is the abort listener itself), which end the hop in
 * flight with ProbeTimeout or ProbeCancelled. It spans every hop of a
 * redirect chain, as the kubelet's client timeout does.
 */
class ProbeRun implements DeadlineEntry {
  /** Why the probe was cut short, once it was. */
  reason: Error | undefined;
  /** Ends the hop in flight. */
  onAbort: ((reason: Error) => void) | undefined;
  deadlineAt = 0;
  deadlineNext: DeadlineEntry | undefined = undefined;
  deadlinePrev: DeadlineEntry | undefined = undefined;
  deadlineList: DeadlineList | undefined = undefined;

  onDeadline(): void {
    this.#abort(new ProbeTimeout());
  }

  handleEvent(): void {
    this.#abort(new ProbeCancelled());
  }

  #abort(reason: Error): void {
    if (this.reason !== undefined) return;
    this.reason = reason;
    this.onAbort?.(reason);
  }
}

/** HTTP GET probes with the kubelet's semantics (kubelet-probes.md §5). */
export function createHttpProber(options: HttpProberOptions): HttpProber {
  // httpHeaders arrays come from the policy and are shared by every pass of
  // its targets: canonicalise each one once.
  const headerCache = new WeakMap<HttpProbeRequest['headers'], BuiltHeaders>();
  const headersOf = (req: HttpProbeRequest): BuiltHeaders => {
    let built = headerCache.get(req.headers);
    if (built === undefined) {
      built = buildHeaders(req.headers, options.userAgent);
      headerCache.set(req.headers, built);
    }
    return built;
  };
  const dispatcher = options.dispatcher ?? new ProbeDispatcher();
  const viaDispatcher = dispatcherHop(dispatcher);
  // The built-in transport speaks plain HTTP/1.1 on Node's TCP handle when it can (ADR 0025).
  const raw = options.dispatcher === undefined && options.rawTcp !== false ? rawTcp() : undefined;
  const hop: Hop = raw === undefined ? viaDispatcher : rawHop(raw, viaDispatcher);
  return async (req, signal) => {
    if (signal?.aborted === true) return cancelled;
    const probe = new ProbeRun();
    deadlines.add(probe, req.timeoutMs);
    signal?.addEventListener('abort', probe, { once: true });
    try {
      return await run(hop, headersOf(req), req, probe);
    } finally {
      deadlines.remove(probe);
      signal?.removeEventListener('abort', probe);
    }
  };
}

/** Hops through an undici Dispatcher (the handler protocol), the probe's cancellation bridged to an AbortSignal. */
function dispatcherHop(dispatcher: Dispatcher): Hop {
  return async (request, probe) => {
    const bridge = new AbortController();
    if (probe.reason !== undefined) bridge.abort(probe.reason);
    else probe.onAbort = (reason) => bridge.abort(reason);
    try {
      return await exchange(dispatcher, { ...request, signal: bridge.signal, bodyLimit: maxBodyBytes });
    } finally {
      probe.onAbort = undefined;
    }
  };
}

/** Plain-HTTP hops to an IP on Node's TCP handle; HTTPS (and anything unusual) through the dispatcher. */
function rawHop(raw: RawTcp, fallback: Hop): Hop {
  return (request, probe) => {
    const { url } = request;
    if (url.scheme !== 'http' || net.isIP(url.hostname) === 0 || url.hostname.includes('%')) return fallback(request, probe);
    return new Promise<HopResult>((resolve) => {
      const abortedAlready = probe.reason;
      if (abortedAlready !== undefined) {
        resolve({ kind: 'error', phase: 'headers', error: abortedAlready });
        return;
      }
      const head = getRequestHead(url.requestTarget, request.host, request.headers);
      if (head instanceof Error) {
        resolve({ kind: 'error', phase: 'headers', error: head });
        return;
      }
      const hopExchange = new RawHttpExchange(raw, { hostname: url.hostname, port: url.port, head, bodyLimit: maxBodyBytes, wantBody: request.wantBody }, (result) => {
        probe.onAbort = undefined;
        resolve(result);
      });
      probe.onAbort = (reason) => hopExchange.abort(reason);
      hopExchange.start();
    });
  };
}

async function run(hop: Hop, headers: BuiltHeaders, req: HttpProbeRequest, probe: ProbeRun): Promise<Outcome> {
  const first = kubeletUrl(req.scheme, req.ip, req.port, req.path);
  // http.NewRequest refused the URL: the kubelet's prober returns an error.
  if (!first.ok) return errored(first.error);
  let current = firstHop(first.url, headers.host);
  // Go's transport refuses the request before dialling (client.Do fails: a Failure).
  if (headers.invalid !== undefined) return failure(`Get ${JSON.stringify(current.display)}: ${headers.invalid}`);
  let request = hopRequest(current);
  if (!request.ok) return failure(`Get ${JSON.stringify(current.display)}: ${request.error}`);
  let url = request.url;
  const firstHostname = url.hostname;
  for (let via = 0; ; via++) {
    const refused = req.checkHop?.(url.hostname, url.port);
    if (refused !== undefined) return errored(`Get ${JSON.stringify(current.display)}: not connected: ${refused}`);
    const at = current;
    // The same decision at head time (skip the body of a followed redirect) and after.
    const decide = (code: number, location: string | undefined): NextHop | undefined =>
      isFollowedRedirect(code, location) ? nextHop(at, firstHostname, location, code) : undefined;
    const result = await hop(
      {
        url,
        host: punycodeHost(current.hostOverride ?? current.url.host),
        headers: headerLines(headers, { referer: current.referer, user: current.url.user, bodyHeaders: current.bodyHeaders }),
        wantBody: (code, location) => (decide(code, location)?.kind ?? 'stop') === 'stop',
      },
      probe,
    );
    if (result.kind === 'error') return transportOutcome(current, url, result);
    const next = decide(result.statusCode, result.location);
    if (next === undefined || next.kind === 'stop') return statusOutcome(result.statusCode, result.body);
    if (next.kind === 'error') return failure(next.output);
    // Go's CheckRedirect sees every request made so far (via, with the
    // original): the 10th redirect response is refused, so 9 are followed.
    if (via + 1 >= maxRedirects) return failure(`Get ${JSON.stringify(result.location)}: stopped after ${maxRedirects} redirects`);
    request = hopRequest(next.hop);
    if (!request.ok) return failure(`Get ${JSON.stringify(next.hop.display)}: ${request.error}`);
    current = next.hop;
    url = request.url;
  }
}

/** pkg/probe/http DoHTTPProbe: the status decides; 2xx success, 3xx warning, else failure. */
function statusOutcome(statusCode: number, body: Buffer): Outcome {
  const text = goBodyString(body);
  if (statusCode >= 200 && statusCode < 300) return success(text);
  if (statusCode >= 300 && statusCode < 400) return warning(`Probe terminated redirects, Response body: ${text}`);
  return failure(`HTTP probe failed with statuscode: ${statusCode}`);
}

/**
 * Transport errors before the response head are Failures (client.Do failed,
 * message `Get "<url>": …`); errors while reading the body are prober errors,
 * which void the attempt, and the kubelet reports them bare (DoHTTPProbe
 * returns the body read error itself).
 */
function transportOutcome(hop: RedirectHop, url: ProbeUrl, result: Extract<HopResult, { kind: 'error' }>): Outcome {
  const get = `Get ${JSON.stringify(hop.display)}`;
  const addr = joinHostPort(url.hostname, url.port);
  const error = result.error;
  if (error instanceof ProbeCancelled) return errored('probe cancelled');
  if (result.phase === 'body') {
    if (error instanceof ProbeTimeout) return errored('context deadline exceeded (Client.Timeout or context cancellation while reading body)');
    return errored(describeTransportError(error, addr));
  }
  if (error instanceof ProbeTimeout) {
    // Go's client adds the suffix only once the connection is up: a TLS
    // handshake cut by the client timeout reads `context deadline exceeded`.
    return failure(`${get}: context deadline exceeded${result.connecting === true ? '' : ' (Client.Timeout exceeded while awaiting headers)'}`);
  }
  // Go's transport wraps what it could not parse; a close before any byte is a bare EOF.
  if (error instanceof ParseError && error.message !== 'EOF') return failure(`${get}: net/http: HTTP/1.x transport connection broken: ${error.message}`);
  return failure(`${get}: ${describeTransportError(error, addr)}`);
}
