import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildHeaders, canonicalHeaderKey, headerLines } from '../../../src/probing/http/headers.ts';
import { firstHop, hopRequest, nextHop } from '../../../src/probing/http/redirect.ts';
import type { Hop } from '../../../src/probing/http/redirect.ts';
import type { GoUrl } from '../../../src/probing/http/go-url.ts';
import { kubeletUrl, requestOf } from '../../../src/probing/http/url.ts';

/** The request line of the kubelet's URL for `path` on 127.0.0.1:8080 (a byte string). */
function requestTarget(path: string): string {
  const first = kubeletUrl('HTTP', '127.0.0.1', 8080, path);
  assert.ok(first.ok);
  const request = requestOf(first.url);
  assert.ok(request.ok, JSON.stringify(request));
  return request.url.requestTarget;
}

describe('requestTarget (Go url.Parse + formatURL + http.NewRequest + RequestURI)', () => {
  const cases: [string, string][] = [
    ['', '/'],
    ['/', '/'],
    ['/healthz', '/healthz'],
    ['healthz', '/healthz'],
    ['/path?bar', '/path?bar'],
    ['?foo', '/?foo'],
    ['?', '/?'],
    ['/a/b?x=1&y=2', '/a/b?x=1&y=2'],
    ['/frag#section', '/frag'],
    ['//evil.example/x', '/x'],
    ['//evil.example', '/'],
    ['///x', '///x'],
    ['http://other.example/elsewhere?q', '/elsewhere?q'],
    ['/with space', '/with%20space'],
    ['/ünï', '/%C3%BCn%C3%AF'],
    ['/ok%20encoded', '/ok%20encoded'],
    ['/bad%zzescape', '/bad%25zzescape'],
    // Go keeps RawQuery as written: spaces, raw UTF-8 bytes, bad escapes.
    ['/q?a=b c', '/q?a=b c'],
    ['/q?name=é✓', '/q?name=\xC3\xA9\xE2\x9C\x93'],
    ['/q?a=%41%zz', '/q?a=%41%zz'],
    // url.Parse fails: the whole string is the path, escaped.
    ['/a b%zz?c d', '/a%20b%25zz%3Fc%20d'],
    ['/f#%zz', '/f%23%25zz'],
    ['/a\tb', '/a%09b'],
  ];
  for (const [path, want] of cases) {
    it(`${JSON.stringify(path)} → ${want}`, () => {
      assert.equal(requestTarget(path), want);
    });
  }

  it('a scheme-looking path leaves no host: the transport refuses it, as Go does', () => {
    const first = kubeletUrl('HTTP', '127.0.0.1', 8080, 'mailto:someone');
    assert.ok(first.ok);
    assert.deepEqual(requestOf(first.url), { ok: false, error: 'http: no Host in request URL' });
  });

  it('brackets IPv6 and keeps default ports in the authority', () => {
    const v6 = kubeletUrl('HTTP', '::1', 8080, '/h');
    assert.ok(v6.ok);
    assert.equal(v6.url.host, '[::1]:8080');
    const https = kubeletUrl('HTTPS', '127.0.0.1', 443, '');
    assert.ok(https.ok);
    assert.equal(https.url.host, '127.0.0.1:443');
  });
});

describe('buildHeaders (newProbeRequest) and headerLines (Request.write order)', () => {
  const lines = (h: ReturnType<typeof buildHeaders>): ReturnType<typeof headerLines> => headerLines(h, { referer: undefined, user: undefined, bodyHeaders: true });
  it('sets the kube-probe User-Agent and Accept */* by default', () => {
    const h = buildHeaders([], 'kube-probe/1.37');
    assert.deepEqual(lines(h), [['User-Agent', 'kube-probe/1.37'], ['Accept', '*/*'], ['Connection', 'close']]);
    assert.equal(h.host, undefined);
  });

  it('canonicalises names and keeps duplicates in order', () => {
    const h = buildHeaders([{ name: 'x-foo', value: 'a' }, { name: 'X-FOO', value: 'b' }], 'ua');
    assert.deepEqual(lines(h), [['User-Agent', 'ua'], ['Accept', '*/*'], ['X-Foo', 'a'], ['X-Foo', 'b'], ['Connection', 'close']]);
  });

  it('lets httpHeaders override User-Agent and Accept', () => {
    const h = buildHeaders([{ name: 'user-agent', value: 'mine/1' }, { name: 'accept', value: 'application/json' }], 'ua');
    assert.deepEqual(lines(h), [['User-Agent', 'mine/1'], ['Accept', 'application/json'], ['Connection', 'close']]);
  });

  it('sends only the first User-Agent value, as Go does', () => {
    const h = buildHeaders([{ name: 'User-Agent', value: 'one' }, { name: 'User-Agent', value: 'two' }], 'ua');
    assert.deepEqual(lines(h), [['User-Agent', 'one'], ['Accept', '*/*'], ['Connection', 'close']]);
  });

  it('removes User-Agent and Accept when set to an empty value', () => {
    const h = buildHeaders([{ name: 'User-Agent', value: '' }, { name: 'Accept', value: '' }, { name: 'Accept', value: 'text/plain' }], 'ua');
    assert.deepEqual(lines(h), [['Connection', 'close']]);
  });

  it('takes the first Host header as the request Host, drops body framing headers, keeps Connection (Go adds its close after)', () => {
    const h = buildHeaders(
      [{ name: 'host', value: 'web.example' }, { name: 'Host', value: 'second' }, { name: 'Connection', value: 'keep-alive' }, { name: 'Content-Length', value: '5' }],
      'ua',
    );
    assert.equal(h.host, 'web.example');
    assert.deepEqual(lines(h), [['User-Agent', 'ua'], ['Accept', '*/*'], ['Connection', 'keep-alive'], ['Connection', 'close']]);
  });

  it('canonicalHeaderKey follows textproto', () => {
    assert.equal(canonicalHeaderKey('x-forwarded-for'), 'X-Forwarded-For');
    assert.equal(canonicalHeaderKey('ACCEPT'), 'Accept');
    assert.equal(canonicalHeaderKey('bad header'), 'bad header');
  });
});

