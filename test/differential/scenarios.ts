/**
 * The differential tier's scenarios, generated from tables: each is one probe
 * (HTTP, TCP or gRPC) against one scripted server behaviour. Ids are stable
 * (docs/kubelet-differences.md refers to them): add rows, do not renumber.
 */
import { readFileSync } from 'node:fs';
import http2 from 'node:http2';
import { gzipSync } from 'node:zlib';
import type { HttpHeader } from '../../src/probing/index.ts';
import { grpcFrame, hang, reset } from './servers.ts';
import type { GrpcReply, Ports, RawReply, Step } from './servers.ts';

export type Target =
  | { readonly type: 'raw'; readonly tls?: boolean; readonly reply: RawReply; readonly aux?: boolean }
  | { readonly type: 'h2tls' }
  | { readonly type: 'grpc'; readonly reply: GrpcReply; readonly goaway?: boolean }
  | { readonly type: 'closed' }
  /** A real grpc-go Health server (tools/kubelet-diff grpc-server), shared, not recorded. */
  | { readonly type: 'real-grpc' };

export interface Scenario {
  readonly id: string;
  readonly kind: 'http' | 'tcp' | 'grpc';
  readonly family: 4 | 6;
  readonly scheme?: 'HTTP' | 'HTTPS';
  readonly path?: string;
  readonly headers?: readonly HttpHeader[];
  readonly service?: string;
  readonly timeoutSeconds: number;
  readonly target: Target;
}

/** Replaces {T} {O} {V} {S} with the scenario's ports. */
export function fill(s: string, p: Ports): string {
  return s.replaceAll('{T}', String(p.T)).replaceAll('{O}', String(p.O)).replaceAll('{V}', String(p.V)).replaceAll('{S}', String(p.S));
}

const crlf = (lines: readonly string[]): string => lines.map((l) => `${l}\r\n`).join('');
/** A complete response with Content-Length (unless headers set framing) and Connection: close. */
export function response(status: string, headers: readonly string[], body: string | Buffer = ''): Buffer {
  const len = typeof body === 'string' ? Buffer.byteLength(body, 'latin1') : body.length;
  const framed = headers.some((h) => /^(content-length|transfer-encoding):/i.test(h));
  const head = crlf([status, ...headers, ...(framed ? [] : [`Content-Length: ${len}`]), 'Connection: close', '']);
  return Buffer.concat([Buffer.from(head, 'latin1'), typeof body === 'string' ? Buffer.from(body, 'latin1') : body]);
}
const fixed =
  (...steps: Step[]): RawReply =>
  () =>
    steps;
const ok200 = fixed(response('HTTP/1.1 200 OK', [], 'ok'));

function http(id: string, target: Target, extra: Partial<Scenario> = {}): Scenario {
  return { id, kind: 'http', family: 4, scheme: 'HTTP', path: '/healthz', timeoutSeconds: 1, target, ...extra };
}

// ── HTTP status codes ─────────────────────────────────────────────────────
const statuses: readonly [number, string][] = [
  [199, 'Odd'], [200, 'OK'], [201, 'Created'], [202, 'Accepted'], [204, 'No Content'], [206, 'Partial'], [299, 'Odd'],
  [300, 'Multiple Choices'], [301, 'Moved'], [302, 'Found'], [303, 'See Other'], [304, 'Not Modified'], [305, 'Use Proxy'],
  [307, 'Temporary'], [308, 'Permanent'], [399, 'Odd'], [400, 'Bad Request'], [401, 'Unauthorized'], [403, 'Forbidden'],
  [404, 'Not Found'], [418, 'Teapot'], [429, 'Too Many'], [499, 'Odd'], [500, 'Internal'], [502, 'Bad Gateway'],
  [503, 'Unavailable'], [504, 'Timeout'], [599, 'Odd'], [600, 'Odd'], [999, 'Odd'],
];
const statusScenarios = statuses.map(([code, text]) => http(`status-${code}`, { type: 'raw', reply: fixed(response(`HTTP/1.1 ${code} ${text}`, [], `body of ${code}`)) }));

