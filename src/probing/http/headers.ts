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
 *   headers for a GET; `Connection` is owned by the transport (always close);
 * - a name that is not a token, or a value with a control character other
 *   than HTAB, makes Go's transport refuse the request before dialling
 *   (`invalid`): the probe fails and nothing is sent.
 */
export interface BuiltHeaders {
  /** The Host override from httpHeaders, if any. */
  readonly host: string | undefined;
  /** Headers other than Host, in send order, as [name, value] pairs. */
  readonly list: readonly (readonly [string, string])[];
  /**
   * Go's transport error for the first user header (in list order; Go
   * iterates its header map in random order) that httpguts rejects:
   * `net/http: invalid header field value for "X-Foo"` or `... name "x y"`.
   */
  readonly invalid: string | undefined;
}

const dropped = new Set(['Content-Length', 'Transfer-Encoding', 'Trailer', 'Connection', 'Host', 'User-Agent']);

export function buildHeaders(user: readonly HttpHeader[], userAgent: string): BuiltHeaders {
  const canonical = user.map(({ name, value }) => [canonicalHeaderKey(name), value] as const);
  const invalid = canonical.map(([name, value]) => headerProblem(name, value)).find((p) => p !== undefined);
  const first = (name: string): string | undefined => canonical.find(([n]) => n === name)?.[1];
  const list: (readonly [string, string])[] = canonical.filter(([name]) => !dropped.has(name));
  // Go writes only the first User-Agent value, and none when it is empty.
  const ua = first('User-Agent') ?? userAgent;
  if (ua !== '') list.unshift(['User-Agent', ua]);
  const accept = first('Accept');
  if (accept === undefined) list.push(['Accept', '*/*']);
  return {
    host: first('Host'),
    invalid,
    // headers.Del("Accept") removes every Accept value when the first is empty.
    list: accept === '' ? list.filter(([name]) => name !== 'Accept') : list,
  };
}

const token = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// eslint-disable-next-line no-control-regex -- httpguts: CTLs (0x00-0x1f, 0x7f) except HTAB
const forbiddenInValue = /[\x00-\x08\x0a-\x1f\x7f]/;

/**
 * Go's transport check (httpguts.ValidHeaderFieldName / ValidHeaderFieldValue):
 * a name must be a non-empty token; a value must not contain a control
 * character other than HTAB. Returns Go's error text, or undefined when valid.
 */
export function headerProblem(name: string, value: string): string | undefined {
  if (!token.test(name)) return `net/http: invalid header field name ${JSON.stringify(name)}`;
  if (forbiddenInValue.test(value)) return `net/http: invalid header field value for ${JSON.stringify(name)}`;
  return undefined;
}

/** Go's textproto.CanonicalMIMEHeaderKey: names with invalid characters stay as they are. */
export function canonicalHeaderKey(name: string): string {
  if (!token.test(name)) return name;
  return name
    .toLowerCase()
    .replace(/(^|-)([a-z])/g, (_m: string, dash: string, letter: string) => dash + letter.toUpperCase());
}
