import { displayGoUrl, parseGoUrl, requestUri, resolveReference, splitGoHostPort } from './go-url.ts';
import type { GoUrl } from './go-url.ts';
import { fromBytes } from './go-url-escape.ts';
import type { ProbeUrl } from './url.ts';
import { probeUrlString } from './url.ts';

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
  /** req.Host: a user Host header, kept only through relative redirects. */
  readonly hostOverride: string | undefined;
  /** The URL as net/http's errors print it (stripPassword(u)). */
  readonly display: string;
}

/** The first request: the kubelet's probe URL with the user's Host header. */
export function firstHop(url: ProbeUrl, hostHeader: string | undefined): Hop {
  const q = url.requestTarget.indexOf('?');
  const goUrl: GoUrl = {
    scheme: url.scheme,
    opaque: '',
    user: undefined,
    host: url.authority,
    path: q < 0 ? url.requestTarget : url.requestTarget.slice(0, q),
    rawQuery: q < 0 ? '' : url.requestTarget.slice(q + 1),
    forceQuery: q >= 0 && q === url.requestTarget.length - 1,
    omitHost: false,
    fragment: '',
  };
  return { url: goUrl, hostOverride: hostHeader, display: probeUrlString(url) };
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
export function nextHop(current: Hop, firstHostname: string, location: string): NextHop {
  const ref = parseGoUrl(location);
  if (!ref.ok) {
    const loc = JSON.stringify(fromBytes(location));
    return { kind: 'error', output: `Get ${JSON.stringify(current.display)}: failed to parse Location header ${loc}: ${ref.error}` };
  }
  const url = resolveReference(current.url, ref.url);
  if (splitGoHostPort(url.host).hostname !== firstHostname) return { kind: 'stop' };
  // Go keeps req.Host through a relative Location only (issue #22233).
  const keep = current.hostOverride !== undefined && current.hostOverride !== current.url.host && ref.url.scheme === '';
  return { kind: 'follow', hop: { url, hostOverride: keep ? current.hostOverride : undefined, display: displayGoUrl(url) } };
}

/**
 * The request a followed hop makes, or why Go's transport refuses it
 * (wording of net/http and net). The address is the hop's own hostname and
 * port, never a re-parse of a URL string.
 */
export function hopRequest(hop: Hop): { readonly ok: true; readonly url: ProbeUrl } | { readonly ok: false; readonly error: string } {
  const { scheme } = hop.url;
  if (scheme !== 'http' && scheme !== 'https') return { ok: false, error: `unsupported protocol scheme ${JSON.stringify(scheme)}` };
  const { hostname, port } = splitGoHostPort(hop.url.host);
  const number = port === '' ? (scheme === 'https' ? 443 : 80) : Number(port);
  if (number > 65535) return { ok: false, error: `dial tcp: address ${port}: invalid port` };
  return {
    ok: true,
    url: { scheme, hostname, port: number, authority: hop.url.host, requestTarget: requestUri(hop.url) },
  };
}