// ── Bodies ────────────────────────────────────────────────────────────────
const bodies: readonly [string, Buffer][] = [
  ['empty', Buffer.alloc(0)],
  ['1b', Buffer.from('x')],
  ['10239b', Buffer.alloc(10239, 'a')],
  ['10240b', Buffer.alloc(10240, 'b')],
  ['10241b', Buffer.alloc(10241, 'c')],
  ['64kib', Buffer.alloc(65536, 'd')],
  ['1mib', Buffer.alloc(1 << 20, 'e')],
  ['utf8', Buffer.from('héllo ✓ 世界', 'utf8')],
  ['invalid-utf8-ff', Buffer.from([0x6f, 0x6b, 0xff, 0x21])],
  ['invalid-utf8-truncated', Buffer.from([0x6f, 0x6b, 0xe2, 0x82])],
  ['invalid-utf8-overlong', Buffer.from([0xc0, 0xaf, 0x41])],
  ['invalid-utf8-surrogate', Buffer.from([0xed, 0xa0, 0x80, 0x42])],
  ['latin1', Buffer.from('caf\xe9', 'latin1')],
  ['nul-bytes', Buffer.from([0x61, 0, 0x62, 0])],
  ['utf8-split-at-limit', Buffer.concat([Buffer.alloc(10239, 'a'), Buffer.from('é', 'utf8')])],
  ['bom', Buffer.from('\ufeffok', 'utf8')],
  ['crlf-text', Buffer.from('line1\r\nline2\n')],
];
const bodyScenarios = bodies.flatMap(([name, body]) => [
  http(`body-${name}`, { type: 'raw', reply: fixed(response('HTTP/1.1 200 OK', ['Content-Type: text/plain'], body)) }),
  ...(name === 'utf8' || name === 'invalid-utf8-ff' ? [http(`body-${name}-503`, { type: 'raw', reply: fixed(response('HTTP/1.1 503 Unavailable', [], body)) })] : []),
]);
const gz = gzipSync(Buffer.from('compressed ok'));
const encodingScenarios = [
  http('body-content-encoding-gzip', { type: 'raw', reply: fixed(response('HTTP/1.1 200 OK', ['Content-Encoding: gzip'], gz)) }),
  http('body-content-encoding-br-bogus', { type: 'raw', reply: fixed(response('HTTP/1.1 200 OK', ['Content-Encoding: br'], 'not brotli')) }),
  http('body-chunked', { type: 'raw', reply: fixed(response('HTTP/1.1 200 OK', ['Transfer-Encoding: chunked'], '2\r\nok\r\n3\r\n!!!\r\n0\r\n\r\n')) }),
  http('body-chunked-trailer', { type: 'raw', reply: fixed(response('HTTP/1.1 200 OK', ['Transfer-Encoding: chunked'], '2\r\nok\r\n0\r\nX-T: 1\r\n\r\n')) }),
  http('body-chunked-ext', { type: 'raw', reply: fixed(response('HTTP/1.1 200 OK', ['Transfer-Encoding: chunked'], '2;name=v\r\nok\r\n0\r\n\r\n')) }),
  http('body-no-length-close', { type: 'raw', reply: fixed('HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil close') }),
  http('body-http10-no-length', { type: 'raw', reply: fixed('HTTP/1.0 200 OK\r\n\r\nten') }),
];

