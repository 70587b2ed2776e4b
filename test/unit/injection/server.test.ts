import assert from 'node:assert/strict';
import { request } from 'node:https';
import { TLSSocket } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { issueCertificate, startWebhookServer } from '../../../src/injection/index.ts';
import type { KeyPair, WebhookReviewRecord, WebhookServer } from '../../../src/injection/index.ts';
import { systemClock } from '../../../src/kernel/index.ts';

const now = Date.now();
const ca = issueCertificate({ commonName: 'test-ca', notBefore: now - 60_000, notAfter: now + 86_400_000 });
const serving = (): KeyPair => issueCertificate({ commonName: 'localhost', names: ['127.0.0.1'], notBefore: now - 60_000, notAfter: now + 86_400_000, issuer: ca });

interface Reply {
  readonly status: number;
  readonly body: Record<string, unknown>;
  readonly serial: string;
}

function post(port: number, path: string, body: string | Buffer, method = 'POST'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, ca: ca.cert, agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown>, serial: res.socket instanceof TLSSocket ? res.socket.getPeerCertificate().serialNumber : '' });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

void describe('webhook server', () => {
  let server: WebhookServer;
  const records: WebhookReviewRecord[] = [];
  const view = { namespaceLabels: () => ({ 'outprobe.io/inject-readiness-gates': 'enabled' }), policies: () => [], excluded: new Set<string>() };

  before(async () => {
    server = await startWebhookServer({ host: '127.0.0.1', port: 0, tls: serving(), view, clock: systemClock, maxBodyBytes: 64 * 1024, onReview: (r) => records.push(r) });
  });
  after(async () => {
    await server.close();
  });

  void it('answers an AdmissionReview on POST /mutate-pods, ignoring the ?timeout the API server appends', async () => {
    const review = { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'abc', kind: { group: '', version: 'v1', kind: 'Pod' }, operation: 'CREATE', namespace: 'shop', object: { metadata: {}, spec: {} } } };
    const r = await post(server.port, '/mutate-pods?timeout=2s', JSON.stringify(review));
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'abc', allowed: true } });
    assert.equal(records.at(-1)?.result, 'no_policy');
  });

  void it('answers malformed JSON allowed, without a patch', async () => {
    const r = await post(server.port, '/mutate-pods', '{not json');
    assert.equal(r.status, 200);
    assert.deepEqual(r.body['response'], { uid: '', allowed: true });
    assert.equal(records.at(-1)?.result, 'malformed');
  });

  void it('refuses bodies above the limit, other paths and other methods', async () => {
    assert.equal((await post(server.port, '/mutate-pods', Buffer.alloc(65 * 1024, 0x20))).status, 413);
    assert.equal(records.at(-1)?.result, 'too_large');
    assert.equal((await post(server.port, '/other', '{}')).status, 404);
    assert.equal((await post(server.port, '/mutate-pods', '', 'GET')).status, 405);
  });

  // Issue 27, finding 3: stalled bodies from any source used to pile up without bound (40 added 158 MiB).
  void it('refuses a review beyond maxInflight at once (429), and serves again when the stalled ones end', async () => {
    const small = await startWebhookServer({ host: '127.0.0.1', port: 0, tls: serving(), view, clock: systemClock, maxInflight: 2, onReview: (r) => records.push(r) });
    try {
      // Two stalled bodies: headers and 10 of the 100 declared bytes, then nothing.
      const stalled = [0, 1].map(() => {
        const req = request({ host: '127.0.0.1', port: small.port, path: '/mutate-pods', method: 'POST', ca: ca.cert, agent: false, headers: { 'content-type': 'application/json', 'content-length': '100' } });
        req.on('error', () => undefined);
        const answered = new Promise<number>((resolve) => req.on('response', (res) => { res.resume(); resolve(res.statusCode ?? 0); }));
        req.write(' '.repeat(10));
        return { req, answered };
      });
      for (let i = 0; i < 100 && records.filter((r) => r.result === 'busy').length === 0; i++) {
        const r = await post(small.port, '/mutate-pods', '{}');
        if (r.status === 429) {
          assert.equal(records.at(-1)?.result, 'busy');
          break;
        }
        await new Promise((res) => setTimeout(res, 20)); // the stalled requests may not have reached the handler yet
      }
      assert.ok(records.some((r) => r.result === 'busy'), 'a third review was refused while two bodies stalled');
      for (const s of stalled) s.req.end(' '.repeat(90));
      assert.deepEqual(await Promise.all(stalled.map((s) => s.answered)), [200, 200]);
      assert.equal((await post(small.port, '/mutate-pods', '{}')).status, 200);
    } finally {
      await small.close();
    }
  });

  void it('serves a new certificate to new connections after setCertificate', async () => {
    const before = (await post(server.port, '/mutate-pods', '{}')).serial;
    const next = serving();
    server.setCertificate(next);
    const afterSwap = (await post(server.port, '/mutate-pods', '{}')).serial;
    assert.notEqual(afterSwap, before);
  });
});
