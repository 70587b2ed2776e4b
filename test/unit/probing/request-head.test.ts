import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { getRequestHead, requestHead } from '../../../src/probing/http/probe-dispatcher.ts';

const lines: readonly (readonly [string, string])[] = [
  ['User-Agent', 'kube-probe/1.37'],
  ['Accept', '*/*'],
  ['Connection', 'close'],
];

/** What a result says: the head's bytes, or the error's message. */
const said = (r: string | Error): string => (r instanceof Error ? `Error: ${r.message}` : r);

describe('getRequestHead (the raw path: header lines checked and written once per lines array)', () => {
  it('is requestHead for GET with Host first, byte for byte, for valid and refused requests alike', () => {
    const bad: readonly (readonly [string, string])[] = [['X-Ok', 'v'], ['X-Bad', 'a\r\nb'], ['Bad Name', 'v']];
    const cases: [string, string, readonly (readonly [string, string])[]][] = [
      ['/healthz', '10.0.0.5:8080', lines],
      ['/a b?c=%zz', '[fe80::1%25eth0]:80', lines],
      ['/', 'h\u00e9st', lines], // not a valid Host byte: Go's HTTP/1 writes an empty Host
      ['/', 'bad\nhost', lines], // refused before dialling
      ['/x\r\ny', '10.0.0.5:80', lines], // a path with a line break
      ['/', '10.0.0.5:80', bad], // the first refused header wins
      ['/', '10.0.0.5:80', []],
    ];
    for (const [path, host, ls] of cases) {
      for (let pass = 0; pass < 2; pass++) {
        // pass 1 reads the cached lines text
        assert.equal(said(getRequestHead(path, host, ls)), said(requestHead('GET', path, [['Host', host], ...ls])), `${path} ${host} pass ${pass}`);
      }
    }
  });
});