// ── Malformed responses ──────────────────────────────────────────────────
const big = (n: number): string => 'v'.repeat(n);
const malformed: readonly [string, Step[]][] = [
  ['bare-lf', ['HTTP/1.1 200 OK\nContent-Length: 2\nConnection: close\n\nok']],
  ['bare-lf-status-only', ['HTTP/1.1 200 OK\r\nContent-Length: 2\nConnection: close\r\n\r\nok']],
  ['bare-cr', ['HTTP/1.1 200 OK\rContent-Length: 2\r\n\r\nok']],
  ['folded-header', ['HTTP/1.1 200 OK\r\nX-Long: a\r\n b\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok']],
  ['folded-first-header', ['HTTP/1.1 200 OK\r\n X-Bad: a\r\nContent-Length: 2\r\n\r\nok']],
  ['header-64kib', [response('HTTP/1.1 200 OK', [`X-Big: ${big(65536)}`], 'ok')]],
  ['header-1mib', [response('HTTP/1.1 200 OK', [`X-Big: ${big(1 << 20)}`], 'ok')]],
  ['header-11mib', [response('HTTP/1.1 200 OK', [`X-Big: ${big(11 << 20)}`], 'ok')]],
  ['many-headers-2000', [response('HTTP/1.1 200 OK', Array.from({ length: 2000 }, (_, i) => `X-H${i}: ${i}`), 'ok')]],
  ['status-http2', [response('HTTP/2.0 200 OK', [], 'ok')]],
  ['status-http2-bare', [response('HTTP/2 200 OK', [], 'ok')]],
  ['status-http10', [response('HTTP/1.0 200 OK', [], 'ok')]],
  ['status-http12', [response('HTTP/1.2 200 OK', [], 'ok')]],
  ['status-http09-ish', ['ok\r\n']],
  ['status-no-reason', [response('HTTP/1.1 200', [], 'ok')]],
  ['status-no-reason-space', [response('HTTP/1.1 200 ', [], 'ok')]],
  ['status-long-reason', [response('HTTP/1.1 200 All Good Here', [], 'ok')]],
  ['status-lowercase-http', [response('http/1.1 200 OK', [], 'ok')]],
  ['status-double-space', [response('HTTP/1.1  200 OK', [], 'ok')]],
  ['status-4-digit', [response('HTTP/1.1 2000 OK', [], 'ok')]],
  ['status-2-digit', [response('HTTP/1.1 20 OK', [], 'ok')]],
  ['status-alpha', [response('HTTP/1.1 abc OK', [], 'ok')]],
  ['status-negative', [response('HTTP/1.1 -200 OK', [], 'ok')]],
  ['status-icy', [response('ICY 200 OK', [], 'ok')]],
  ['status-leading-space', [response(' HTTP/1.1 200 OK', [], 'ok')]],
  ['status-100-then-200', ['HTTP/1.1 100 Continue\r\n\r\n', response('HTTP/1.1 200 OK', [], 'ok')]],
  ['status-103-then-503', ['HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n', response('HTTP/1.1 503 Unavailable', [], 'no')]],
  ['status-101-switching', ['HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n']],
  ['te-gzip', [response('HTTP/1.1 200 OK', ['Transfer-Encoding: gzip'], gz)]],
  ['te-chunked-gzip', [response('HTTP/1.1 200 OK', ['Transfer-Encoding: gzip, chunked'], `${gz.length.toString(16)}\r\n${gz.toString('latin1')}\r\n0\r\n\r\n`)]],
  ['te-identity', [response('HTTP/1.1 200 OK', ['Transfer-Encoding: identity', 'Content-Length: 2'], 'ok')]],
  ['te-chunked-uppercase', [response('HTTP/1.1 200 OK', ['Transfer-Encoding: CHUNKED'], '2\r\nok\r\n0\r\n\r\n')]],
  ['te-and-cl', [response('HTTP/1.1 200 OK', ['Transfer-Encoding: chunked', 'Content-Length: 100'], '2\r\nok\r\n0\r\n\r\n')]],
  ['te-chunked-twice', [response('HTTP/1.1 200 OK', ['Transfer-Encoding: chunked', 'Transfer-Encoding: chunked'], '2\r\nok\r\n0\r\n\r\n')]],
  ['chunked-bad-size', [response('HTTP/1.1 200 OK', ['Transfer-Encoding: chunked'], 'zz\r\nok\r\n0\r\n\r\n')]],
  ['chunked-missing-crlf', [response('HTTP/1.1 200 OK', ['Transfer-Encoding: chunked'], '2\r\nokX0\r\n\r\n')]],
  ['chunked-truncated', [response('HTTP/1.1 200 OK', ['Transfer-Encoding: chunked'], '10\r\nshort')]],
  ['chunked-no-terminator', [response('HTTP/1.1 200 OK', ['Transfer-Encoding: chunked'], '2\r\nok\r\n')]],
  ['chunked-503-bad', [response('HTTP/1.1 503 Unavailable', ['Transfer-Encoding: chunked'], 'zz\r\n')]],
  ['cl-huge', [response('HTTP/1.1 200 OK', ['Content-Length: 99999999999999999999'], 'ok')]],
  ['cl-negative', [response('HTTP/1.1 200 OK', ['Content-Length: -1'], 'ok')]],
  ['cl-plus', [response('HTTP/1.1 200 OK', ['Content-Length: +2'], 'ok')]],
  ['cl-duplicate-same', [response('HTTP/1.1 200 OK', ['Content-Length: 2', 'Content-Length: 2'], 'ok')]],
  ['cl-duplicate-differ', [response('HTTP/1.1 200 OK', ['Content-Length: 2', 'Content-Length: 3'], 'ok')]],
  ['cl-list-same', [response('HTTP/1.1 200 OK', ['Content-Length: 2, 2'], 'ok')]],
  ['cl-alpha', [response('HTTP/1.1 200 OK', ['Content-Length: two'], 'ok')]],
  ['cl-longer-than-body', [response('HTTP/1.1 200 OK', ['Content-Length: 10'], 'ok')]],
  ['cl-shorter-than-body', [response('HTTP/1.1 200 OK', ['Content-Length: 1'], 'ok')]],
  ['cl-longer-503', [response('HTTP/1.1 503 Unavailable', ['Content-Length: 10'], 'no')]],
  ['header-no-colon', ['HTTP/1.1 200 OK\r\nNoColonHere\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok']],
  ['header-space-before-colon', ['HTTP/1.1 200 OK\r\nX-Bad : v\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok']],
  ['header-nul-value', ['HTTP/1.1 200 OK\r\nX-Nul: a\0b\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok']],
  ['header-empty-name', ['HTTP/1.1 200 OK\r\n: v\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok']],
  ['header-utf8-value', [Buffer.from('HTTP/1.1 200 OK\r\nX-U: é✓\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok', 'utf8')]],
  ['close-immediately', []],
  ['reset-immediately', [reset]],
  ['close-mid-status', ['HTTP/1.1 20']],
  ['close-mid-headers', ['HTTP/1.1 200 OK\r\nContent-Len']],
  ['reset-after-head', ['HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n', { delayMs: 20 }, reset]],
  ['reset-mid-body', ['HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nok', { delayMs: 20 }, reset]],
  ['reset-after-full', [response('HTTP/1.1 200 OK', [], 'ok'), { delayMs: 20 }, reset]],
  ['hang-no-response', [hang]],
  ['hang-mid-headers', ['HTTP/1.1 200 OK\r\n', hang]],
  ['hang-mid-body', ['HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nok', hang]],
  ['hang-mid-body-503', ['HTTP/1.1 503 Unavailable\r\nContent-Length: 10\r\n\r\nno', hang]],
  ['garbage', ['\x00\x01\x02garbage\r\n\r\n']],
  ['tls-alert-bytes', [Buffer.from([0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28])]],
];
const malformedScenarios = malformed.map(([name, steps]) => http(`malformed-${name}`, { type: 'raw', reply: fixed(...steps) }));

