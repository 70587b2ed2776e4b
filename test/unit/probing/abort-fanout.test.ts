import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { describe, it } from 'node:test';
import { abortLinked, linkAbort, ownedController, unlinkAbort } from '../../../src/probing/abort-fanout.ts';
import type { AbortLink, AbortList } from '../../../src/probing/abort-fanout.ts';
import { Scheduler, tcpProbe } from '../../../src/probing/index.ts';
import { systemClock, systemRandom } from '../../../src/kernel/index.ts';
import { stalledListener, tcpServer } from '../../support/loopback.ts';

class Link implements AbortLink {
  readonly heard: string[];
  readonly name: string;
  abortNext: AbortLink | undefined = undefined;
  abortPrev: AbortLink | undefined = undefined;
  abortList: AbortList | undefined = undefined;
  constructor(name: string, heard: string[]) {
    this.name = name;
    this.heard = heard;
  }
  onAbort(): void {
    this.heard.push(this.name);
  }
}

describe('abort fan-out (one listener per signal)', () => {
  it('calls every linked probe once, in the order they linked, and none that unlinked', () => {
    const heard: string[] = [];
    const controller = new AbortController();
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((name) => new Link(name, heard)) as [Link, Link, Link, Link];
    for (const link of [a, b, c, d]) linkAbort(controller.signal, link);
    unlinkAbort(b); // middle
    unlinkAbort(d); // tail
    unlinkAbort(b); // twice: harmless
    controller.abort();
    controller.abort();
    assert.deepEqual(heard, ['a', 'c']);
    assert.equal(a.abortList, undefined);
    unlinkAbort(a); // after it fired: harmless
  });

  it('keeps one abort listener on a signal however many probes link and unlink', () => {
    const controller = new AbortController();
    const heard: string[] = [];
    for (let i = 0; i < 100; i++) {
      const link = new Link(String(i), heard);
      linkAbort(controller.signal, link);
      assert.equal(getEventListeners(controller.signal, 'abort').length, 1);
      unlinkAbort(link);
    }
    const last = new Link('last', heard);
    linkAbort(controller.signal, last);
    controller.abort();
    assert.deepEqual(heard, ['last']);
  });

  it('links of different signals are apart; relinking moves a link', () => {
    const heard: string[] = [];
    const one = new AbortController();
    const two = new AbortController();
    const a = new Link('a', heard);
    const b = new Link('b', heard);
    linkAbort(one.signal, a);
    linkAbort(one.signal, b);
    linkAbort(two.signal, b);
    one.abort();
    assert.deepEqual(heard, ['a']);
    two.abort();
    assert.deepEqual(heard, ['a', 'b']);
  });

  it('an owned controller tells its links through abortLinked, with no listener on its signal', () => {
    const heard: string[] = [];
    const controller = ownedController();
    const others: string[] = [];
    linkAbort(controller.signal, new Link('a', heard));
    linkAbort(controller.signal, new Link('b', heard));
    assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
    controller.signal.addEventListener('abort', () => others.push(controller.signal.aborted ? 'aborted' : 'not yet'));
    abortLinked(controller, new Error('gone'));
    abortLinked(controller, new Error('again')); // once only
    assert.deepEqual(heard, ['a', 'b']);
    assert.deepEqual(others, ['aborted']);
    assert.equal((controller.signal.reason as Error).message, 'gone');
  });

  it('removing a target cancels its TCP probe in flight at once (the Scheduler aborts through its links)', async () => {
    const stalled = await stalledListener();
    const fillers = await stalled.fill();
    try {
      const scheduler = new Scheduler({ clock: systemClock, random: systemRandom });
      let outcome: unknown;
      let signal: AbortSignal | undefined;
      const ended = new Promise<void>((resolve) => {
        scheduler.upsert({
          key: 'a',
          periodMs: 60_000,
          firstDueAt: 0,
          run: async (s) => {
            signal = s;
            outcome = await tcpProbe({ ip: '127.0.0.1', port: stalled.port, timeoutMs: 10_000 }, s);
            resolve();
          },
        });
      });
      scheduler.step();
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(getEventListeners(signal ?? new AbortController().signal, 'abort').length, 0, 'the probe waits without a listener on the signal');
      const started = performance.now();
      scheduler.remove('a');
      await ended;
      assert.deepEqual(outcome, { kind: 'errored', error: 'probe cancelled' });
      assert.ok(performance.now() - started < 1000);
    } finally {
      for (const f of fillers) f.destroy();
      await stalled.close();
    }
  });

  it('TCP probes sharing one signal leave it one listener, and an abort still cancels the one in flight', async () => {
    const server = await tcpServer((socket) => socket.on('error', () => undefined));
    const controller = new AbortController();
    for (let i = 0; i < 5; i++) {
      const outcome = await tcpProbe({ ip: '127.0.0.1', port: server.port, timeoutMs: 1000 }, controller.signal);
      assert.equal(outcome.kind, 'success');
    }
    assert.ok(getEventListeners(controller.signal, 'abort').length <= 1);
    await server.close();
    const stalled = await stalledListener();
    const fillers = await stalled.fill();
    try {
      const pending = tcpProbe({ ip: '127.0.0.1', port: stalled.port, timeoutMs: 5000 }, controller.signal);
      setTimeout(() => controller.abort(), 50);
      assert.deepEqual(await pending, { kind: 'errored', error: 'probe cancelled' });
    } finally {
      for (const f of fillers) f.destroy();
      await stalled.close();
    }
  });
});
