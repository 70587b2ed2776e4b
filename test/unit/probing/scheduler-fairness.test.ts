import assert from 'node:assert/strict';
import type net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createHttpProber, Scheduler } from '../../../src/probing/index.ts';
import type { HttpProbeRequest, Outcome } from '../../../src/probing/index.ts';
import { FakeClock } from '../../support/fake-clock.ts';
import { httpServer, tcpServer } from '../../support/loopback.ts';
import type { Listening } from '../../support/loopback.ts';

/**
 * Finding 2 of the trust-boundaries issue, with real executors on loopback:
 * a hostile namespace whose targets accept connections and never answer
 * (timeoutSeconds 3600), more of them than the scheduler's concurrency, beside
 * a victim namespace with one healthy 1 s HTTP probe. The scheduler runs on a
 * fake clock (the victim's probes take real time but no scheduler time), so the
 * victim's period is checked exactly, not against a busy machine's timers.
 */
describe('Scheduler fair share against real loopback servers', () => {
  const accepted = new Set<net.Socket>();
  let silent: Listening;
  let healthy: Listening;

  before(async () => {
    silent = await tcpServer((socket) => {
      accepted.add(socket); // accept, read nothing, answer nothing
    });
    healthy = await httpServer((_req, res) => res.end('ok\n'));
  });

  after(async () => {
    await silent.close();
    await healthy.close();
  });

  it("a hostile namespace that fills every slot with hung probes does not stretch a victim's 1 s period", async () => {
    const concurrency = 8;
    const clock = new FakeClock(0);
    const scheduler = new Scheduler({ clock, random: () => 0.5, concurrency });
    const prober = createHttpProber({ userAgent: 'kube-probe/1.37' });
    const request = (port: number, timeoutMs: number): HttpProbeRequest => ({ scheme: 'HTTP', ip: '127.0.0.1', port, path: '/healthz', headers: [], timeoutMs });

    let hostileStarts = 0;
    for (let i = 0; i < 40; i++) {
      scheduler.upsert({
        key: `hostile/policy-${i}/pod-${i}`,
        periodMs: 1_000,
        firstDueAt: 0,
        share: { namespace: 'hostile', policy: `hostile/policy-${i}` },
        run: async (signal) => {
          hostileStarts++;
          await prober(request(silent.port, 3_600_000), signal);
        },
      });
    }
    const victim: { starts: number[]; outcomes: Outcome[]; pass: Promise<void> | undefined } = { starts: [], outcomes: [], pass: undefined };
    scheduler.upsert({
      key: 'victim/web/pod-0',
      periodMs: 1_000,
      firstDueAt: 0,
      share: { namespace: 'victim', policy: 'victim/web' },
      run: (signal) => {
        victim.starts.push(clock.now());
        victim.pass = prober(request(healthy.port, 1_000), signal).then((o) => {
          victim.outcomes.push(o);
        });
        return victim.pass;
      },
    });

    // 15 s of scheduler time in 50 ms steps; a victim probe started in a step
    // completes (on the real network) before time moves on.
    for (let t = 0; t <= 15_000; t += 50) {
      clock.set(t);
      scheduler.step();
      if (victim.pass !== undefined) await victim.pass;
      victim.pass = undefined;
      await new Promise((resolve) => setImmediate(resolve));
    }

    try {
      const gaps = victim.starts.slice(1).map((s, i) => s - (victim.starts[i] ?? 0));
      assert.ok(victim.starts.length >= 15 && victim.starts.length <= 17, `victim probe starts in 15 s at a 1 s period: ${victim.starts.length} (${victim.starts.join(', ')})`);
      assert.ok(gaps.every((g) => g >= 900 && g <= 1_100), `gaps between victim starts: ${gaps.join(', ')}`);
      assert.ok(victim.outcomes.every((o) => o.kind === 'success'), JSON.stringify(victim.outcomes.find((o) => o.kind !== 'success')));
      assert.equal(hostileStarts, concurrency, 'the hostile namespace holds the slots it took, and gets no more while it holds them');
      assert.ok(accepted.size >= concurrency, `hung connections accepted: ${accepted.size}`);
    } finally {
      for (let i = 0; i < 40; i++) scheduler.remove(`hostile/policy-${i}/pod-${i}`);
      scheduler.remove('victim/web/pod-0');
      await scheduler.idle();
    }
  });
});