// ── Redirects (Location forms from the redirect oracle's tables) ──────────
const lines = (file: string): string[] =>
  readFileSync(new URL(file, import.meta.url), 'utf8')
    .split('\n')
    .filter((l) => l !== '');
const redirectReply =
  (location: string, code = 302): RawReply =>
  (head, ports) => {
    const target = /^GET (\S*)/.exec(head)?.[1] ?? '';
    if (target.startsWith('/start')) return [response(`HTTP/1.1 ${code} Found`, [`Location: ${fill(location, ports)}`], 'redirect body')];
    return [response('HTTP/1.1 200 OK', [], `target ${target}`)];
  };
const redirectScenarios = [
  ...lines('redirects-v4.txt').map((loc, i) => http(`redirect-v4-${String(i).padStart(2, '0')}`, { type: 'raw', reply: redirectReply(loc), aux: true }, { path: '/start' })),
  ...lines('redirects-v6.txt').map((loc, i) => http(`redirect-v6-${String(i).padStart(2, '0')}`, { type: 'raw', reply: redirectReply(loc), aux: true }, { path: '/start', family: 6 })),
  ...[301, 303, 307, 308].map((code) => http(`redirect-code-${code}`, { type: 'raw', reply: redirectReply('/next', code), aux: true }, { path: '/start' })),
  http('redirect-loop', { type: 'raw', reply: fixed(response('HTTP/1.1 302 Found', ['Location: /start'], 'loop')) }, { path: '/start' }),
  http('redirect-no-location', { type: 'raw', reply: fixed(response('HTTP/1.1 302 Found', [], 'nowhere')) }),
  http('redirect-empty-location', { type: 'raw', reply: fixed(response('HTTP/1.1 302 Found', ['Location: '], 'empty')) }),
  http('redirect-to-503', { type: 'raw', reply: (head) => [/^GET \/start/.test(head) ? response('HTTP/1.1 302 Found', ['Location: /down'], 'r') : response('HTTP/1.1 503 Unavailable', [], 'down')] }, { path: '/start' }),
];

