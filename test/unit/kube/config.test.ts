import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { connectionFor, connectionOf, fromKubeconfig, loadConnection, loadKubeConfig } from '../../../src/kube/index.ts';

const pluginPath = fileURLToPath(new URL('../../integration/support/exec-credential-plugin.ts', import.meta.url));

void describe('kubeconfig through client-node', () => {
  let tmp: string;
  const file = (name: string, doc: unknown): string => {
    const p = path.join(tmp, name);
    writeFileSync(p, JSON.stringify({ apiVersion: 'v1', kind: 'Config', ...(doc as object) }));
    return p;
  };
  before(() => {
    tmp = mkdtempSync(path.join(tmpdir(), 'outprobe-kubeconfig-'));
  });
  after(() => {
    rmSync(tmp, { recursive: true, force: true });
  });

  it('merges $KUBECONFIG as kubectl does: first definition and first current-context win, missing files skipped', () => {
    const a = file('a', { clusters: [{ name: 'c', cluster: { server: 'https://first:6443' } }], contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }] });
    const b = file('b', {
      'current-context': 'y',
      clusters: [{ name: 'c', cluster: { server: 'https://second:6443' } }],
      users: [{ name: 'u', user: { token: 't' } }],
      contexts: [{ name: 'x', context: { cluster: 'other', user: 'u' } }, { name: 'y', context: { cluster: 'c', user: 'u', namespace: 'ns-y' } }],
    });
    const c = file('c', { 'current-context': 'x' });
    const env = { KUBECONFIG: [a, path.join(tmp, 'nope'), b, c].join(path.delimiter) };
    const kc = loadKubeConfig({}, env);
    assert.equal(kc.getCurrentContext(), 'y', 'a has none, so b\'s current-context wins over c\'s');
    assert.equal(kc.getCurrentCluster()?.server, 'https://first:6443');
    assert.equal(kc.getContextObject('x')?.cluster, 'c', 'the first file\'s context x');
    const conn = loadConnection({}, env);
    assert.equal(conn.namespace, 'ns-y');
    assert.equal(loadConnection({ context: 'x' }, env).namespace, 'default');
    assert.throws(() => loadConnection({ context: 'z' }, env), /context "z" not found/);
    assert.throws(() => loadConnection({}, { KUBECONFIG: path.join(tmp, 'nope') }), /none of .* exists/);
  });

  it('--kubeconfig is one file and wins over $KUBECONFIG', () => {
    const one = file('one', { 'current-context': 'x', clusters: [{ name: 'c', cluster: { server: 'https://one:6443/' } }], users: [{ name: 'u', user: {} }], contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }] });
    assert.equal(loadConnection({ kubeconfig: one }, { KUBECONFIG: path.join(tmp, 'a') }).server, 'https://one:6443');
  });

  it('a user\'s tokenFile (kubectl\'s key) is read relative to the kubeconfig and sent as a bearer token', async () => {
    mkdirSync(path.join(tmp, 'tf'));
    writeFileSync(path.join(tmp, 'tf', 'token'), 'from-the-file\n');
    const p = file('tf/kubeconfig', { 'current-context': 'x', clusters: [{ name: 'c', cluster: { server: 'https://tf:6443' } }], users: [{ name: 'u', user: { tokenFile: 'token', token: 'inline' } }], contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }] });
    const creds = await fromKubeconfig(p).credentials();
    assert.equal(creds.headers['authorization'], 'Bearer from-the-file');
  });

  it('rejects what it cannot honour at startup instead of ignoring it', () => {
    const withCluster = (name: string, cluster: Record<string, unknown>): string => file(name, { 'current-context': 'x', clusters: [{ name: 'c', cluster }], users: [{ name: 'u', user: {} }], contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }] });
    assert.throws(() => fromKubeconfig(withCluster('ftp', { server: 'https://s:6443', 'proxy-url': 'ftp://proxy:21' })), /proxy-url "ftp:\/\/proxy:21" is not supported/);
    assert.throws(() => fromKubeconfig(withCluster('plain', { server: 'http://s:8080' })), /http:\/\/ server; that needs insecure-skip-tls-verify/);
    assert.equal(fromKubeconfig(withCluster('socks', { server: 'https://s:6443', 'proxy-url': 'socks5://p:1080' })).proxyUrl, 'socks5://p:1080');
    const noUser = file('nouser', { 'current-context': 'x', clusters: [{ name: 'c', cluster: { server: 'https://s:6443' } }], contexts: [{ name: 'x', context: { cluster: 'c', user: 'ghost' } }] });
    assert.throws(() => fromKubeconfig(noUser), /names user "ghost", which is not defined/);
  });

  it('TLS material and its digest: insecure-skip-tls-verify, tls-server-name, CA data; the digest changes with the material', async () => {
    const ca = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    const a = await connectionFor({ server: 'https://s:6443', caPem: ca, token: 'x' }).credentials();
    assert.equal(a.tls.rejectUnauthorized, true);
    assert.equal(String(a.tls.ca), ca);
    const b = await connectionFor({ server: 'https://s:6443', insecureSkipTlsVerify: true }).credentials();
    assert.equal(b.tls.rejectUnauthorized, false);
    assert.notEqual(a.tlsId, b.tlsId);
    assert.ok(!a.tlsId.includes('MIIB'), 'a digest, not the material');
    const named = file('named', { 'current-context': 'x', clusters: [{ name: 'c', cluster: { server: 'https://10.0.0.1:443', 'tls-server-name': 'kubernetes.default.svc' } }], users: [{ name: 'u', user: { as: 'someone' } }], contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }] });
    const n = await fromKubeconfig(named).credentials();
    assert.equal(n.tls.servername, 'kubernetes.default.svc');
    assert.equal(n.headers['impersonate-user'], 'someone');
  });

  it('an exec plugin runs once for concurrent requests, is cached until its expirationTimestamp, then runs again', async () => {
    const state = path.join(tmp, 'exec');
    mkdirSync(state);
    writeFileSync(path.join(state, 'token'), 'first');
    const p = file('exec-kubeconfig', {
      'current-context': 'x', clusters: [{ name: 'c', cluster: { server: 'https://s:6443' } }],
      users: [{ name: 'u', user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: process.execPath, args: [pluginPath, state, '1'] } } }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
    });
    const conn = connectionOf(loadKubeConfig({ kubeconfig: p }, {}));
    const calls = (): number => readFileSync(path.join(state, 'calls'), 'utf8').trim().split('\n').length;
    const all = await Promise.all(Array.from({ length: 8 }, () => conn.credentials()));
    assert.deepEqual(new Set(all.map((c) => c.headers['authorization'])), new Set(['Bearer first']));
    assert.equal(calls(), 1);
    writeFileSync(path.join(state, 'token'), 'second');
    assert.equal((await conn.credentials()).headers['authorization'], 'Bearer first', 'cached while valid');
    assert.equal(calls(), 1);
    await new Promise((r) => setTimeout(r, 1100));
    assert.equal((await conn.credentials()).headers['authorization'], 'Bearer second', 'run again after expiry');
    assert.equal(calls(), 2);
  });
});
