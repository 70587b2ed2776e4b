import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TLSSocket } from 'node:tls';
import { describe, it } from 'node:test';
import { Webhook, issueCertificate } from '../../../src/injection/index.ts';
import type { KeyPair, WebhookEvent } from '../../../src/injection/index.ts';
import { systemClock } from '../../../src/kernel/index.ts';

const now = Date.now();
const ca = issueCertificate({ commonName: 'dir-ca', notBefore: now - 60_000, notAfter: now + 86_400_000 });
const serving = (): KeyPair => issueCertificate({ commonName: 'localhost', names: ['127.0.0.1'], notBefore: now - 60_000, notAfter: now + 86_400_000, issuer: ca });

function servedSerial(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/mutate-pods', method: 'POST', ca: ca.cert, agent: false }, (res) => {
      resolve(res.socket instanceof TLSSocket ? res.socket.getPeerCertificate().serialNumber : '');
      res.resume();
    });
    req.on('error', reject);
    req.end('{}');
  });
}

void describe('Webhook with --webhook-cert-dir (cert-manager)', () => {
  void it('serves tls.crt/tls.key from the directory, picks up a renewed pair on the next step, and waits while they are missing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'outprobe-webhook-dir-'));
    const events: WebhookEvent[] = [];
    const webhook = new Webhook({ host: '127.0.0.1', port: 0, clock: systemClock, view: { namespaceLabels: () => undefined, policies: () => [], excluded: new Set() }, certs: { kind: 'dir', dir }, observe: (e) => events.push(e) });
    const signal = new AbortController().signal;
    // Read through a function: the listener appears between steps, which narrowing cannot know.
    const portOf = (): number | undefined => webhook.port;
    try {
      await webhook.step(signal);
      assert.equal(portOf(), undefined, 'no listener without a certificate');
      assert.ok(events.some((e) => e.type === 'webhook-error' && e.stage === 'certs'));
      const first = serving();
      writeFileSync(join(dir, 'tls.crt'), first.cert);
      writeFileSync(join(dir, 'tls.key'), first.key);
      await webhook.step(signal);
      const port = portOf();
      assert.ok(port !== undefined);
      const a = await servedSerial(port);
      const next = serving();
      writeFileSync(join(dir, 'tls.crt'), next.cert);
      writeFileSync(join(dir, 'tls.key'), next.key);
      await webhook.step(signal);
      assert.equal(portOf(), port, 'the same listener');
      assert.notEqual(await servedSerial(port), a);
    } finally {
      await webhook.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
