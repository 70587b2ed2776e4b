import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildHeaders, canonicalHeaderKey } from '../../../src/probing/http/headers.ts';
import { nextHop } from '../../../src/probing/http/redirect.ts';
import { probeUrl, probeUrlString, requestTarget } from '../../../src/probing/http/url.ts';

describe('requestTarget (Go url.Parse + formatURL)', () => {
  const cases: [string, string][] = [
    ['', '/'],
    ['/', '/'],
    ['/healthz', '/healthz'],
    ['healthz', '/healthz'],
    ['/path?bar', '/path?bar'],
    ['?foo', '/?foo'],
    ['/a/b?x=1&y=2', '/a/b?x=1&y=2'],
    ['/frag#section', '/frag'],
    ['//evil.example/x', '/x'],
    ['//evil.example', '/'],
    ['http://other.example/elsewhere?q', '/elsewhere?q'],
    ['/with space', '/with%20space'],
    ['/ünï', '/%C3%BCn%C3%AF'],
    ['/ok%20encoded', '/ok%20encoded'],
    ['/bad%zzescape', '/bad%25zzescape'],
  ];
  for (const [path, want] of cases) {
    it(`${JSON.stringify(path)} → ${want}`, () => {
      assert.equal(requestTarget(path), want);
    });
  }

  it('brackets IPv6 and keeps default ports in the authority', () => {
    const v6 = probeUrl('HTTP', '::1', 8080, '/h');
    assert.equal(probeUrlString(v6), 'http://[::1]:8080/h');
    assert.equal(probeUrl('HTTPS', '127.0.0.1', 443, '').authority, '127.0.0.1:443');
    assert.equal(probeUrl('HTTP', '127.0.0.1', 80, '').authority, '127.0.0.1:80');
  });
});

describe('buildHeaders (newProbeRequest)', () => {
  it('sets the kube-probe User-Agent and Accept */* by default', () => {
    const h = buildHeaders([], 'kube-probe/1.37');
    assert.deepEqual(h.list, [['User-Agent', 'kube-probe/1.37'], ['Accept', '*/*']]);
    assert.equal(h.host, undefined);
  });

  it('canonicalises names and keeps duplicates in order', () => {
    const h = buildHeaders([{ name: 'x-foo', value: 'a' }, { name: 'X-FOO', value: 'b' }], 'ua');
    assert.deepEqual(h.list, [['User-Agent', 'ua'], ['X-Foo', 'a'], ['X-Foo', 'b'], ['Accept', '*/*']]);
  });

  it('lets httpHeaders override User-Agent and Accept', () => {
    const h = buildHeaders([{ name: 'user-agent', value: 'mine/1' }, { name: 'accept', value: 'application/json' }], 'ua');
    assert.deepEqual(h.list, [['User-Agent', 'mine/1'], ['Accept', 'application/json']]);
  });

  it('sends only the first User-Agent value, as Go does', () => {
    const h = buildHeaders([{ name: 'User-Agent', value: 'one' }, { name: 'User-Agent', value: 'two' }], 'ua');
    assert.deepEqual(h.list, [['User-Agent', 'one'], ['Accept', '*/*']]);
  });

  it('removes User-Agent and Accept when set to an empty value', () => {
    const h = buildHeaders([{ name: 'User-Agent', value: '' }, { name: 'Accept', value: '' }, { name: 'Accept', value: 'text/plain' }], 'ua');
    assert.deepEqual(h.list, []);
  });

  it('takes the first Host header as the request Host and drops transport headers', () => {
    const h = buildHeaders(
      [{ name: 'host', value: 'web.example' }, { name: 'Host', value: 'second' }, { name: 'Connection', value: 'keep-alive' }, { name: 'Content-Length', value: '5' }],
      'ua',
    );
    assert.equal(h.host, 'web.example');
    assert.deepEqual(h.list, [['User-Agent', 'ua'], ['Accept', '*/*']]);
  });

  it('canonicalHeaderKey follows textproto', () => {
    assert.equal(canonicalHeaderKey('x-forwarded-for'), 'X-Forwarded-For');
    assert.equal(canonicalHeaderKey('ACCEPT'), 'Accept');
    assert.equal(canonicalHeaderKey('bad header'), 'bad header');
  });
});

describe('nextHop (Go redirect resolution)', () => {
  const here = probeUrl('HTTP', '127.0.0.1', 8080, '/a/b');

  it('resolves a relative Location against the current URL and keeps the authority', () => {
    const hop = nextHop(here, 'c?x=1');
    assert.ok(!('error' in hop));
    assert.equal(hop.relative, true);
    assert.equal(hop.url.authority, '127.0.0.1:8080');
    assert.equal(hop.url.requestTarget, '/a/c?x=1');
  });

  it('follows scheme and port changes of an absolute Location, authority as written', () => {
    const hop = nextHop(here, 'https://127.0.0.1:8443/secure');
    assert.ok(!('error' in hop));
    assert.equal(hop.relative, false);
    assert.equal(hop.url.scheme, 'https');
    assert.equal(hop.url.port, 8443);
    assert.equal(hop.url.authority, '127.0.0.1:8443');
    const noPort = nextHop(here, 'http://127.0.0.1/x');
    assert.ok(!('error' in noPort));
    assert.equal(noPort.url.port, 80);
    assert.equal(noPort.url.authority, '127.0.0.1');
  });

  it('treats a scheme-relative Location as relative for the Host rule (url.IsAbs)', () => {
    const hop = nextHop(here, '//127.0.0.1:9000/x');
    assert.ok(!('error' in hop));
    assert.equal(hop.relative, true);
    assert.equal(hop.url.authority, '127.0.0.1:9000');
  });

  it('refuses schemes other than http and https', () => {
    assert.deepEqual(nextHop(here, 'ftp://127.0.0.1/x'), { error: 'unsupported protocol scheme "ftp"' });
  });
});
