import { isIPv4, isIPv6 } from 'node:net';
import { canonicalEscaped, EscapeError, escape, unescape } from './go-url-escape.ts';

/**
 * The part of Go's net/url (go1.26 url.go) that net/http's Client uses to
 * follow a redirect: url.Parse of the Location, ResolveReference against the
 * current request URL, Hostname/Port, RequestURI and String. A redirect hop
 * is compared and connected to from this one parse, never from a second
 * parser (WHATWG URL reads `\`, `%xx` and odd IPv4 spellings differently).
 * Strings are byte strings (Latin-1), as HTTP header values arrive.
 */
export interface GoUrl {
  /** Lower case; empty for a relative reference. */
  readonly scheme: string;
  readonly opaque: string;
  readonly user: { readonly username: string; readonly password: string | undefined } | undefined;
  /** `host[:port]` as written (IPv6 bracketed), after unescaping. */
  readonly host: string;
  /** What Go's EscapedPath() returns. */
  readonly path: string;
  readonly rawQuery: string;
  readonly forceQuery: boolean;
  readonly omitHost: boolean;
  /** What Go's EscapedFragment() returns. */
  readonly fragment: string;
}

export type GoParse = { readonly ok: true; readonly url: GoUrl } | { readonly ok: false; readonly error: string };

// eslint-disable-next-line no-control-regex -- Go's parse rejects ASCII control bytes
const ctl = /[\x00-\x1f\x7f]/;
const goQuote = (s: string): string => JSON.stringify(s);

/** url.Parse: errors read `parse "<url>": <reason>`, as Go's *url.Error prints them. */
export function parseGoUrl(raw: string): GoParse {
  const hash = raw.indexOf('#');
  const u = hash < 0 ? raw : raw.slice(0, hash);
  const frag = hash < 0 ? '' : raw.slice(hash + 1);
  let url: Mutable<GoUrl>;
  try {
    url = parseNoFragment(u);
  } catch (error: unknown) {
    return { ok: false, error: `parse ${goQuote(u)}: ${reason(error)}` };
  }
  try {
    url.fragment = frag === '' ? '' : canonicalEscaped(frag, 'fragment');
  } catch (error: unknown) {
    return { ok: false, error: `parse ${goQuote(raw)}: ${reason(error)}` };
  }
  return { ok: true, url };
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function getScheme(raw: string): { scheme: string; rest: string } {
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charAt(i);
    if (/[A-Za-z]/.test(c)) continue;
    if (/[0-9+.-]/.test(c)) {
      if (i === 0) return { scheme: '', rest: raw };
      continue;
    }
    if (c === ':') {
      if (i === 0) throw new Error('missing protocol scheme');
      return { scheme: raw.slice(0, i), rest: raw.slice(i + 1) };
    }
    return { scheme: '', rest: raw };
  }
  return { scheme: '', rest: raw };
}

function parseNoFragment(raw: string): Mutable<GoUrl> {
  if (ctl.test(raw)) throw new Error('net/url: invalid control character in URL');
  const url: Mutable<GoUrl> = { scheme: '', opaque: '', user: undefined, host: '', path: '', rawQuery: '', forceQuery: false, omitHost: false, fragment: '' };
  if (raw === '*') {
    url.path = '*';
    return url;
  }
  const split = getScheme(raw);
  url.scheme = split.scheme.toLowerCase();
  let rest = splitQuery(url, split.rest);
  if (!rest.startsWith('/')) {
    if (url.scheme !== '') {
      url.opaque = rest; // a rootless path (RFC 3986) is opaque
      return url;
    }
    if ((rest.split('/')[0] ?? '').includes(':')) throw new Error('first path segment in URL cannot contain colon');
  }
  if ((url.scheme !== '' || !rest.startsWith('///')) && rest.startsWith('//')) {
    let authority = rest.slice(2);
    rest = '';
    const slash = authority.indexOf('/');
    if (slash >= 0) [authority, rest] = [authority.slice(0, slash), authority.slice(slash)];
    parseAuthority(url, authority);
  } else if (url.scheme !== '' && rest.startsWith('/')) {
    url.omitHost = true;
  }
  url.path = canonicalEscaped(rest, 'path');
  return url;
}

