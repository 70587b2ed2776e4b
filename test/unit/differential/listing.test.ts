import assert from 'node:assert/strict';
import { test } from 'node:test';
import { check, parseListing, reportRows } from '../../differential/listing.ts';
import type { Aspect, Comparison } from '../../differential/run.ts';

const side = { result: 'success', output: 'ok', requests: [] };
const cmp = (id: string, differs: Aspect[]): Comparison => ({ id, kubelet: side, outprobe: side, differs });

const doc = `# x

| scenario | differs | reason |
|---|---|---|
| status-200 | request | header case |
| malformed-te-* | decision, message | Go rejects it |
| not a row | nonsense | ignored |
`;

test('parseListing reads scenario rows and prefix rows, skipping the header and other tables', () => {
  assert.deepEqual(parseListing(doc), [
    { pattern: 'status-200', aspects: ['request'], reason: 'header case' },
    { pattern: 'malformed-te-*', aspects: ['decision', 'message'], reason: 'Go rejects it' },
  ]);
});

test('check fails a difference no entry lists, aspect by aspect', () => {
  const entries = parseListing(doc);
  const { unlisted } = check([cmp('status-200', ['request', 'message']), cmp('malformed-te-gzip', ['decision']), cmp('status-201', ['request'])], entries);
  assert.deepEqual(unlisted, [
    { id: 'status-200', aspects: ['message'] },
    { id: 'status-201', aspects: ['request'] },
  ]);
});

test('check reports listed aspects that no scenario shows any more', () => {
  const { unlisted, stale } = check([cmp('status-200', []), cmp('malformed-te-gzip', ['decision'])], parseListing(doc));
  assert.deepEqual(unlisted, []);
  assert.deepEqual(stale, [
    { pattern: 'status-200', aspect: 'request' },
    { pattern: 'malformed-te-*', aspect: 'message' },
  ]);
});

test('reportRows prints the current differences with reasons carried over, UNLISTED otherwise', () => {
  assert.deepEqual(reportRows([cmp('status-200', ['request']), cmp('status-201', ['decision']), cmp('status-202', [])], parseListing(doc)).slice(2), [
    '| status-200 | request | header case |',
    '| status-201 | decision | UNLISTED: give the reason |',
  ]);
});
