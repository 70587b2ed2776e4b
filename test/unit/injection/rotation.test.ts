import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { describe, it } from 'node:test';
import { applyRotation, rotationAction } from '../../../src/injection/index.ts';
import type { RotationOptions, WebhookCerts } from '../../../src/injection/index.ts';

const day = 86_400_000;
const t0 = Date.parse('2027-01-01T00:00:00Z');
const o: RotationOptions = { serviceName: 'outprobe-webhook', names: ['outprobe-webhook.outprobe.svc', '127.0.0.1'], caValidityMs: 30 * day, servingValidityMs: 3 * day, propagationMs: 10 * 60_000 };

function created(): WebhookCerts {
  const c = applyRotation('create', undefined, t0, o);
  assert.ok(c !== undefined);
  return c;
}
const bundle = (c: WebhookCerts): X509Certificate[] => (c.caBundle.match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g) ?? []).map((p) => new X509Certificate(p));
const signedBy = (leaf: string, ca: string): boolean => new X509Certificate(leaf).verify(new X509Certificate(ca).publicKey);

void describe('webhook certificate rotation', () => {
  void it('creates a CA and a serving certificate for the service names when there is none', () => {
    assert.equal(rotationAction(undefined, t0, o), 'create');
    const c = created();
    const serving = new X509Certificate(c.serving.cert);
    assert.equal(serving.checkHost('outprobe-webhook.outprobe.svc'), 'outprobe-webhook.outprobe.svc');
    assert.equal(serving.checkIP('127.0.0.1'), '127.0.0.1');
    assert.ok(signedBy(c.serving.cert, c.ca.cert));
    assert.equal(new X509Certificate(c.ca.cert).ca, true);
    assert.equal(rotationAction(c, t0 + day, o), 'keep');
  });

  void it('renews the serving certificate a third before expiry, on the same CA (caBundle unchanged)', () => {
    const c = created();
    assert.equal(rotationAction(c, t0 + 1.9 * day, o), 'keep');
    assert.equal(rotationAction(c, t0 + 2.1 * day, o), 'renew-serving');
    const r = applyRotation('renew-serving', c, t0 + 2.1 * day, o);
    assert.ok(r !== undefined);
    assert.notEqual(r.serving.cert, c.serving.cert);
    assert.ok(signedBy(r.serving.cert, c.ca.cert));
    assert.equal(r.caBundle, c.caBundle);
    assert.equal(rotationAction(r, t0 + 2.2 * day, o), 'keep');
  });

  void it('renews the serving certificate when the service names change', () => {
    assert.equal(rotationAction(created(), t0 + day, { ...o, names: ['other.outprobe.svc'] }), 'renew-serving');
  });

  void it('adds a new CA first in the bundle, and moves the serving certificate to it only after propagation', () => {
    const c = created();
    const at = t0 + 21 * day;
    assert.equal(rotationAction(c, at, o), 'rotate-ca');
    const r = applyRotation('rotate-ca', c, at, o);
    assert.ok(r !== undefined);
    assert.deepEqual(bundle(r).map((x) => x.toString()), [r.ca.cert, c.ca.cert].map((p) => new X509Certificate(p).toString()));
    assert.equal(r.serving.cert, c.serving.cert, 'still served by the old CA, which the bundle keeps');
    // The serving certificate was renewed a third before its own expiry; that is unrelated here.
    const fresh = applyRotation('renew-serving', c, at - 60_000, o);
    assert.ok(fresh !== undefined);
    const rotated = { ...r, serving: fresh.serving };
    assert.equal(rotationAction(rotated, at + 60_000, o), 'keep', 'the new CA has not reached every API server yet');
    assert.equal(rotationAction(rotated, at + 16 * 60_000, o), 'renew-serving');
    const moved = applyRotation('renew-serving', rotated, at + 16 * 60_000, o);
    assert.ok(moved !== undefined);
    assert.ok(signedBy(moved.serving.cert, r.ca.cert));
    assert.equal(bundle(moved).length, 2, 'the old CA stays trusted until it expires');
    assert.equal(bundle(applyRotation('renew-serving', moved, t0 + 31 * day, o) ?? moved).length, 1, 'expired CAs leave the bundle');
  });

  void it('recreates everything when a key does not match its certificate or the CA expired', () => {
    const c = created();
    assert.equal(rotationAction({ ...c, serving: { cert: c.serving.cert, key: c.ca.key } }, t0, o), 'create');
    assert.equal(rotationAction(c, t0 + 31 * day, o), 'create');
  });
});

void describe('certificate names (issue 27 finding 8)', () => {
  void it('an IPv4-mapped IPv6 SAN is encoded as its 16 bytes (it was 14: the dotted tail parsed as one hex group)', () => {
    const c = applyRotation('create', undefined, t0, { ...o, names: ['outprobe-webhook.outprobe.svc', '::ffff:10.1.2.3', '64:ff9b::192.0.2.33'] });
    assert.ok(c !== undefined);
    const serving = new X509Certificate(c.serving.cert);
    assert.equal(serving.subjectAltName, 'DNS:outprobe-webhook.outprobe.svc, IP Address:0:0:0:0:0:FFFF:A01:203, IP Address:64:FF9B:0:0:0:0:C000:221');
    assert.equal(rotationAction(c, t0 + day, { ...o, names: ['outprobe-webhook.outprobe.svc', '::ffff:a01:203', '64:ff9b::c000:221'] }), 'keep', 'the same addresses spelt otherwise');
  });

  void it('IPv6 names compare by address, not spelling: a certificate for fd00::5 is kept, not re-issued on every step', () => {
    const names = ['outprobe-webhook.outprobe.svc', 'fd00::5', '::1'];
    const c = applyRotation('create', undefined, t0, { ...o, names });
    assert.ok(c !== undefined);
    assert.equal(rotationAction(c, t0 + day, { ...o, names }), 'keep');
    assert.equal(rotationAction(c, t0 + day, { ...o, names: ['outprobe-webhook.outprobe.svc', 'FD00:0:0:0::5', '0:0:0:0:0:0:0:1'] }), 'keep');
    assert.equal(rotationAction(c, t0 + day, { ...o, names: ['outprobe-webhook.outprobe.svc', 'fd00::6', '::1'] }), 'renew-serving', 'another address is another name');
  });
});
