// Finding 7 (prototype keys): response header names come from the pod. They
// are stored on an object without a prototype and looked up as own keys, so
// `constructor`, `__proto__` and friends are plain headers.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ResponseParser } from '../../../src/probing/http/response-parser.ts';
import type { ResponseHead } from '../../../src/probing/http/response-parser.ts';

function parse(raw: string): { head: ResponseHead | undefined; body: string; ended: boolean } {
  const out = { head: undefined as ResponseHead | undefined, body: '', ended: false };
  const parser = new ResponseParser({
    onHead: (head) => (out.head = head),
    onBody: (chunk) => (out.body += chunk.toString('latin1')),
    onEnd: () => (out.ended = true),
  });
  parser.push(Buffer.from(raw, 'latin1'));
  return out;
}

describe('ResponseParser header names that are Object.prototype members', () => {
  it('keeps constructor, toString and __proto__ as ordinary headers, and the prototype untouched', () => {
    const { head, body, ended } = parse(
      'HTTP/1.1 302 Found\r\nConstructor: a\r\ntoString: b\r\n__proto__: c\r\n__proto__: d\r\nLocation: /next\r\nContent-Length: 2\r\n\r\nok',
    );
    assert.ok(head !== undefined);
    assert.equal(head.headers['constructor'], 'a');
    assert.equal(head.headers['tostring'], 'b');
    assert.ok(Object.hasOwn(head.headers, '__proto__'));
    assert.deepEqual(Object.getOwnPropertyDescriptor(head.headers, '__proto__')?.value, ['c', 'd']);
    assert.equal(Object.getPrototypeOf(head.headers), null);
    assert.equal(head.headers['location'], '/next');
    assert.equal(body, 'ok');
    assert.equal(ended, true);
  });

  it('does not read a Content-Length or Transfer-Encoding from the prototype', () => {
    const { head, body } = parse('HTTP/1.1 200 OK\r\nhasOwnProperty: x\r\nContent-Length: 3\r\n\r\nabc');
    assert.equal(head?.headers['hasownproperty'], 'x');
    assert.equal(body, 'abc');
  });
});
