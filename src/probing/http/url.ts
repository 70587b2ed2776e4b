import { joinHostPort } from '../request.ts';
import { escape, toBytes } from './go-url-escape.ts';
import { goUrlString, parseGoUrl, requestUri, splitGoHostPort } from './go-url.ts';
import type { GoUrl } from './go-url.ts';

/**
 * The address and request line of one request of a probe. Strings are byte
 * strings (one char per byte, Latin-1), as go-url.ts works on them and as
 * they go on the wire.
 */
export interface ProbeUrl {
  readonly scheme: 'http' | 'https';
  /** Hostname without brackets (the pod IP); with `port`, the address connected to. */
  readonly hostname: string;
  readonly port: number;
  /** The URL's host as written (`JoinHostPort(ip, port)` for the first request), the default Host header value. */
  readonly authority: string;
  /** URL.RequestURI(): path and query as sent on the request line. */
  readonly requestTarget: string;
}

export type KubeletUrl =
  | { readonly ok: true; readonly url: GoUrl }
  /** http.NewRequest refused the URL: a prober error (the kubelet discards the attempt). */
  | { readonly ok: false; readonly error: string };

/**
 * The first request's URL exactly as the kubelet builds it (pkg/probe/http
 * formatURL + http.NewRequest): `path` goes through url.Parse (if that fails,
 * the whole string becomes URL.Path); scheme and host are then replaced by
 * `<scheme>` and `JoinHostPort(ip, port)`, everything else (userinfo,
 * opaque, query, fragment) stays; the URL is printed with URL.String and
 * parsed again by http.NewRequest. Go's RequestURI of the result is what
 * goes on the request line: a query is sent as written (spaces, raw
 * UTF-8 and bad `%` escapes included), `//x/y` requests `/y` with `x` as a
 * discarded authority, and a scheme-looking path (`mailto:x`) leaves a URL
 * without host, which the transport refuses.
 */
export function kubeletUrl(scheme: 'HTTP' | 'HTTPS', ip: string, port: number, path: string): KubeletUrl {
  const lower = scheme === 'HTTPS' ? 'https' : 'http';
  const key = `${lower} ${path}`;
  let shape = shapeCache.get(key);
  if (shape === undefined) {
    shape = urlShape(lower, path);
    if (shapeCache.size >= shapeCacheMax) shapeCache.clear();
    shapeCache.set(key, shape);
  }
  const authority = joinHostPort(ip, port);
  if (!shape.ok) return { ok: false, error: shape.error.replaceAll(placeholderHost, authority) };
  return { ok: true, url: shape.url.host === placeholderHost ? { ...shape.url, host: authority } : shape.url };
}

/**
 * The host never changes how the rest of the URL parses, so the round trip
 * is done once per (scheme, path) with a placeholder host, and the pod's
 * address is put in afterwards. A policy has a handful of distinct paths;
 * the cache is dropped whole when it fills, so odd inputs cannot grow it.
 */
const shapeCache = new Map<string, KubeletUrl>();
const shapeCacheMax = 1024;
const placeholderHost = '0.0.0.0:0';

function urlShape(scheme: 'http' | 'https', path: string): KubeletUrl {
  const bytes = toBytes(path);
  const parsed = parseGoUrl(bytes);
  const base: GoUrl = parsed.ok
    ? parsed.url
    : // "Something is busted with the path ... Pass it along as is": URL{Path: path}, escaped whole by EscapedPath.
      { scheme: '', opaque: '', user: undefined, host: '', path: escape(bytes, 'path'), rawQuery: '', forceQuery: false, omitHost: false, fragment: '' };
  const text = goUrlString({ ...base, scheme, host: placeholderHost });
  const again = parseGoUrl(text);
  if (!again.ok) return { ok: false, error: again.error };
  // The printed URL names the pod's address or, for an opaque path, none; never another host.
  if (again.url.host !== placeholderHost && again.url.host !== '') return { ok: false, error: `parse ${JSON.stringify(text)}: unexpected host` };
  return again;
}

/** The address and request line of a request URL (any hop), or why Go's transport refuses it. */
export function requestOf(url: GoUrl): { readonly ok: true; readonly url: ProbeUrl } | { readonly ok: false; readonly error: string } {
  const { scheme } = url;
  if (scheme !== 'http' && scheme !== 'https') return { ok: false, error: `unsupported protocol scheme ${JSON.stringify(scheme)}` };
  if (url.host === '') return { ok: false, error: 'http: no Host in request URL' };
  const { hostname, port } = splitGoHostPort(url.host);
  const number = port === '' ? (scheme === 'https' ? 443 : 80) : Number(port);
  if (number > 65535) return { ok: false, error: `dial tcp: address ${port}: invalid port` };
  return { ok: true, url: { scheme, hostname, port: number, authority: url.host, requestTarget: requestUri(url) } };
}