// ── TLS ───────────────────────────────────────────────────────────────────
const tlsScenarios = [
  http('tls-200', { type: 'raw', tls: true, reply: ok200 }, { scheme: 'HTTPS' }),
  http('tls-503', { type: 'raw', tls: true, reply: fixed(response('HTTP/1.1 503 Unavailable', [], 'no')) }, { scheme: 'HTTPS' }),
  http('tls-redirect-relative', { type: 'raw', tls: true, reply: redirectReply('/next'), aux: true }, { scheme: 'HTTPS', path: '/start' }),
  http('tls-to-plain-server', { type: 'raw', reply: ok200 }, { scheme: 'HTTPS' }),
  http('tls-plain-to-tls-server', { type: 'raw', tls: true, reply: ok200 }, { scheme: 'HTTP' }),
  http('tls-handshake-hang', { type: 'raw', reply: fixed(hang) }, { scheme: 'HTTPS' }),
  http('tls-close-immediately', { type: 'raw', reply: fixed() }, { scheme: 'HTTPS' }),
  http('tls-h2-offered', { type: 'h2tls' }, { scheme: 'HTTPS' }),
  http('tls-v6-200', { type: 'raw', tls: true, reply: ok200 }, { scheme: 'HTTPS', family: 6 }),
];

// ── Request headers: overrides and removal ───────────────────────────────
const headerSets: readonly [string, HttpHeader[]][] = [
  ['none', []],
  ['custom', [{ name: 'X-Custom', value: 'v' }]],
  ['lowercase-name', [{ name: 'x-lower', value: 'v' }]],
  ['duplicates', [{ name: 'X-Dup', value: 'a' }, { name: 'x-dup', value: 'b' }]],
  ['user-agent', [{ name: 'User-Agent', value: 'mine/1' }]],
  ['user-agent-empty', [{ name: 'User-Agent', value: '' }]],
  ['user-agent-lower', [{ name: 'user-agent', value: 'lower/1' }]],
  ['accept', [{ name: 'Accept', value: 'application/json' }]],
  ['accept-empty', [{ name: 'Accept', value: '' }]],
  ['host', [{ name: 'Host', value: 'example.test' }]],
  ['host-with-port', [{ name: 'Host', value: 'example.test:8443' }]],
  ['host-empty', [{ name: 'Host', value: '' }]],
  ['host-lower', [{ name: 'host', value: 'lower.test' }]],
  ['connection-keep-alive', [{ name: 'Connection', value: 'keep-alive' }]],
  ['connection-close', [{ name: 'Connection', value: 'close' }]],
  ['accept-encoding', [{ name: 'Accept-Encoding', value: 'gzip' }]],
  ['authorization', [{ name: 'Authorization', value: 'Bearer t0k3n' }]],
  ['cookie', [{ name: 'Cookie', value: 'a=b; c=d' }]],
  ['value-spaces', [{ name: 'X-Spaces', value: '  padded  ' }]],
  ['value-utf8', [{ name: 'X-Utf8', value: 'é✓' }]],
  ['many', [{ name: 'B', value: '2' }, { name: 'A', value: '1' }, { name: 'C', value: '3' }]],
  ['content-length', [{ name: 'Content-Length', value: '0' }]],
  ['transfer-encoding', [{ name: 'Transfer-Encoding', value: 'chunked' }]],
  ['invalid-name', [{ name: 'Bad Name', value: 'v' }]],
  ['invalid-value-newline', [{ name: 'X-Bad', value: 'a\nb' }]],
];
const headerScenarios = headerSets.map(([name, headers]) => http(`header-${name}`, { type: 'raw', reply: ok200 }, { headers }));

