// ADR 0037: a second opinion that cannot be had (the peers refuse, are overloaded, are not
// reached) is counted by reason and holds a readiness False for a bounded time only; after
// the bound the False goes out on this replica's own verdict (reported once), a remediation
// never does.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { AskError, SecondOpinionGuard, httpAskPeer } from '../../../src/secondopinion/index.ts';
import type { AskPeer, FallbackEvent, Question, SecondOpinionEvent } from '../../../src/secondopinion/index.ts';
import { FakeClock } from '../../support/fake-clock.ts';

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const pod = { namespace: 'shop', name: 'web-0', uid: 'uid-0' };

function setup(fail: () => Error) {
  const clock = new FakeClock();
  const events: SecondOpinionEvent[] = [];
  const ask: AskPeer = () => Promise.reject(fail());
  const guard = new SecondOpinionGuard({ clock, identity: 'r1', peers: () => [{ identity: 'r2', address: 'r2:9444' }, { identity: 'r3', address: 'r3:9444' }], ask, observe: (e) => events.push(e), unavailableAfterMs: 30_000 });
  const q = (action: 'gate_false' | 'remediation', since: number): Question => ({ action, policy: 'shop/web', podUid: pod.uid, probe: 'readiness', since, periodMs: 1000, timeoutMs: 1000, pod, ownView: 'HTTP probe failed' });
  return { clock, guard, events, q };
}

/** Asks every second (the retry delay) for `seconds`; how the guard answered each time. */
async function hold(s: ReturnType<typeof setup>, action: 'gate_false' | 'remediation', since: number, seconds: number): Promise<boolean[]> {
  const out: boolean[] = [];
  for (let i = 0; i <= seconds; i++) {
    out.push(s.guard.confirm(s.q(action, since)));
    await flush();
    s.clock.advance(1000);
  }
  return out;
}

describe('second opinion unavailable (ADR 0037)', () => {
  it('a readiness False is held while the peers answer 429, then proceeds after the bound, reported once; a remediation stays held', async () => {
    const s = setup(() => new AskError('overloaded', 'peer answered HTTP 429'));
    const since = s.clock.now();
    const gate = await hold(s, 'gate_false', since, 40);
    // The first error ends at about t=0 s; the bound is 30 s after it.
    assert.equal(gate.slice(0, 30).some(Boolean), false, 'held for the bound');
    assert.ok(gate.slice(31).every(Boolean), 'then written on this replica\'s own verdict');
    const fallbacks = s.events.filter((e): e is FallbackEvent => e.result === 'fallback');
    assert.equal(fallbacks.length, 1, 'reported once for the run of errors');
    assert.ok(s.events.some((e) => e.result === 'error' && 'errorReason' in e && e.errorReason === 'overloaded'), 'each error carries its reason');

    const r = setup(() => new AskError('refused', 'peer answered HTTP 403'));
    const rem = await hold(r, 'remediation', r.clock.now(), 90);
    assert.equal(rem.some(Boolean), false, 'a remediation never proceeds without a second opinion');
    assert.equal(r.events.some((e) => e.result === 'fallback'), false);
  });

  it('without a bound (0), every failure waits for an answer', async () => {
    const clock = new FakeClock();
    const guard = new SecondOpinionGuard({ clock, identity: 'r1', peers: () => [{ identity: 'r2', address: 'r2:9444' }], ask: () => Promise.reject(new AskError('unreachable', 'x')) });
    for (let i = 0; i < 100; i++) {
      assert.equal(guard.confirm({ action: 'gate_false', policy: 'shop/web', podUid: pod.uid, probe: 'readiness', since: 0, periodMs: 1000, timeoutMs: 1000, pod, ownView: '' }), false);
      await flush();
      clock.advance(1000);
    }
  });
});

describe('httpAskPeer: the reason of each failure', () => {
  let server: Server;
  let status = 429;
  const seen: (string | undefined)[] = [];
  before(async () => {
    server = createServer((req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(status, { 'content-type': 'application/json' }).end(status === 200 ? '{"nope":1}' : '{}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('429 is overloaded, 401/403 refused, 5xx peer_error, a malformed answer protocol, no connection unreachable, no token no_token', async () => {
    const address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    const req = { policy: 'shop/web', podUid: 'u', probe: 'readiness' as const };
    const reasonOf = async (ask: AskPeer, at = address): Promise<string> => {
      try {
        await ask(at, req, AbortSignal.timeout(2000));
        return 'answered';
      } catch (err: unknown) {
        return err instanceof AskError ? err.reason : `plain: ${String(err)}`;
      }
    };
    const ask = httpAskPeer(() => 'peer-token');
    for (const [code, want] of [[429, 'overloaded'], [401, 'refused'], [403, 'refused'], [503, 'peer_error'], [200, 'protocol']] as const) {
      status = code;
      assert.equal(await reasonOf(ask), want, `HTTP ${code}`);
    }
    assert.equal(await reasonOf(ask, '127.0.0.1:1'), 'unreachable');
    assert.equal(await reasonOf(httpAskPeer(() => undefined)), 'no_token');
    assert.ok(seen.every((h) => h === 'Bearer peer-token'), 'only the peer token is presented');
  });
});
