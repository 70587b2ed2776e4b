// Finding 7 (prototype keys): a logged object whose keys came from input
// (JSON.parse makes `__proto__` an own key) is copied key by key; a plain {}
// target dropped `__proto__` and took its value as the copy's prototype.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { boundFields } from '../../../src/observability/logger.ts';

describe('boundFields with input keys', () => {
  it('keeps __proto__ and constructor as ordinary keys of a nested object', () => {
    const logged = JSON.parse('{"__proto__":{"polluted":true},"constructor":"c","a":2}') as unknown;
    const out = boundFields({ obj: logged });
    assert.equal(JSON.stringify(out), '{"obj":{"__proto__":{"polluted":true},"constructor":"c","a":2}}');
    const obj = out['obj'] as Record<string, unknown>;
    assert.equal(obj['polluted'], undefined);
  });
});