// ── Paths and queries ─────────────────────────────────────────────────────
const paths: readonly [string, string][] = [
  ['root', '/'], ['empty', ''], ['plain', '/healthz'], ['no-slash', 'healthz'], ['space', '/a b'], ['escaped-space', '/a%20b'],
  ['non-ascii', '/é✓'], ['escaped-non-ascii', '/%C3%A9'], ['bad-escape', '/%zz'], ['lone-percent', '/%'], ['escaped-slash', '/a%2Fb'],
  ['query', '/q?a=b'], ['query-space', '/q?a=b c'], ['query-non-ascii', '/q?name=é✓'], ['query-bad-escape', '/q?a=%41%zz'],
  ['query-only', '?x=1'], ['query-empty', '/q?'], ['query-ampersands', '/q?&&a=1&'], ['fragment', '/a#frag'], ['dot-segments', '/a/../b/./c'],
  ['double-slash', '//host/x'], ['scheme-in-path', 'http://other.test/x'], ['semicolon', '/a;b=c'], ['plus', '/a+b?c+d'], ['tilde', '/~user'],
  ['asterisk', '*'], ['tab', '/a\tb'], ['quote', '/a"b'], ['brackets', '/a[b]'], ['backslash', '/a\\b'], ['pipe-braces', '/a|{b}'],
  ['long', `/${'x'.repeat(4000)}`],
];
/** A strict server: 400 for a request target with bytes RFC 9112 does not allow raw, else 200 echoing the target. */
const strictEcho: RawReply = (head) => {
  const target = /^GET (.*) HTTP\/1\.1\r?\n/.exec(head)?.[1] ?? '';
  if (/[^\x21-\x7e]/.test(target)) return [response('HTTP/1.1 400 Bad Request', [], 'bad request target')];
  return [response('HTTP/1.1 200 OK', [], `target ${target}`)];
};
const pathScenarios = paths.map(([name, path]) => http(`path-${name}`, { type: 'raw', reply: strictEcho }, { path }));

// ── IPv6 ──────────────────────────────────────────────────────────────────
const v6Scenarios = [
  http('v6-200', { type: 'raw', reply: ok200 }, { family: 6 }),
  http('v6-503', { type: 'raw', reply: fixed(response('HTTP/1.1 503 Unavailable', [], 'no')) }, { family: 6 }),
  http('v6-path-query', { type: 'raw', reply: strictEcho }, { family: 6, path: '/q?a=b c' }),
  http('v6-host-header', { type: 'raw', reply: ok200 }, { family: 6, headers: [{ name: 'Host', value: '' }] }),
  http('v6-refused', { type: 'closed' }, { family: 6 }),
  http('v6-reset', { type: 'raw', reply: fixed(reset) }, { family: 6 }),
  http('v6-redirect-relative', { type: 'raw', reply: redirectReply('/next'), aux: true }, { family: 6, path: '/start' }),
  http('refused', { type: 'closed' }),
];

