// The metrics port over TLS (ADR 0068) on loopback: the observability server with a pair,
// verified by a client that trusts its CA, refused by one that does not, still
// authenticating /metrics, health open to an unverifying client (the kubelet's HTTPS
// probe), TLS 1.1 refused, and a certificate changed on disk served without a restart.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { connect } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { systemClock } from '../../../src/kernel/index.ts';
import { Metrics, silentLogger, startObservabilityServer } from '../../../src/observability/index.ts';
import type { AuthDecision, ObservabilityServer } from '../../../src/observability/index.ts';
import { loadServingCert } from '../../../src/servingcert/index.ts';
import type { ServingPair } from '../../../src/servingcert/index.ts';
import { caAndServing } from './certs.ts';

const serverName = 'outprobe-metrics.outprobe.svc';

interface Answer { readonly status: number; readonly body: string; readonly fingerprint: string }

/** One GET on a fresh connection (no agent: a swapped certificate shows on the next request). */
function get(port: number, p: string, o: { ca?: string; token?: string; insecure?: boolean } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({
      host: '127.0.0.1', port, path: p, agent: false, servername: serverName, timeout: 5000,
      ...(o.ca === undefined ? {} : { ca: o.ca }),
      ...(o.insecure === true ? { rejectUnauthorized: false } : {}),
      ...(o.token === undefined ? {} : { headers: { authorization: `Bearer ${o.token}` } }),
    }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, fingerprint: (res.socket as unknown as { getPeerCertificate(): { fingerprint256: string } }).getPeerCertificate().fingerprint256 }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

const authorize = (h: string | undefined): Promise<AuthDecision> =>
  Promise.resolve(h === 'Bearer reader' ? { status: 200, message: '' } : h === undefined ? { status: 401, message: 'Unauthorized' } : { status: 403, message: 'Forbidden' });

describe('observability server over TLS', () => {
  const one = caAndServing([serverName, '127.0.0.1']);
  const two = caAndServing([serverName]);
  let server: ObservabilityServer;

  before(async () => {
    const metrics = new Metrics({ defaultMetrics: false });
    metrics.setShardMembers(3);
    server = await startObservabilityServer({ host: '127.0.0.1', port: 0, metrics, ready: () => true, authorizeMetrics: authorize, tls: one.serving });
  });
  after(() => server.close());

  it('serves /metrics to a client that trusts its CA, authentication still enforced', async () => {
    assert.equal(server.tls, true);
    const ok = await get(server.port, '/metrics', { ca: one.ca.cert, token: 'reader' });
    assert.equal(ok.status, 200);
    assert.match(ok.body, /outprobe_shard_members 3/);
    const none = await get(server.port, '/metrics', { ca: one.ca.cert });
    assert.equal(none.status, 401);
    assert.equal(none.body, 'Unauthorized\n');
    assert.equal((await get(server.port, '/metrics', { ca: one.ca.cert, token: 'stranger' })).status, 403);
  });

  it('fails the handshake for a client that does not trust its CA', async () => {
    await assert.rejects(get(server.port, '/metrics', { token: 'reader' }), (err: NodeJS.ErrnoException) => err.code === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    await assert.rejects(get(server.port, '/metrics', { ca: two.ca.cert, token: 'reader' }), (err: NodeJS.ErrnoException) => err.code === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
  });

  it('answers /healthz and /readyz to an unverifying client, as the kubelet\'s scheme: HTTPS probe', async () => {
    for (const p of ['/healthz', '/readyz']) {
      const r = await get(server.port, p, { insecure: true });
      assert.equal(r.status, 200, p);
      assert.equal(r.body, 'ok\n');
    }
  });

  it('answers nothing in clear text', async () => {
    await assert.rejects(new Promise((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port: server.port, path: '/healthz', agent: false, timeout: 5000 }, resolve);
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', reject);
      req.end();
    }));
  });

  it('refuses TLS 1.1, accepts TLS 1.2 and 1.3', async () => {
    const handshake = (min: 'TLSv1' | 'TLSv1.2' | 'TLSv1.3', max: 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3'): Promise<string> => new Promise((resolve, reject) => {
      const s = connect({ host: '127.0.0.1', port: server.port, servername: serverName, ca: one.ca.cert, minVersion: min, maxVersion: max, ciphers: 'DEFAULT@SECLEVEL=0' }, () => {
        const v = s.getProtocol() ?? '';
        s.end();
        resolve(v);
      });
      s.on('error', reject);
    });
    await assert.rejects(handshake('TLSv1', 'TLSv1.1'), /alert protocol version/);
    assert.equal(await handshake('TLSv1.2', 'TLSv1.2'), 'TLSv1.2');
    assert.equal(await handshake('TLSv1.3', 'TLSv1.3'), 'TLSv1.3');
  });

  it('offers TLS 1.2 only with ECDHE and an AEAD cipher: a CBC-only or static-RSA client is refused', async () => {
    const handshake12 = (ciphers: string): Promise<string> => new Promise((resolve, reject) => {
      const s = connect({ host: '127.0.0.1', port: server.port, servername: serverName, ca: one.ca.cert, minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2', ciphers }, () => {
        const c = s.getCipher().standardName;
        s.end();
        resolve(c);
      });
      s.on('error', reject);
    });
    assert.equal(await handshake12('ECDHE-ECDSA-AES128-GCM-SHA256'), 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256');
    assert.equal(await handshake12('ECDHE-ECDSA-CHACHA20-POLY1305'), 'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256');
    await assert.rejects(handshake12('ECDHE-ECDSA-AES128-SHA256:ECDHE-ECDSA-AES256-SHA384:ECDHE-ECDSA-AES128-SHA'), /handshake failure|no shared cipher/i);
  });

  it('with TLSv1.3 as the oldest version, refuses a TLS 1.2 client and keeps it across a certificate swap', async () => {
    const strict = await startObservabilityServer({ host: '127.0.0.1', port: 0, metrics: new Metrics({ defaultMetrics: false }), ready: () => true, tls: one.serving, tlsMinVersion: 'TLSv1.3' });
    const handshake = (max: 'TLSv1.2' | 'TLSv1.3', ca: string): Promise<string> => new Promise((resolve, reject) => {
      const s = connect({ host: '127.0.0.1', port: strict.port, servername: serverName, ca, maxVersion: max }, () => {
        const v = s.getProtocol() ?? '';
        s.end();
        resolve(v);
      });
      s.on('error', reject);
    });
    try {
      await assert.rejects(handshake('TLSv1.2', one.ca.cert), /alert protocol version/);
      assert.equal(await handshake('TLSv1.3', one.ca.cert), 'TLSv1.3');
      strict.setCertificate(two.serving);
      await assert.rejects(handshake('TLSv1.2', two.ca.cert), /alert protocol version/);
      assert.equal(await handshake('TLSv1.3', two.ca.cert), 'TLSv1.3');
    } finally {
      await strict.close();
    }
  });

  it('serves a swapped certificate to new connections', async () => {
    const before1 = await get(server.port, '/healthz', { ca: one.ca.cert });
    server.setCertificate(two.serving);
    const after2 = await get(server.port, '/healthz', { ca: two.ca.cert });
    assert.notEqual(before1.fingerprint, after2.fingerprint);
    await assert.rejects(get(server.port, '/healthz', { ca: one.ca.cert }));
    server.setCertificate(one.serving);
  });

  it('plain HTTP has no certificate to swap', async () => {
    const plain = await startObservabilityServer({ host: '127.0.0.1', port: 0, metrics: new Metrics({ defaultMetrics: false }), ready: () => true });
    try {
      assert.equal(plain.tls, false);
      assert.throws(() => plain.setCertificate(one.serving), /plain HTTP/);
    } finally {
      await plain.close();
    }
  });
});

describe('loadServingCert: a Secret volume updated by the kubelet', () => {
  const one = caAndServing([serverName]);
  const two = caAndServing([serverName], Date.now(), Date.now() + 20 * 24 * 3600 * 1000); // ends earlier: the gauge must move
  let dir: string;
  let generation = 0;

  /** As the kubelet's AtomicWriter: files in a new timestamped directory, then the ..data symlink swapped at once. */
  const publish = (pair: ServingPair): void => {
    const ts = `..${generation++}`;
    mkdirSync(path.join(dir, ts));
    writeFileSync(path.join(dir, ts, 'tls.crt'), pair.cert);
    writeFileSync(path.join(dir, ts, 'tls.key'), pair.key);
    symlinkSync(ts, path.join(dir, '..data_tmp'));
    renameSync(path.join(dir, '..data_tmp'), path.join(dir, '..data'));
    if (generation === 1) for (const f of ['tls.crt', 'tls.key']) symlinkSync(path.join('..data', f), path.join(dir, f));
  };

  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'outprobe-servingcert-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses to start without a servable pair', async () => {
    await assert.rejects(loadServingCert({ dir, what: '--metrics-cert-dir', clock: systemClock, log: silentLogger }), /--metrics-cert-dir .*cannot read tls\.crt and tls\.key/);
    writeFileSync(path.join(dir, 'tls.crt'), one.serving.cert);
    writeFileSync(path.join(dir, 'tls.key'), two.serving.key);
    await assert.rejects(loadServingCert({ dir, what: '--metrics-cert-dir', clock: systemClock, log: silentLogger }), /tls\.key is not the private key of tls\.crt/);
    rmSync(path.join(dir, 'tls.crt'));
    rmSync(path.join(dir, 'tls.key'));
  });

  it('serves the new pair after the swap, without a restart; a broken update keeps the old one', async () => {
    publish(one.serving);
    const metrics = new Metrics({ defaultMetrics: false });
    const cert = await loadServingCert({ dir, what: '--metrics-cert-dir', clock: systemClock, log: silentLogger, intervalMs: 20, metrics: metrics.certs.listener('metrics') });
    const expiry = async (): Promise<number> => Number(/outprobe_serving_certificate_expiry_timestamp_seconds\{listener="metrics"\} (\d+)/.exec(await metrics.text())?.[1]);
    assert.equal(await expiry(), Math.floor(Date.parse(new X509Certificate(one.serving.cert).validTo) / 1000));
    const server = await startObservabilityServer({ host: '127.0.0.1', port: 0, metrics, ready: () => true, tls: cert.pair });
    const stop = new AbortController();
    const running = cert.run(server, stop.signal);
    try {
      assert.equal((await get(server.port, '/healthz', { ca: one.ca.cert })).status, 200);
      publish({ cert: two.serving.cert, key: one.serving.key }); // wrongly paired: not served
      await sleep(200);
      assert.equal((await get(server.port, '/healthz', { ca: one.ca.cert })).status, 200);
      publish(two.serving);
      const deadline = Date.now() + 5000;
      for (;;) {
        const r = await get(server.port, '/healthz', { ca: two.ca.cert }).catch(() => undefined);
        if (r?.status === 200) break;
        assert.ok(Date.now() < deadline, 'the new certificate was not served within 5 s');
        await sleep(20);
      }
      await assert.rejects(get(server.port, '/healthz', { ca: one.ca.cert }));
      assert.equal(await expiry(), Math.floor(Date.parse(new X509Certificate(two.serving.cert).validTo) / 1000));
      const text = await metrics.text();
      assert.match(text, /outprobe_serving_certificate_reloads_total\{listener="metrics",result="loaded"\} 1\n/);
      assert.match(text, /outprobe_serving_certificate_reloads_total\{listener="metrics",result="rejected"\} 1\n/);
    } finally {
      stop.abort();
      await running;
      await server.close();
    }
  });
});
