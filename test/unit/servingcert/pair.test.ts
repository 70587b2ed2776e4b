import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkPair, pairDigest } from '../../../src/servingcert/index.ts';
import { caAndServing } from './certs.ts';

describe('checkPair', () => {
  const { serving } = caAndServing();
  const other = caAndServing().serving;

  it('accepts a certificate with its own key, and says when it ends and for which names', () => {
    const c = checkPair(serving);
    assert.ok(c.ok);
    assert.match(c.names, /DNS:outprobe-metrics\.outprobe\.svc/);
    assert.match(c.names, /IP Address:127\.0\.0\.1/);
    assert.ok(c.notAfter > Date.now());
    assert.match(c.fingerprint, /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
  });

  it('refuses a key that is not the certificate\'s (a Secret half updated, or paired by hand)', () => {
    assert.deepEqual(checkPair({ cert: serving.cert, key: other.key }), { ok: false, reason: 'tls.key is not the private key of tls.crt' });
  });

  it('refuses what is not PEM', () => {
    const noCert = checkPair({ cert: 'not a certificate', key: serving.key });
    assert.ok(!noCert.ok);
    assert.match(noCert.reason, /^tls\.crt is not a PEM certificate/);
    const noKey = checkPair({ cert: serving.cert, key: '' });
    assert.ok(!noKey.ok);
    assert.match(noKey.reason, /^tls\.key is not a PEM private key/);
  });

  it('digests both files: a change to either is a change', () => {
    assert.equal(pairDigest(serving), pairDigest({ ...serving }));
    assert.notEqual(pairDigest(serving), pairDigest({ cert: serving.cert, key: other.key }));
    assert.notEqual(pairDigest(serving), pairDigest({ cert: other.cert, key: serving.key }));
    // the boundary between the two is part of the digest
    assert.notEqual(pairDigest({ cert: 'ab', key: 'c' }), pairDigest({ cert: 'a', key: 'bc' }));
  });
});