// ── TCP ───────────────────────────────────────────────────────────────────
const tcp = (id: string, target: Target, family: 4 | 6 = 4): Scenario => ({ id, kind: 'tcp', family, timeoutSeconds: 1, target });
const tcpScenarios = [
  tcp('tcp-accept-close', { type: 'raw', reply: fixed() }),
  tcp('tcp-accept-reset', { type: 'raw', reply: fixed(reset) }),
  tcp('tcp-accept-hang', { type: 'raw', reply: fixed(hang) }),
  tcp('tcp-http-server', { type: 'raw', reply: ok200 }),
  tcp('tcp-refused', { type: 'closed' }),
  tcp('tcp-v6-accept-close', { type: 'raw', reply: fixed() }, 6),
  tcp('tcp-v6-refused', { type: 'closed' }, 6),
  tcp('tcp-tls-server', { type: 'raw', tls: true, reply: ok200 }),
];

// ── gRPC ──────────────────────────────────────────────────────────────────
const grpcHeaders = { ':status': 200, 'content-type': 'application/grpc' };
const health = (status: number): Buffer => (status === 0 ? Buffer.alloc(0) : Buffer.from([0x08, status]));
function reply(message: Buffer, opts: { headers?: Record<string, string | number>; trailers?: Record<string, string>; compressed?: boolean } = {}): GrpcReply {
  return (stream) => {
    stream.respond({ ...grpcHeaders, ...opts.headers }, { waitForTrailers: true });
    stream.on('wantTrailers', () => stream.sendTrailers(opts.trailers ?? { 'grpc-status': '0' }));
    stream.end(grpcFrame(opts.compressed === true ? gzipSync(message) : message, opts.compressed));
  };
}
const trailersOnly =
  (code: number, message: string): GrpcReply =>
  (stream) => {
    stream.respond({ ...grpcHeaders, 'grpc-status': code, 'grpc-message': encodeURIComponent(message) }, { endStream: true });
  };
