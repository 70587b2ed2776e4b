import type { HttpHeader } from '../request.ts';

/**
 * Request headers as the kubelet builds them (newProbeRequest):
 * - user headers are added in order, names canonicalised (`x-foo` → `X-Foo`),
 *   duplicates kept;
 * - no `User-Agent` key → `User-Agent: kube-probe/<major>.<minor>`; a user
 *   User-Agent with an empty value → none is sent;
 * - no `Accept` key → `Accept: *\/*`; a user Accept with an empty value → removed;
 * - a user `Host` header (the first one) becomes the request Host;
 * - Go never writes user `Content-Length`, `Transfer-Encoding` or `Trailer`
 *   headers for a GET; `Connection` is owned by the transport (always close).
 */
export interface BuiltHeaders {
  /** The Host override from httpHeaders, if any. */
  readonly host: string | undefined;
  /** Headers other than Host, in send order, as [name, value] pairs. */
  readonly list: readonly (readonly [string, string])[];
}

const dropped = new Set(['Content-Length', 'Transfer-Encoding', 'Trailer', 'Connection', 'Host', 'User-Agent']);

export function buildHeaders(user: readonly HttpHeader[], userAgent: string): BuiltHeaders {
  const canonical = user.map(({ name, value }) => [canonicalHeaderKey(name), value] as const);
  const first = (name: string): string | undefined => canonical.find(([n]) => n === name)?.[1];
  const list: (readonly [string, string])[] = canonical.filter(([name]) => !dropped.has(name));
  // Go writes only the first User-Agent value, and none when it is empty.
  const ua = first('User-Agent') ?? userAgent;
  if (ua !== '') list.unshift(['User-Agent', ua]);
  const accept = first('Accept');
  if (accept === undefined) list.push(['Accept', '*/*']);
  return {
    host: first('Host'),
    // headers.Del("Accept") removes every Accept value when the first is empty.
    list: accept === '' ? list.filter(([name]) => name !== 'Accept') : list,
  };
}

/** Go's textproto.CanonicalMIMEHeaderKey: names with invalid characters stay as they are. */
export function canonicalHeaderKey(name: string): string {
  if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(name)) return name;
  return name
    .toLowerCase()
    .replace(/(^|-)([a-z])/g, (_m: string, dash: string, letter: string) => dash + letter.toUpperCase());
}
