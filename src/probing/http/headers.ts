import type { HttpHeader } from '../request.ts';
import { toBytes } from './go-url-escape.ts';

/**
 * Request headers as the kubelet builds them (newProbeRequest) and Go's
 * Request.write puts them on the wire:
 * - user headers are added in order, names canonicalised (`x-foo` → `X-Foo`),
 *   duplicates kept;
 * - no `User-Agent` key → `User-Agent: kube-probe/<major>.<minor>`; a user
 *   User-Agent with an empty value → none is sent;
 * - no `Accept` key → `Accept: *\/*`; a user Accept with an empty value → removed;
 * - a user `Host` header (the first one) becomes the request Host, an empty
 *   one leaves the URL's host;
 * - Go never writes user `Content-Length`, `Transfer-Encoding` or `Trailer`
 *   headers for a GET;
 * - a name that is not a token, or a value with a control character other
 *   than HTAB, makes Go's transport refuse the request before dialling
 *   (`invalid`): the probe fails and nothing is sent.
 * Values are kept as byte strings (UTF-8 bytes, one char each), as the wire has them.
 */
export interface BuiltHeaders {
  /** The Host override from httpHeaders, if any (empty: the URL's host is sent). */
  readonly host: string | undefined;
  /** The User-Agent value Request.write sends, if any. */
  readonly userAgent: string | undefined;
  /** The other headers (Connection and Accept included), in the order added, as [name, value] pairs. */
  readonly list: readonly (readonly [string, string])[];
  /**
   * Go's transport error for the first user header (in list order; Go
   * iterates its header map in random order) that httpguts rejects:
   * `net/http: invalid header field value for "X-Foo"` or `... name "x y"`.
   */
  readonly invalid: string | undefined;
}

/** Request.write's reqWriteExcludeHeader, plus Host and User-Agent, which it writes first. */
const notInSubset = new Set(['Content-Length', 'Transfer-Encoding', 'Trailer', 'Host', 'User-Agent']);
/** Client.makeHeadersCopier: not copied to a hop that a 301, 302 or 303 turned into a body-less GET. */
const bodyHeaders = new Set(['Content-Encoding', 'Content-Language', 'Content-Location', 'Content-Type']);

export function buildHeaders(user: readonly HttpHeader[], userAgent: string): BuiltHeaders {
  const canonical = user.map(({ name, value }) => [canonicalHeaderKey(name), toBytes(value)] as const);
  const invalid = canonical.map(([name, value]) => headerProblem(name, value)).find((p) => p !== undefined);
  const first = (name: string): string | undefined => canonical.find(([n]) => n === name)?.[1];
  const list: (readonly [string, string])[] = canonical.filter(([name]) => !notInSubset.has(name));
  // Request.write: the first User-Agent value, none when it is empty, trimmed.
  const ua = first('User-Agent') ?? userAgent;
  const accept = first('Accept');
  if (accept === undefined) list.push(['Accept', '*/*']);
  return {
    host: first('Host'),
    userAgent: ua === '' ? undefined : trimValue(ua),
    invalid,
    // headers.Del("Accept") removes every Accept value when the first is empty.
    list: accept === '' ? list.filter(([name]) => name !== 'Accept') : list,
  };
}

/** What one hop of a redirect chain adds to the user's headers (Client.Do and Client.send). */
export interface HopHeaders {
  /** refererForURL's value; a non-empty user Referer wins. */
  readonly referer: string | undefined;
  /** Location userinfo: `Authorization: Basic` unless the user set a non-empty Authorization. */
  readonly user: { readonly username: string; readonly password: string | undefined } | undefined;
  /** False after a 301, 302 or 303. */
  readonly bodyHeaders: boolean;
}

/**
 * The header lines after `Host:` in the order Go's Request.write produces
 * them: User-Agent, then every other header sorted by name (values of one
 * name in the order added, trimmed), then the transport's `Connection:
 * close` (keep-alives are off) unless a Connection header already asks to
 * close (net/http hasToken on the first value)
 * or the request is a protocol switch (an Upgrade value and a Connection
 * value listing `upgrade`, httpguts.HeaderValuesContainsToken).
 */
export function headerLines(built: BuiltHeaders, hop: HopHeaders): readonly (readonly [string, string])[] {
  // Most probes make one request with nothing added: their lines are the same every pass.
  const plain = hop.referer === undefined && hop.user === undefined && hop.bodyHeaders;
  if (!plain) return computeLines(built, hop);
  let lines = plainLines.get(built);
  if (lines === undefined) {
    lines = computeLines(built, hop);
    plainLines.set(built, lines);
  }
  return lines;
}

const plainLines = new WeakMap<BuiltHeaders, readonly (readonly [string, string])[]>();

function computeLines(built: BuiltHeaders, hop: HopHeaders): (readonly [string, string])[] {
  let rest = hop.bodyHeaders ? [...built.list] : built.list.filter(([name]) => !bodyHeaders.has(name));
  const set = (name: string, value: string): void => {
    rest = rest.filter(([n]) => n !== name);
    rest.push([name, value]);
  };
  const firstValue = (name: string): string | undefined => rest.find(([n]) => n === name)?.[1];
  if (hop.referer !== undefined && (firstValue('Referer') ?? '') === '') set('Referer', hop.referer);
  if (hop.user !== undefined && (firstValue('Authorization') ?? '') === '') {
    const basic = Buffer.from(`${hop.user.username}:${hop.user.password ?? ''}`, 'latin1').toString('base64');
    set('Authorization', `Basic ${basic}`);
  }
  const lines: (readonly [string, string])[] = built.userAgent === undefined ? [] : [['User-Agent', built.userAgent]];
  const sorted = rest.map(([name, value], i) => [name, value, i] as const).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[2] - b[2]));
  for (const [name, value] of sorted) lines.push([name, trimValue(value)]);
  if (!keepsOwnConnection(rest)) lines.push(['Connection', 'close']);
  return lines;
}

/** req.wantsClose() or isProtocolSwitchHeader(req.Header): the transport then adds no `Connection: close`. */
function keepsOwnConnection(headers: readonly (readonly [string, string])[]): boolean {
  const connection = headers.filter(([n]) => n === 'Connection').map(([, v]) => v);
  const upgrade = headers.find(([n]) => n === 'Upgrade')?.[1] ?? '';
  const wantsClose = (connection[0] ?? '').split(/[ ,\t]/).some((t) => t.toLowerCase() === 'close');
  const protocolSwitch = upgrade !== '' && connection.some((v) => v.split(',').some((t) => t.replace(/^[ \t]+|[ \t]+$/g, '').toLowerCase() === 'upgrade'));
  return wantsClose || protocolSwitch;
}

/** textproto.TrimString. */
function trimValue(v: string): string {
  return v.replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, '');
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