const grpc = (id: string, target: Target, extra: Partial<Scenario> = {}): Scenario => ({ id, kind: 'grpc', family: 4, service: '', timeoutSeconds: 1, target, ...extra });
const serving = reply(health(1));
const grpcScenarios = [
  ...[0, 1, 2, 3, 4].map((s) => grpc(`grpc-health-${s}`, { type: 'grpc', reply: reply(health(s)) })),
  ...[1, 2, 3, 4, 5, 7, 8, 9, 12, 13, 14, 16].map((c) => grpc(`grpc-code-${c}`, { type: 'grpc', reply: trailersOnly(c, `code ${c} here`) })),
  grpc('grpc-code-12-empty-message', { type: 'grpc', reply: trailersOnly(12, '') }),
  grpc('grpc-service-named', { type: 'grpc', reply: serving }, { service: 'my.Service' }),
  grpc('grpc-service-non-ascii', { type: 'grpc', reply: serving }, { service: 'sérvice/✓' }),
  grpc('grpc-compressed-gzip', { type: 'grpc', reply: reply(health(1), { headers: { 'grpc-encoding': 'gzip' }, compressed: true }) }),
  grpc('grpc-compressed-unknown', { type: 'grpc', reply: reply(health(1), { headers: { 'grpc-encoding': 'snappy' }, compressed: true }) }),
  grpc('grpc-compressed-flag-no-encoding', { type: 'grpc', reply: reply(health(1), { compressed: true }) }),
  grpc('grpc-content-type-html', { type: 'grpc', reply: reply(health(1), { headers: { 'content-type': 'text/html' } }) }),
  grpc('grpc-content-type-proto-suffix', { type: 'grpc', reply: reply(health(1), { headers: { 'content-type': 'application/grpc+proto' } }) }),
  grpc('grpc-http-404', { type: 'grpc', reply: (s) => { s.respond({ ':status': 404 }, { endStream: true }); } }),
  grpc('grpc-http-503-grpc-ct', { type: 'grpc', reply: (s) => { s.respond({ ':status': 503, 'content-type': 'application/grpc' }, { endStream: true }); } }),
  grpc('grpc-no-trailers', { type: 'grpc', reply: (s) => { s.respond(grpcHeaders); s.end(grpcFrame(health(1))); } }),
  grpc('grpc-bad-protobuf', { type: 'grpc', reply: reply(Buffer.from([0xff, 0xff, 0xff])) }),
  grpc('grpc-unknown-field', { type: 'grpc', reply: reply(Buffer.from([0x08, 0x01, 0x10, 0x05])) }),
  grpc('grpc-two-messages', { type: 'grpc', reply: (s) => { s.respond(grpcHeaders, { waitForTrailers: true }); s.on('wantTrailers', () => s.sendTrailers({ 'grpc-status': '0' })); s.write(grpcFrame(health(1))); s.end(grpcFrame(health(2))); } }),
  grpc('grpc-hang', { type: 'grpc', reply: () => undefined }),
  grpc('grpc-slow-1500ms', { type: 'grpc', reply: (s) => { setTimeout(() => { if (!s.destroyed) serving(s, 0); }, 1500); } }),
  grpc('grpc-rst-cancel', { type: 'grpc', reply: (s) => s.close(http2.constants.NGHTTP2_CANCEL) }),
  grpc('grpc-rst-internal', { type: 'grpc', reply: (s) => s.close(http2.constants.NGHTTP2_INTERNAL_ERROR) }),
  grpc('grpc-refused-stream-once', { type: 'grpc', reply: (s, i) => { if (i === 0) s.close(http2.constants.NGHTTP2_REFUSED_STREAM); else serving(s, i); } }),
  grpc('grpc-refused-stream-always', { type: 'grpc', reply: (s) => s.close(http2.constants.NGHTTP2_REFUSED_STREAM) }),
  grpc('grpc-goaway', { type: 'grpc', reply: serving, goaway: true }),
  grpc('grpc-http1-server', { type: 'raw', reply: ok200 }),
  grpc('grpc-accept-close', { type: 'raw', reply: fixed() }),
  grpc('grpc-accept-hang', { type: 'raw', reply: fixed(hang) }),
  grpc('grpc-tls-server', { type: 'raw', tls: true, reply: ok200 }),
  grpc('grpc-refused', { type: 'closed' }),
  grpc('grpc-v6-serving', { type: 'grpc', reply: serving }, { family: 6 }),
  grpc('grpc-v6-refused', { type: 'closed' }, { family: 6 }),
  // A real grpc-go server: statuses and deadline races (the reply comes around the 1 s deadline).
  grpc('grpc-real-serving', { type: 'real-grpc' }),
  grpc('grpc-real-not-serving', { type: 'real-grpc' }, { service: 'not-serving' }),
  grpc('grpc-real-unknown-service', { type: 'real-grpc' }, { service: 'no-such-service' }),
  ...[500, 900, 980, 1000, 1020, 1100, 2000].map((ms) => grpc(`grpc-real-slow-${ms}ms`, { type: 'real-grpc' }, { service: `slow-${ms}` })),
  grpc('grpc-real-v6-serving', { type: 'real-grpc' }, { family: 6 }),
];

export const scenarios: readonly Scenario[] = [
  ...statusScenarios, ...bodyScenarios, ...encodingScenarios, ...malformedScenarios, ...redirectScenarios, ...tlsScenarios,
  ...headerScenarios, ...pathScenarios, ...v6Scenarios, ...tcpScenarios, ...grpcScenarios,
];