describe('nextHop (Go redirect resolution)', () => {
  const start = (path: string): GoUrl => {
    const first = kubeletUrl('HTTP', '127.0.0.1', 8080, path);
    assert.ok(first.ok);
    return first.url;
  };
  const here = firstHop(start('/a/b'), undefined);
  const follow = (from: Hop, location: string): Hop => {
    const next = nextHop(from, '127.0.0.1', location);
    assert.equal(next.kind, 'follow');
    return next.hop;
  };
  const request = (hop: Hop): ReturnType<typeof hopRequest> & { ok: true } => {
    const r = hopRequest(hop);
    assert.ok(r.ok);
    return r;
  };

  it('resolves a relative Location against the current URL and keeps the authority', () => {
    const hop = follow(here, 'c?x=1');
    assert.equal(hop.url.host, '127.0.0.1:8080');
    assert.equal(request(hop).url.requestTarget, '/a/c?x=1');
  });

  it('follows scheme and port changes of an absolute Location, authority as written', () => {
    const hop = request(follow(here, 'https://127.0.0.1:8443/secure')).url;
    assert.deepEqual(hop, { scheme: 'https', hostname: '127.0.0.1', port: 8443, authority: '127.0.0.1:8443', requestTarget: '/secure' });
    const noPort = request(follow(here, 'http://127.0.0.1/x')).url;
    assert.equal(noPort.port, 80);
    assert.equal(noPort.authority, '127.0.0.1');
  });

  it('keeps a Host override through relative Locations only, as Go keeps req.Host (issue #22233)', () => {
    const withHost = firstHop(start('/a/b'), 'web.example');
    assert.equal(follow(withHost, '/c').hostOverride, 'web.example');
    assert.equal(follow(withHost, '//127.0.0.1:9000/x').hostOverride, 'web.example', 'a scheme-relative Location is not url.IsAbs');
    const absolute = follow(withHost, 'http://127.0.0.1:9000/x');
    assert.equal(absolute.hostOverride, undefined);
    assert.equal(follow(absolute, '/again').hostOverride, undefined, 'once dropped, a later relative hop does not bring it back');
  });

  it('compares hostnames as strings: other spellings of the same IP are other hosts', () => {
    for (const loc of ['http://127.000.000.001/', 'http://2130706433/', 'http://0x7f.0.0.1/', 'http://127.0.0.1./', 'http://[::ffff:127.0.0.1]/']) {
      assert.deepEqual(nextHop(here, '127.0.0.1', loc), { kind: 'stop' }, loc);
    }
  });

  it('fails a Location Go cannot parse, naming the current URL', () => {
    assert.deepEqual(nextHop(here, '127.0.0.1', 'http://127.0.0.1:1\\@127.0.0.2/x'), {
      kind: 'error',
      output: 'Get "http://127.0.0.1:8080/a/b": failed to parse Location header "http://127.0.0.1:1\\\\@127.0.0.2/x": parse "http://127.0.0.1:1\\\\@127.0.0.2/x": net/url: invalid userinfo',
    });
  });

  it('refuses schemes other than http and https on the same host, as the transport does', () => {
    assert.deepEqual(hopRequest(follow(here, 'ftp://127.0.0.1/x')), { ok: false, error: 'unsupported protocol scheme "ftp"' });
  });
});
