import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CertReloader, defaultReloadIntervalMs } from '../../../src/servingcert/index.ts';
import type { ReloadEvent, ServingPair } from '../../../src/servingcert/index.ts';
import { FakeClock } from '../../support/fake-clock.ts';
import { caAndServing } from './certs.ts';

function rig(initial: ServingPair): { reloader: CertReloader; clock: FakeClock; applied: ServingPair[]; events: ReloadEvent[]; disk: { pair: ServingPair | Error } } {
  const clock = new FakeClock(Date.now());
  const applied: ServingPair[] = [];
  const events: ReloadEvent[] = [];
  const disk: { pair: ServingPair | Error } = { pair: initial };
  const reloader = new CertReloader({
    read: () => (disk.pair instanceof Error ? Promise.reject(disk.pair) : Promise.resolve(disk.pair)),
    apply: (p) => applied.push(p),
    clock,
    serving: initial,
    observe: (e) => events.push(e),
  });
  return { reloader, clock, applied, events, disk };
}

describe('CertReloader', () => {
  const first = caAndServing().serving;
  const second = caAndServing().serving;

  it('serves a changed pair, once, and nothing while the files stay the same', async () => {
    const r = rig(first);
    assert.equal(await r.reloader.step(), 'unchanged');
    r.disk.pair = { ...second };
    assert.equal(await r.reloader.step(), 'loaded');
    assert.equal(await r.reloader.step(), 'unchanged');
    assert.deepEqual(r.applied, [second]);
    assert.equal(r.events.length, 1);
    const e = r.events[0];
    assert.ok(e?.type === 'cert-loaded');
    assert.equal(e.expired, false);
    assert.match(e.names, /outprobe-metrics/);
  });

  it('keeps the pair in service while the files are broken, says so once per reason, and takes the next good pair', async () => {
    const r = rig(first);
    r.disk.pair = { cert: second.cert, key: first.key }; // the kubelet or a person half way through
    assert.equal(await r.reloader.step(), 'rejected');
    assert.equal(await r.reloader.step(), 'rejected');
    r.disk.pair = new Error('ENOENT: no such file or directory, open \'/certs/tls.crt\'');
    assert.equal(await r.reloader.step(), 'unreadable');
    assert.equal(await r.reloader.step(), 'unreadable');
    assert.deepEqual(r.applied, []);
    assert.deepEqual(r.events.map((e) => e.type), ['cert-rejected', 'cert-unreadable']);
    assert.equal((r.events[0] as { reason: string }).reason, 'tls.key is not the private key of tls.crt');
    r.disk.pair = second;
    assert.equal(await r.reloader.step(), 'loaded');
    assert.deepEqual(r.applied, [second]);
    // broken again after a good pair: reported again
    r.disk.pair = { cert: first.cert, key: second.key };
    assert.equal(await r.reloader.step(), 'rejected');
    assert.deepEqual(r.events.map((e) => e.type), ['cert-rejected', 'cert-unreadable', 'cert-loaded', 'cert-rejected']);
  });

  it('a pair the TLS layer refuses is rejected, never thrown, and the next one is taken', async () => {
    const r = rig(first);
    let refuse = true;
    const reloader = new CertReloader({
      read: () => Promise.resolve(r.disk.pair as typeof first),
      apply: (p) => {
        if (refuse) throw new Error('ee key too small');
        r.applied.push(p);
      },
      clock: r.clock,
      serving: first,
      observe: (e) => r.events.push(e),
    });
    r.disk.pair = second;
    assert.equal(await reloader.step(), 'rejected');
    assert.equal(await reloader.step(), 'rejected');
    assert.deepEqual(r.events, [{ type: 'cert-rejected', reason: 'not accepted by TLS: ee key too small' }]);
    refuse = false;
    r.disk.pair = { ...second, cert: `${second.cert}\n` };
    assert.equal(await reloader.step(), 'loaded');
    assert.equal(r.applied.length, 1);
  });

  it('going back to the pair in service is no change', async () => {
    const r = rig(first);
    r.disk.pair = { cert: first.cert, key: second.key };
    assert.equal(await r.reloader.step(), 'rejected');
    r.disk.pair = first;
    assert.equal(await r.reloader.step(), 'unchanged');
    assert.deepEqual(r.applied, []);
  });

  it('reports an expired pair it serves as expired', async () => {
    const now = Date.now();
    const expired = caAndServing(['x.svc'], now - 10 * 24 * 3600 * 1000, now - 1000).serving;
    const r = rig(first);
    r.disk.pair = expired;
    assert.equal(await r.reloader.step(), 'loaded');
    assert.equal((r.events[0] as { expired: boolean }).expired, true);
  });

  it('reads every interval until stopped', async () => {
    const r = rig(first);
    let reads = 0;
    const reloader = new CertReloader({ read: () => { reads++; return Promise.resolve(second); }, apply: (p) => r.applied.push(p), clock: r.clock, serving: first });
    const stop = new AbortController();
    const done = reloader.run(stop.signal);
    const tick = async (): Promise<void> => {
      for (let i = 0; i < 5; i++) await Promise.resolve();
    };
    await tick();
    assert.equal(reads, 0, 'the pair in service was read at startup');
    r.clock.advance(defaultReloadIntervalMs - 1);
    await tick();
    assert.equal(reads, 0);
    r.clock.advance(1);
    await tick();
    assert.equal(reads, 1);
    assert.deepEqual(r.applied, [second]);
    r.clock.advance(defaultReloadIntervalMs);
    await tick();
    assert.equal(reads, 2);
    stop.abort();
    await done;
    assert.equal(r.clock.pendingSleepers, 0);
  });
});
