// Issue 27 (ADR 0056): response heads held by probes in flight share one budget beyond a small
// per-probe allowance, so hundreds of hostile 10 MiB heads cannot hold gigabytes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HeadBudget } from '../../../src/probing/head-budget/index.ts';
import { ParseError, ResponseParser, headLineCost } from '../../../src/probing/http/response-parser.ts';
import type { ResponseHead } from '../../../src/probing/http/response-parser.ts';

const KiB = 1024;

function parser(budget: HeadBudget): { p: ResponseParser; out: { head: ResponseHead | undefined } } {
  const out = { head: undefined as ResponseHead | undefined };
  const p = new ResponseParser({ onHead: (h) => (out.head = h), onBody: () => undefined, onEnd: () => undefined }, budget);
  return { p, out };
}

/** `HTTP/1.1 200 OK` and `lines` header lines of `lineBytes` bytes each (CRLF included), no end. */
function head(lines: number, lineBytes: number): Buffer {
  const line = `X-A: ${'a'.repeat(lineBytes - 7)}\r\n`;
  return Buffer.from(`HTTP/1.1 200 OK\r\n${line.repeat(lines)}`, 'latin1');
}

function errorOf(f: () => void): string {
  try {
    f();
  } catch (err: unknown) {
    assert.ok(err instanceof ParseError);
    return err.message;
  }
  return '';
}

describe('HeadBudget', () => {
  it('a lease draws only what exceeds the free bytes, is refused past the pool, and gives back on release', () => {
    const b = new HeadBudget({ capacityBytes: 100, freeBytesPerProbe: 10 });
    const a = b.lease();
    const c = b.lease();
    assert.equal(a.hold(10), true);
    assert.equal(b.heldBytes, 0, 'within the free bytes: nothing drawn');
    assert.equal(a.hold(70), true);
    assert.equal(b.heldBytes, 60);
    assert.equal(c.hold(50), true);
    assert.equal(b.heldBytes, 100);
    assert.equal(c.hold(51), false, 'one byte more overdraws the pool');
    assert.equal(b.refused, 1);
    a.release();
    a.release();
    assert.equal(b.heldBytes, 40);
    assert.equal(c.hold(51), true);
    c.release();
    assert.equal(b.heldBytes, 0);
    assert.equal(b.peakBytes, 100);
  });
});

describe('ResponseParser with a shared head budget (ADR 0056)', () => {
  it('heads within the free bytes never draw: a full pool does not touch an ordinary response', () => {
    const b = new HeadBudget({ capacityBytes: 64 * KiB, freeBytesPerProbe: 64 * KiB });
    const hog = parser(b);
    hog.p.push(head(100, 1024));
    assert.ok(b.heldBytes > 40 * KiB, `${b.heldBytes}`);
    const ok = parser(b);
    ok.p.push(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX-Big: ' + 'c'.repeat(8000) + '\r\n\r\n', 'latin1'));
    assert.equal(ok.out.head?.statusCode, 200);
  });

  it('a head that would overdraw the pool fails like an oversized head, with the limit it had, and its bytes go back', () => {
    const b = new HeadBudget({ capacityBytes: 100 * KiB, freeBytesPerProbe: 64 * KiB });
    const first = parser(b);
    first.p.push(head(100, 1024)); // 100 KiB + line costs: 36 KiB and a bit drawn
    const drawn = b.heldBytes;
    assert.ok(drawn > 36 * KiB && drawn < 48 * KiB, `${drawn}`);
    const second = parser(b);
    const line = Buffer.from(`X-B: ${'b'.repeat(1017)}\r\n`, 'latin1');
    second.p.push(head(1, 1024));
    const message = errorOf(() => {
      for (let i = 0; i < 200; i++) second.p.push(line);
    });
    const limit = 64 * KiB + 100 * KiB - drawn;
    assert.equal(message, `net/http: server response headers exceeded ${limit} bytes; aborted (outprobe's response-head budget of ${100 * KiB} bytes for probes in flight is spent)`);
    second.p.release();
    assert.equal(b.heldBytes, drawn, 'the refused probe holds nothing');
    first.p.release();
    assert.equal(b.heldBytes, 0);
    assert.equal(b.refused, 1);
  });

  it('one long line without LF counts as it arrives', () => {
    const b = new HeadBudget({ capacityBytes: 16 * KiB, freeBytesPerProbe: 64 * KiB });
    const { p } = parser(b);
    p.push(Buffer.from('HTTP/1.1 200 OK\r\nX-Long: ', 'latin1'));
    const chunk = Buffer.alloc(8 * KiB, 0x61);
    const message = errorOf(() => {
      for (let i = 0; i < 20; i++) p.push(chunk);
    });
    assert.match(message, /^net\/http: server response headers exceeded \d+ bytes; aborted \(outprobe's response-head budget/);
    assert.equal(b.heldBytes, 0);
  });

  it('tiny lines cost their map slot too: 20,000 `a:b` lines (100 KB) draw over 1.3 MB', () => {
    const b = new HeadBudget({ capacityBytes: 64 << 20, freeBytesPerProbe: 0 });
    const { p } = parser(b);
    p.push(Buffer.from(`HTTP/1.1 200 OK\r\n${'a:b\r\n'.repeat(20_000)}`, 'latin1'));
    assert.ok(b.heldBytes >= 20_000 * (5 + headLineCost), `${b.heldBytes}`);
    p.release();
    assert.equal(b.heldBytes, 0);
  });

  it('a header repeated 100,000 times parses in linear time (each repeat copied the array before)', () => {
    const b = new HeadBudget({ capacityBytes: 1 << 30 });
    const { p, out } = parser(b);
    const started = performance.now();
    p.push(Buffer.from(`HTTP/1.1 200 OK\r\n${'a: b\r\n'.repeat(100_000)}Content-Length: 0\r\n\r\n`, 'latin1'));
    const ms = performance.now() - started;
    assert.equal((out.head?.headers['a'] as string[]).length, 100_000);
    assert.ok(ms < 1000, `${Math.round(ms)} ms`);
  });
});

describe('head budget metrics', () => {
  it('exports what is drawn, the capacity, and the refusals', async () => {
    const { Registry } = await import('prom-client');
    const { watchHeadBudget } = await import('../../../src/observability/index.ts');
    const registry = new Registry();
    const b = new HeadBudget({ capacityBytes: 100, freeBytesPerProbe: 0 });
    watchHeadBudget(registry, b);
    const l = b.lease();
    l.hold(60);
    l.hold(101);
    const text = await registry.metrics();
    assert.match(text, /outprobe_probe_head_budget_bytes\{state="held"\} 60/);
    assert.match(text, /outprobe_probe_head_budget_bytes\{state="capacity"\} 100/);
    assert.match(text, /outprobe_probe_head_budget_refused_total 1/);
  });
});