/** Cuts `?query` off, as parse does (a lone trailing `?` is ForceQuery). */
function splitQuery(url: Mutable<GoUrl>, rest: string): string {
  if (rest.endsWith('?') && rest.indexOf('?') === rest.length - 1) {
    url.forceQuery = true;
    return rest.slice(0, -1);
  }
  const q = rest.indexOf('?');
  if (q < 0) return rest;
  url.rawQuery = rest.slice(q + 1);
  return rest.slice(0, q);
}

function parseAuthority(url: Mutable<GoUrl>, authority: string): void {
  const at = authority.lastIndexOf('@');
  url.host = parseHost(url.scheme, at < 0 ? authority : authority.slice(at + 1));
  if (at < 0) return;
  const userinfo = authority.slice(0, at);
  if (!/^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/.test(userinfo)) throw new Error('net/url: invalid userinfo');
  const colon = userinfo.indexOf(':');
  url.user = colon < 0
    ? { username: unescape(userinfo, 'userPassword'), password: undefined }
    : { username: unescape(userinfo.slice(0, colon), 'userPassword'), password: unescape(userinfo.slice(colon + 1), 'userPassword') };
}

const validOptionalPort = (p: string): boolean => p === '' || /^:[0-9]*$/.test(p);

function parseHost(scheme: string, host: string): string {
  const open = host.lastIndexOf('[');
  if (open > 0) throw new Error('invalid IP-literal');
  if (open === 0) return parseIpLiteral(host);
  const first = host.indexOf(':');
  if (first >= 0) {
    // go1.26 (urlstrictcolons=1): only http(s) hosts must have a single colon.
    const i = scheme === 'http' || scheme === 'https' ? first : host.lastIndexOf(':');
    const colonPort = host.slice(i);
    if (!validOptionalPort(colonPort)) throw new Error(`invalid port ${goQuote(colonPort)} after host`);
  }
  return unescape(host, 'host');
}

function parseIpLiteral(host: string): string {
  const close = host.lastIndexOf(']');
  if (close < 0) throw new Error("missing ']' in host");
  const colonPort = host.slice(close + 1);
  if (!validOptionalPort(colonPort)) throw new Error(`invalid port ${goQuote(colonPort)} after host`);
  const inner = host.slice(1, close);
  const zone = inner.indexOf('%25');
  const hostname = zone < 0 ? unescape(inner, 'host') : unescape(inner.slice(0, zone), 'host') + unescape(inner.slice(zone), 'zone');
  const kind = ipLiteralKind(hostname);
  if (kind === 'invalid') throw new Error(`invalid host: ParseAddr(${goQuote(hostname)}): unable to parse IP`);
  if (kind === 'ipv4') throw new Error('invalid IP-literal');
  return `[${hostname}]${colonPort}`;
}

/**
 * Enough of netip.ParseAddr to tell IPv6 (with an optional non-empty zone)
 * from IPv4 and from garbage; the error text for a malformed literal is
 * Go's generic one, not netip's detailed reason.
 */
function ipLiteralKind(s: string): 'ipv4' | 'ipv6' | 'invalid' {
  if (isIPv4(s)) return 'ipv4';
  const pct = s.indexOf('%');
  if (pct < 0) return isIPv6(s) ? 'ipv6' : 'invalid';
  return pct < s.length - 1 && isIPv6(s.slice(0, pct)) ? 'ipv6' : 'invalid';
}

/** URL.ResolveReference (RFC 3986 §5.2, Go's reading of it). */
export function resolveReference(base: GoUrl, ref: GoUrl): GoUrl {
  const url: Mutable<GoUrl> = { ...ref, scheme: ref.scheme === '' ? base.scheme : ref.scheme };
  if (ref.scheme !== '' || ref.host !== '' || ref.user !== undefined) {
    url.path = canonicalEscaped(resolvePath(ref.path, ''), 'path');
    return url;
  }
  if (ref.opaque !== '') return { ...url, user: undefined, host: '', path: '' };
  if (ref.path === '' && !ref.forceQuery && ref.rawQuery === '') {
    url.rawQuery = base.rawQuery;
    if (ref.fragment === '') url.fragment = base.fragment;
  }
  if (ref.path === '' && base.opaque !== '') return { ...url, opaque: base.opaque, user: undefined, host: '', path: '' };
  url.host = base.host;
  url.user = base.user;
  url.path = canonicalEscaped(resolvePath(base.path, ref.path), 'path');
  return url;
}

