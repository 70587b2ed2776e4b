import { displayGoUrl, goUrlString, parseGoUrl, resolveReference, splitGoHostPort, userinfoText } from './go-url.ts';
import type { GoUrl } from './go-url.ts';
import { fromBytes } from './go-url-escape.ts';
import { requestOf } from './url.ts';

/** Go's client follows these codes when a Location is present. */
const followed = new Set([301, 302, 303, 307, 308]);

export function isFollowedRedirect(statusCode: number, location: string | undefined): location is string {
  return followed.has(statusCode) && location !== undefined && location !== '';
}

/**
 * One request of a probe as Go's Client sees it: the URL (parsed once, with
 * Go's net/url rules), the Host override it carries, and how Go's errors
 * print it. Everything about the hop (the hostname compared with the first
 * request's, the address connected to, the request line) comes from `url`.
 */
export interface Hop {
  readonly url: GoUrl;
  /** req.Host: a non-empty user Host header, kept only through relative redirects. */
  readonly hostOverride: string | undefined;
  /** The URL as net/http's errors print it (stripPassword(u)), as text. */
  readonly display: string;
  /** The Referer Client.Do sets on a followed hop (refererForURL), if any. */
  readonly referer: string | undefined;
  /** False once a 301, 302 or 303 was followed: Content-Type and the other body headers are not copied. */
  readonly bodyHeaders: boolean;
}

/**
 * A Hop whose `display` text is built on first use: only error messages
 * read it, and most probes end without one.
 */
class LazyHop implements Hop {
  readonly url: GoUrl;
  readonly hostOverride: string | undefined;
  readonly referer: string | undefined;
  readonly bodyHeaders: boolean;
  #display: string | undefined;

  constructor(url: GoUrl, hostOverride: string | undefined, referer: string | undefined, bodyHeaders: boolean) {
    this.url = url;
    this.hostOverride = hostOverride;
    this.referer = referer;
    this.bodyHeaders = bodyHeaders;
  }

  get display(): string {
    this.#display ??= fromBytes(displayGoUrl(this.url));
    return this.#display;
  }
}

/** The first request: the kubelet's probe URL with the user's Host header. */
export function firstHop(url: GoUrl, hostHeader: string | undefined): Hop {
  return new LazyHop(url, hostHeader === '' ? undefined : hostHeader, undefined, true);
}

export type NextHop =
  /** The Location cannot be parsed: client.Do fails (a probe Failure). */
  | { readonly kind: 'error'; readonly output: string }
  /** Another hostname: RedirectChecker returns ErrUseLastResponse, the 3xx is the answer. */
  | { readonly kind: 'stop' }
  | { readonly kind: 'follow'; readonly hop: Hop };

/**
 * What Go's Client.Do + the kubelet's RedirectChecker do with a Location:
 * `req.URL.Parse(loc)` (url.Parse, then ResolveReference), then
 * `req.URL.Hostname() != via[0].URL.Hostname()` compares plain strings, so
 * `127.000.000.001`, `2130706433` or `[0:0:0:0:0:0:0:1]` are other hosts.
 */
export function nextHop(current: Hop, firstHostname: string, location: string, statusCode = 302): NextHop {
  const ref = parseGoUrl(location);
  if (!ref.ok) {
    const loc = JSON.stringify(fromBytes(location));
    return { kind: 'error', output: `Get ${JSON.stringify(current.display)}: failed to parse Location header ${loc}: ${ref.error}` };
  }
  const url = resolveReference(current.url, ref.url);
  if (splitGoHostPort(url.host).hostname !== firstHostname) return { kind: 'stop' };
  // Go keeps req.Host through a relative Location only (issue #22233).
  const keep = current.hostOverride !== undefined && current.hostOverride !== current.url.host && ref.url.scheme === '';
  return {
    kind: 'follow',
    // Client.Do's includeBody (the last argument): cleared by the first 301, 302 or 303 of the chain, for good.
    hop: new LazyHop(url, keep ? current.hostOverride : undefined, refererFor(current.url, url), current.bodyHeaders && (statusCode === 307 || statusCode === 308)),
  };
}

/** net/http refererForURL: the previous URL without its userinfo, none from https to http. */
function refererFor(last: GoUrl, next: GoUrl): string | undefined {
  if (last.scheme === 'https' && next.scheme === 'http') return undefined;
  const text = goUrlString(last);
  return last.user === undefined ? text : text.replace(`${userinfoText(last.user)}@`, '');
}

/**
 * The request a followed hop makes, or why Go's transport refuses it
 * (wording of net/http and net). The address is the hop's own hostname and
 * port, never a re-parse of a URL string.
 */
export function hopRequest(hop: Hop): ReturnType<typeof requestOf> {
  return requestOf(hop.url);
}
