import { joinHostPort } from '../request.ts';

/**
 * The request URL of an httpGet probe, built the way the kubelet's
 * formatURL + http.NewRequest(url.String()) do it in Go:
 * `path` is parsed as a URL reference, then scheme and authority are
 * replaced by `<scheme>://JoinHostPort(ip, port)`. Consequences pinned by
 * tests: an empty path sends `/`; a missing leading slash is added; a query
 * survives; a fragment is dropped; a scheme or authority written inside
 * `path` is ignored (`//evil/x` requests `/x`); characters that are not valid
 * in a URL path are percent-encoded; a path Go cannot parse (bad `%` escape,
 * control characters) is used verbatim as a path and escaped whole.
 */
export interface ProbeUrl {
  readonly scheme: 'http' | 'https';
  /** Hostname without brackets (the pod IP); with `port`, the address connected to. */
  readonly hostname: string;
  readonly port: number;
  /**
   * The URL's host as written, the default Host header value:
   * `JoinHostPort(ip, port)` for the first request, Go's URL.Host for a
   * redirect hop (`10.0.0.5` when the Location has no port).
   */
  readonly authority: string;
  /** Path and query, as sent on the request line. */
  readonly requestTarget: string;
}

const schemePrefix = /^[A-Za-z][A-Za-z0-9+.-]*:/;
const badEscape = /%(?![0-9A-Fa-f]{2})/;
// eslint-disable-next-line no-control-regex -- Go's url.Parse rejects ASCII control characters
const controlChar = /[\x00-\x1f\x7f]/;

export function probeUrl(scheme: 'HTTP' | 'HTTPS', ip: string, port: number, path: string): ProbeUrl {
  const lower = scheme === 'HTTPS' ? 'https' : 'http';
  return {
    scheme: lower,
    hostname: ip,
    port,
    authority: joinHostPort(ip, port),
    requestTarget: cachedRequestTarget(path),
  };
}

/**
 * requestTarget() of the paths seen recently. A policy has a handful of
 * distinct paths and every probe pass would escape the same one again; the
 * cache is dropped whole when it fills, so odd inputs cannot grow it.
 */
const targetCache = new Map<string, string>();
const targetCacheMax = 1024;

function cachedRequestTarget(path: string): string {
  let target = targetCache.get(path);
  if (target === undefined) {
    target = requestTarget(path);
    if (targetCache.size >= targetCacheMax) targetCache.clear();
    targetCache.set(path, target);
  }
  return target;
}

export function probeUrlString(url: ProbeUrl): string {
  return `${url.scheme}://${url.authority}${url.requestTarget}`;
}

/** Path and query for the request line, from a user-written `httpGet.path`. */
export function requestTarget(path: string): string {
  if (badEscape.test(path) || controlChar.test(path)) {
    // url.Parse failed: the kubelet keeps the string as a bare Path, which
    // Go escapes whole when it writes the URL.
    return ensureSlash(escapePath(path, true));
  }
  let rest = path;
  const hash = rest.indexOf('#');
  if (hash >= 0) rest = rest.slice(0, hash);
  const scheme = schemePrefix.exec(rest);
  if (scheme !== null && !rest.slice(0, scheme[0].length).includes('/')) rest = rest.slice(scheme[0].length);
  if (rest.startsWith('//')) {
    const end = rest.slice(2).search(/[/?]/);
    rest = end < 0 ? '' : rest.slice(2 + end);
  }
  const q = rest.indexOf('?');
  const pathPart = q < 0 ? rest : rest.slice(0, q);
  const query = q < 0 ? '' : rest.slice(q);
  return ensureSlash(escapePath(pathPart, false)) + escapeQuery(query);
}

function ensureSlash(p: string): string {
  return p.startsWith('/') ? p : `/${p}`;
}

/** Keeps what Go keeps unescaped in a path (RFC 3986 pchar plus `/`). */
function escapePath(p: string, escapePercent: boolean): string {
  let out = '';
  for (const ch of p) {
    if (/[A-Za-z0-9\-._~!$&'()*+,;=:@/]/.test(ch) || (ch === '%' && !escapePercent)) out += ch;
    else out += encodeURIComponent(ch).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  }
  return out;
}

/** Go sends RawQuery as written, except that spaces and non-ASCII need encoding on the wire. */
function escapeQuery(query: string): string {
  // The wire form never carries spaces or non-ASCII.
  return query.replace(/[^\x21-\x7e]/gu, (c) => encodeURIComponent(c));
}
