import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import type { Clock } from '../../../src/kernel/index.ts';
import { boundFields, createLogger } from '../../../src/observability/index.ts';
import type { LogLevel, Logger } from '../../../src/observability/index.ts';

const clock: Clock = { now: () => Date.UTC(2025, 0, 2, 3, 4, 5, 678), sleepUntil: () => Promise.resolve() };

function capture(level: LogLevel): { logger: Logger; lines: () => Record<string, unknown>[] } {
  const stream = new PassThrough();
  const logger = createLogger({ level, stream, clock });
  const lines = (): Record<string, unknown>[] => {
    const text = String(stream.read() ?? '');
    return text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>);
  };
  return { logger, lines };
}

describe('createLogger', () => {
  it('writes one JSON object per line with time, level, msg and the fields', () => {
    const { logger, lines } = capture('info');
    logger.info('probe failed', { policy: 'ns/p', kind: 'readiness', attempts: 3 });
    assert.deepEqual(lines(), [{ time: '2025-01-02T03:04:05.678Z', level: 'info', msg: 'probe failed', policy: 'ns/p', kind: 'readiness', attempts: 3 }]);
  });

  it('drops lines below the level', () => {
    const { logger, lines } = capture('warn');
    logger.debug('d');
    logger.info('i');
    logger.warn('w');
    logger.error('e');
    assert.deepEqual(lines().map((l) => l['level']), ['warn', 'error']);
  });

  it('child loggers add their fields; a call’s own fields win', () => {
    const { logger, lines } = capture('debug');
    logger.child({ component: 'writeback', policy: 'a/b' }).debug('x', { policy: 'c/d' });
    const [line] = lines();
    assert.equal(line?.['component'], 'writeback');
    assert.equal(line['policy'], 'c/d');
  });

  it('fields cannot overwrite time, level or msg', () => {
    const { logger, lines } = capture('info');
    logger.info('real', { msg: 'forged', level: 'error' });
    const [line] = lines();
    assert.equal(line?.['msg'], 'real');
    assert.equal(line['level'], 'info');
    assert.equal(line['_msg'], 'forged');
  });

  it('serialises errors with code and cause, not the stack', () => {
    const { logger, lines } = capture('info');
    const err = Object.assign(new Error('conflict', { cause: new Error('inner') }), { code: 'Conflict', status: 409 });
    logger.warn('write failed', { err });
    assert.deepEqual(lines()[0]?.['err'], { name: 'Error', message: 'conflict', code: 'Conflict', status: 409, cause: { name: 'Error', message: 'inner' } });
  });
});

describe('boundFields', () => {
  it('cuts long strings, big arrays, deep and cyclic objects', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic['self'] = cyclic;
    const out = boundFields({ long: 'x'.repeat(5000), list: Array.from({ length: 50 }, (_, i) => i), cyclic, big: 10n, skip: undefined });
    assert.ok(typeof out['long'] === 'string' && out['long'].length < 2100);
    assert.equal((out['list'] as unknown[]).length, 21);
    assert.doesNotThrow(() => JSON.stringify(out));
    assert.equal(out['big'], '10');
    assert.ok(!('skip' in out));
  });

  it('keeps at most 32 fields', () => {
    const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`f${i}`, i]));
    const out = boundFields(many);
    assert.equal(Object.keys(out).filter((k) => k.startsWith('f')).length, 32);
    assert.equal(out['_truncatedFields'], true);
  });
});
