// Who may speak for the fleet on the peer port (ADR 0037), with the review played by a
// function (the e2e tier runs the real TokenReview): a pod-bound peer token of the fleet's
// ServiceAccount whose pod is a member now; and the admission lanes: a known token is
// answered before any cap, an unknown token from a member's address has a pool of its own,
// strangers are shed first.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PeerAuth, peerIdentity, plainAddress } from '../../../src/peer/index.ts';
import type { PeerReview } from '../../../src/peer/index.ts';
import type { ReviewLane } from '../../../src/observability/index.ts';
import { FakeClock } from '../../support/fake-clock.ts';

const fleetUser = 'system:serviceaccount:outprobe:outprobe';
const tokens: Record<string, PeerReview> = {
  'r2-token': { username: fleetUser, podName: 'r2', podUid: 'u2', nodeName: 'n2' },
  'r9-token': { username: fleetUser, podName: 'r9', podUid: 'u9', nodeName: 'n1' },
  'other-sa': { username: 'system:serviceaccount:shop:web', podName: 'web-0', podUid: 'w0', nodeName: 'n1' },
  'unbound': { refused: 'not a pod-bound token' },
};

function setup(o: { readonly hold?: () => Promise<void> } = {}) {
  const clock = new FakeClock();
  const members = new Set(['r2/u2']);
  const reviews: ReviewLane[] = [];
  const admissions: string[] = [];
  const auth = new PeerAuth({
    clock,
    review: async (token, lane) => {
      reviews.push(lane);
      await o.hold?.();
      return tokens[token] ?? { refused: 'not authenticated for the peer audience' };
    },
    isFleetUser: (u) => u === fleetUser,
    isMember: (name, uid) => members.has(`${name}/${uid}`),
    isMemberAddress: (ip) => ip === '10.0.0.2',
    onAdmission: (lane, result) => admissions.push(`${lane}:${result}`),
  });
  return { clock, auth, members, reviews, admissions };
}

describe('PeerAuth', () => {
  it('200 only for a pod-bound peer token of the fleet\'s ServiceAccount whose pod is a member now', async () => {
    const s = setup();
    const status = async (token: string | undefined): Promise<number> => (await s.auth.authorize(token === undefined ? undefined : `Bearer ${token}`, '10.0.0.2')).status;
    assert.equal(await status(undefined), 401);
    assert.equal(await status('made-up'), 401);
    assert.equal(await status('unbound'), 401, 'a token bound to no pod speaks for no replica');
    assert.equal(await status('other-sa'), 403);
    assert.equal(await status('r9-token'), 403, 'a fleet pod that is not a member');
    assert.equal(await status('r2-token'), 200);
    s.members.delete('r2/u2');
    assert.equal(await status('r2-token'), 403, 'membership is checked on every request, not cached');
  });

  it('reads the pod from a TokenReview\'s extra; an address in IPv4-mapped form is plain', () => {
    assert.deepEqual(peerIdentity({ authenticated: true, user: { username: fleetUser, uid: 'x', groups: [], extra: { 'authentication.kubernetes.io/pod-name': ['r2'], 'authentication.kubernetes.io/pod-uid': ['u2'] } } }), { username: fleetUser, podName: 'r2', podUid: 'u2', nodeName: undefined });
    assert.deepEqual(peerIdentity({ authenticated: true, user: { username: fleetUser, uid: 'x', groups: [], extra: { 'authentication.kubernetes.io/pod-name': ['a', 'b'], 'authentication.kubernetes.io/pod-uid': ['u'] } } }), { refused: 'not a pod-bound token' });
    assert.deepEqual(peerIdentity({ authenticated: false, reason: 'x' }), { refused: 'not authenticated for the peer audience' });
    assert.equal(plainAddress('::ffff:10.0.0.2'), '10.0.0.2');
    assert.equal(plainAddress('fd00::2'), 'fd00::2');
  });

  it('a flood of strangers is shed while a known peer and a new token from a member\'s address are served', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let holding = false;
    const s = setup({ hold: () => (holding ? gate : Promise.resolve()) });
    // r2's token becomes known before the flood.
    assert.equal((await s.auth.authorize('Bearer r2-token', '10.0.0.2')).status, 200);
    holding = true; // from now on every review hangs: the stranger pool fills and stays full
    const flood = Array.from({ length: 200 }, (_, i) => s.auth.authorize(`Bearer random-${i}`, '10.9.9.9'));
    await new Promise((resolve) => setImmediate(resolve));
    for (let i = 0; i < 50; i++) assert.equal((await s.auth.authorize('Bearer r2-token', '10.0.0.2')).status, 200, 'the known peer is never refused');
    // A member whose token rotated: reviewed in the member lane, not behind the strangers.
    s.members.add('r9/u9');
    const rotated = s.auth.authorize('Bearer r9-token', '10.0.0.2');
    release();
    assert.equal((await rotated).status, 200);
    const results = await Promise.all(flood);
    const shed = results.filter((r) => r.status === 429).length;
    assert.ok(shed >= 190, `${shed} of 200 strangers shed`);
    assert.ok(s.reviews.filter((l) => l === 'stranger').length <= 10, `${s.reviews.filter((l) => l === 'stranger').length} stranger reviews (pool 4, bucket 10)`);
    assert.ok(s.admissions.includes('member:served'));
    assert.equal(s.admissions.filter((a) => a === 'known:served').length, 50);
  });
});