/** url.resolvePath: merges and removes dot segments. */
function resolvePath(base: string, ref: string): string {
  const full = ref === '' ? base : ref.startsWith('/') ? ref : base.slice(0, base.lastIndexOf('/') + 1) + ref;
  if (full === '') return '';
  let dst = '/';
  let first = true;
  const elems = full.split('/');
  for (const elem of elems) {
    if (elem === '.') {
      first = false;
    } else if (elem === '..') {
      const i = dst.slice(1).lastIndexOf('/');
      dst = i >= 0 ? dst.slice(0, i + 1) : '/';
      first = dst.length === 1;
    } else {
      dst += (first ? '' : '/') + elem;
      first = false;
    }
  }
  const lastElem = elems.at(-1);
  if (lastElem === '.' || lastElem === '..') dst += '/';
  return dst.length > 1 && dst[1] === '/' ? dst.slice(1) : dst;
}

/** URL.Hostname and URL.Port. */
export function splitGoHostPort(host: string): { readonly hostname: string; readonly port: string } {
  let hostname = host;
  let port = '';
  const colon = host.lastIndexOf(':');
  if (colon >= 0 && validOptionalPort(host.slice(colon))) [hostname, port] = [host.slice(0, colon), host.slice(colon + 1)];
  if (hostname.startsWith('[') && hostname.endsWith(']')) hostname = hostname.slice(1, -1);
  return { hostname, port };
}

/** URL.RequestURI. */
export function requestUri(url: GoUrl): string {
  let result = url.opaque;
  if (result === '') result = url.path === '' ? '/' : url.path;
  else if (result.startsWith('//')) result = `${url.scheme}:${result}`;
  return url.forceQuery || url.rawQuery !== '' ? `${result}?${url.rawQuery}` : result;
}

/** URL.String. */
export function goUrlString(url: GoUrl): string {
  return urlText(url);
}

/**
 * net/http stripPassword(u), as its errors print a URL: URL.String with the
 * first `<userinfo>@` replaced by the *unescaped* username and `:***@`
 * when a password is set.
 */
export function displayGoUrl(url: GoUrl): string {
  const text = urlText(url);
  const user = url.user;
  if (user?.password === undefined) return text;
  return text.replace(`${userinfoText(user)}@`, `${user.username}:***@`);
}

/** Userinfo.String: the escaped `user[:password]` (what refererForURL strips, with its `@`). */
export function userinfoText(user: NonNullable<GoUrl['user']>): string {
  const password = user.password === undefined ? '' : `:${escape(user.password, 'userPassword')}`;
  return `${escape(user.username, 'userPassword')}${password}`;
}

function urlText(url: GoUrl): string {
  let s = url.scheme === '' ? '' : `${url.scheme}:`;
  s += url.opaque !== '' ? url.opaque : hierarchical(url, s === '');
  if (url.forceQuery || url.rawQuery !== '') s += `?${url.rawQuery}`;
  if (url.fragment !== '') s += `#${url.fragment}`;
  return s;
}

function hierarchical(url: GoUrl, noScheme: boolean): string {
  let s = authorityText(url, noScheme);
  if (url.path !== '' && !url.path.startsWith('/') && url.host !== '') s += '/';
  // RFC 3986 §4.2: a first segment with a colon would read as a scheme.
  if (s === '' && noScheme && (url.path.split('/')[0] ?? '').includes(':')) s += './';
  return s + url.path;
}

function authorityText(url: GoUrl, noScheme: boolean): string {
  const user = url.user;
  if (noScheme && url.host === '' && user === undefined) return '';
  if (url.omitHost && url.host === '' && user === undefined) return '';
  const slashes = url.host !== '' || url.path !== '' || user !== undefined ? '//' : '';
  const userinfo = user === undefined ? '' : `${userinfoText(user)}@`;
  return `${slashes}${userinfo}${escape(url.host, 'host')}`;
}

export { EscapeError };
