// Issue 14: configuration and credentials through @kubernetes/client-node,
// each checked by running the controller (`node src/main.ts`) against the
// real kube-apiserver: it must write a gate True, then, after the credential
// changed under it where the case allows, a gate False, and stop cleanly,
// with no 401 and no secret in its log.
//  - an exec credential plugin with a 3 s expiry, whose first token is then
//    revoked: the controller runs the plugin again and carries on;
//  - $KUBECONFIG with two files merged as kubectl does, and --context;
//  - in-cluster: a service-account directory bind-mounted at
//    /var/run/secrets/kubernetes.io/serviceaccount, its token rotated;
//  - client certificates from files, insecure-skip-tls-verify, through an
//    HTTP CONNECT proxy (proxy-url);
//  - tls-server-name is honoured (a wrong name fails verification).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { Agent, request } from 'undici';
import { systemClock, systemRandom } from '../../src/kernel/index.ts';
import { KubeClient, connectionOf, loadKubeConfig } from '../../src/kube/index.ts';
import { startControlPlane } from '../support/cluster/index.ts';
import type { ControlPlane } from '../support/cluster/index.ts';
import { installCrd } from './support/controller.ts';
import { conditionOf, createFakePod, getPod, waitFor } from './support/fake-kubelet.ts';
import type { FakePod } from './support/fake-kubelet.ts';
import { logsOnFailure } from '../support/replicas/index.ts';

const mainPath = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
const pluginPath = fileURLToPath(new URL('./support/exec-credential-plugin.ts', import.meta.url));
const APP = 'creds';
const SA = 'outprobe';
const STATIC_TOKEN = 'static-token-for-the-merged-kubeconfig';
const fast = { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 1, failureThreshold: 1, timeoutSeconds: 1 };

interface Running {
  readonly lines: string[];
  readonly exited: Promise<number | null>;
  readonly child: ChildProcess;
}

void describe('credentials through client-node, with the controller running', () => {
  const logs = logsOnFailure('credentials');
  let cp: ControlPlane;
  let tmp: string;
  let caPem: string;
  let proxy: Server;
  const connects: string[] = [];
  const started = new Set<ChildProcess>();
  const pods: FakePod[] = [];
  const pki = (f: string): string => path.join(cp.dir, 'pki', f);
  const b64 = (s: string): string => Buffer.from(s).toString('base64');

  /** A token of the ServiceAccount (cluster-admin) bound to a new Secret: deleting the Secret revokes it. */
  const boundToken = async (secret: string): Promise<string> => {
    const s = await cp.kube.create(`/api/v1/namespaces/${APP}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: secret } });
    const uid = (s['metadata'] as { uid: string }).uid;
    const tr = await cp.kube.create(`/api/v1/namespaces/${APP}/serviceaccounts/${SA}/token`, {
      apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest',
      spec: { expirationSeconds: 3600, boundObjectRef: { apiVersion: 'v1', kind: 'Secret', name: secret, uid } },
    });
    return (tr['status'] as { token: string }).token;
  };
  /** Deletes the Secret a token is bound to and waits until the API server refuses the token (past its authentication cache). */
  const revoke = async (secret: string, token: string): Promise<void> => {
    await cp.kube.delete(`/api/v1/namespaces/${APP}/secrets/${secret}`);
    const agent = new Agent({ connect: { ca: caPem } });
    try {
      await waitFor(`token bound to ${secret} refused`, async () => {
        const res = await request(`${cp.server}/api`, { dispatcher: agent, headers: { authorization: `Bearer ${token}` } });
        await res.body.dump();
        return res.statusCode === 401;
      }, 30_000, 500);
    } finally {
      await agent.close();
    }
  };

  /** A policy over one new pod; returns the pod. */
  const podUnderPolicy = async (name: string): Promise<FakePod> => {
    const gate = `outprobe.io/${name}`;
    await cp.kube.create(`/apis/outprobe.io/v1alpha1/namespaces/${APP}/probepolicies`, {
      apiVersion: 'outprobe.io/v1alpha1', kind: 'ProbePolicy', metadata: { name, namespace: APP },
      spec: { selector: { matchLabels: { app: name } }, readiness: { conditionType: gate, maxUnreadyPercent: 100, probe: fast } },
    });
    const pod = await createFakePod(cp.kube, APP, `${name}-0`, { labels: { app: name }, gate });
    pods.push(pod);
    return pod;
  };
  const gateOf = async (pod: FakePod): Promise<string | undefined> => conditionOf(await getPod(cp.kube, pod), `outprobe.io/${pod.name.replace(/-0$/, '')}`)?.status;

  /** `node src/main.ts` in this namespace, unsharded, with `args` and `env`; `wrap` runs it under another command. */
  const run = (args: readonly string[], env: NodeJS.ProcessEnv = {}, wrap: readonly string[] = []): Running => {
    const lines: string[] = [];
    const argv = [process.execPath, mainPath, '--namespace', APP, '--sharding', 'false', '--metrics-auth', 'none', '--metrics-addr', '127.0.0.1:0',
      '--allowed-probe-cidrs', '127.0.0.0/8', '--status-interval', '1', ...args];
    const [cmd, ...rest] = [...wrap, ...argv];
    const child = spawn(cmd ?? process.execPath, rest, { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env['PATH'] ?? '', HOME: tmp, POD_NAME: 'outprobe-creds-0', ...env } });
    logs.record('outprobe', child);
    started.add(child);
    child.once('exit', () => started.delete(child));
    for (const s of [child.stdout, child.stderr]) createInterface({ input: s }).on('line', (l) => lines.push(l));
    return { lines, child, exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))) };
  };

  /** Gate True, then (after `between`) gate False; then SIGTERM and a clean exit, no 401, none of `secrets` in the log. */
  const doesItsJob = async (c: Running, pod: FakePod, secrets: readonly string[], between: () => Promise<void> = () => Promise.resolve(), falseWithinMs = 20_000): Promise<void> => {
    try {
      await waitFor('gate True', async () => (await gateOf(pod)) === 'True', 40_000);
      await between();
      pod.healthy = false;
      await waitFor('gate False', async () => (await gateOf(pod)) === 'False', falseWithinMs);
      assert.equal(c.child.exitCode, null, 'still the same process');
      c.child.kill('SIGTERM');
      assert.equal(await c.exited, 0, c.lines.join('\n'));
    } catch (err: unknown) {
      c.child.kill('SIGKILL');
      throw new Error(`${String(err)}\n--- controller log ---\n${c.lines.slice(-40).join('\n')}`, { cause: err });
    }
    assert.deepEqual(c.lines.filter((l) => /unauthori[sz]ed|\b401\b/i.test(l)), [], 'no request was refused for its credentials');
    for (const s of secrets) assert.ok(!c.lines.some((l) => l.includes(s)), 'no credential in the log');
  };

  logs.setup(async () => {
    tmp = mkdtempSync(path.join(tmpdir(), 'outprobe-creds-'));
    const tokens = path.join(tmp, 'static-tokens.csv');
    writeFileSync(tokens, `${STATIC_TOKEN},outprobe-static,static-1,"system:masters"\n`, { mode: 0o600 });
    cp = await startControlPlane({ apiserverArgs: [`--token-auth-file=${tokens}`] });
    logs.plane(cp);
    caPem = readFileSync(pki('serving-ca.crt'), 'utf8');
    await installCrd(cp.kube);
    await cp.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: APP } });
    await cp.kube.create(`/api/v1/namespaces/${APP}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: SA } });
    await cp.kube.create('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'outprobe-creds' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ kind: 'ServiceAccount', name: SA, namespace: APP }],
    });
    // A plain HTTP CONNECT proxy on loopback, for proxy-url.
    proxy = createServer();
    proxy.on('connect', (req, socket, head) => {
      connects.push(req.url ?? '');
      const [host = '', port = ''] = (req.url ?? '').split(':');
      const upstream = connect(Number(port), host, () => {
        socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.write(head);
        upstream.pipe(socket).pipe(upstream);
      });
      const end = (): void => {
        upstream.destroy();
        socket.destroy();
      };
      upstream.on('error', end);
      socket.on('error', end);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  });
  logs.teardown(async () => {
    for (const c of started) c.kill('SIGKILL');
    for (const p of pods) await p.close();
    proxy.closeAllConnections();
    proxy.close();
    await cp.stop();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('an exec credential plugin: its token expires every 3 s, the first is revoked, and the controller carries on with the next', async () => {
    const state = path.join(tmp, 'exec-state');
    mkdirSync(state);
    const first = await boundToken('exec-first');
    writeFileSync(path.join(state, 'token'), first);
    const kubeconfig = path.join(tmp, 'exec-kubeconfig');
    writeFileSync(kubeconfig, JSON.stringify({
      apiVersion: 'v1', kind: 'Config', 'current-context': 'exec',
      clusters: [{ name: 'plane', cluster: { server: cp.server, 'certificate-authority-data': b64(caPem) } }],
      users: [{ name: 'plugin', user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: process.execPath, args: [pluginPath, state, '3'], interactiveMode: 'Never' } } }],
      contexts: [{ name: 'exec', context: { cluster: 'plane', user: 'plugin', namespace: APP } }],
    }), { mode: 0o600 });
    const pod = await podUnderPolicy('exec');
    const c = run(['--kubeconfig', kubeconfig]);
    let second = '';
    await doesItsJob(c, pod, [first], async () => {
      second = await boundToken('exec-second');
      writeFileSync(path.join(state, 'token'), second);
      // Once the first token is refused, the controller can only go on with what a new run of the plugin gives.
      await revoke('exec-first', first);
    });
    const calls = readFileSync(path.join(state, 'calls'), 'utf8').trim().split('\n');
    assert.ok(calls.length >= 2, `the plugin ran again after expiry (${calls.length} calls)`);
    assert.ok(calls.length < 60, `the credential was cached until its expiry, not fetched per request (${calls.length} calls)`);
    assert.ok(!c.lines.some((l) => l.includes(second)), 'the refreshed token is not logged either');
  });

  it('$KUBECONFIG with two files merged as kubectl does (first definition wins, a missing file skipped) and --context', async () => {
    const a = path.join(tmp, 'merge-a');
    const b = path.join(tmp, 'merge-b');
    writeFileSync(a, JSON.stringify({
      apiVersion: 'v1', kind: 'Config', 'current-context': 'elsewhere',
      clusters: [{ name: 'plane', cluster: { server: cp.server, 'certificate-authority-data': b64(caPem), 'tls-server-name': 'kubernetes.default.svc' } }],
      contexts: [{ name: 'elsewhere', context: { cluster: 'nowhere', user: 'static' } }],
    }));
    writeFileSync(b, JSON.stringify({
      apiVersion: 'v1', kind: 'Config', 'current-context': 'merged',
      // A second "plane": kubectl keeps the first file's, so this wrong server is never used.
      clusters: [{ name: 'plane', cluster: { server: 'https://127.0.0.1:1' } }, { name: 'nowhere', cluster: { server: 'https://127.0.0.1:1' } }],
      users: [{ name: 'static', user: { token: STATIC_TOKEN } }],
      contexts: [{ name: 'merged', context: { cluster: 'plane', user: 'static', namespace: APP } }],
    }));
    const env = { KUBECONFIG: [a, path.join(tmp, 'missing'), b].join(path.delimiter) };
    const kc = loadKubeConfig({ context: 'merged' }, env);
    assert.equal(kc.getCurrentCluster()?.server, cp.server, 'the first file\'s cluster of a name wins');
    assert.equal(loadKubeConfig({}, env).getCurrentContext(), 'elsewhere', 'the first file\'s current-context wins');
    const pod = await podUnderPolicy('merged');
    await doesItsJob(run(['--context', 'merged'], env), pod, [STATIC_TOKEN]);
  });

  it('in-cluster: the service-account directory mounted at its real path, its token rotated and the old one revoked', async () => {
    const dir = path.join(tmp, 'serviceaccount');
    mkdirSync(dir);
    const first = await boundToken('sa-first');
    writeFileSync(path.join(dir, 'token'), first);
    writeFileSync(path.join(dir, 'ca.crt'), caPem);
    writeFileSync(path.join(dir, 'namespace'), APP);
    const port = new URL(cp.server).port;
    // A private mount namespace: /run gets a tmpfs of its own there, and the directory is bind-mounted where the kubelet mounts it.
    const mount = `mount -t tmpfs tmpfs /run && mkdir -p /run/secrets/kubernetes.io/serviceaccount && mount --bind '${dir}' /var/run/secrets/kubernetes.io/serviceaccount && exec "$@"`;
    assert.equal(spawnSync('unshare', ['-m', '--propagation', 'private', 'sh', '-c', mount, 'sh', 'true']).status, 0, 'unshare and mount (root) are available');
    const pod = await podUnderPolicy('incluster');
    const c = run([], { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: port }, ['unshare', '-m', '--propagation', 'private', 'sh', '-c', mount, 'sh']);
    let second = '';
    // As the kubelet rotates: a new token in the file while the old one is still valid. client-node re-reads the
    // file when a request comes more than 60 s after the last read (client-go's period); after that the old token
    // is revoked, and nothing may be refused.
    await doesItsJob(c, pod, [first], async () => {
      second = await boundToken('sa-second');
      writeFileSync(path.join(dir, 'token.new'), second);
      spawnSync('mv', [path.join(dir, 'token.new'), path.join(dir, 'token')]);
      await new Promise((r) => setTimeout(r, 61_000));
      await revoke('sa-first', first);
    });
    assert.ok(!c.lines.some((l) => l.includes(second)), 'the rotated token is not logged either');
    assert.ok(c.lines.some((l) => l.includes('"server":"https://127.0.0.1:')), 'the in-cluster server was used');
  });

  it('client certificates from files next to the kubeconfig, insecure-skip-tls-verify, through proxy-url', async () => {
    const dir = path.join(tmp, 'certs');
    mkdirSync(dir);
    const ossl = (...args: string[]): void => {
      const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
    };
    ossl('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', 'client.key');
    ossl('req', '-new', '-key', 'client.key', '-subj', '/O=system:masters/CN=outprobe-cert', '-out', 'client.csr');
    writeFileSync(path.join(dir, 'client.ext'), 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n');
    ossl('x509', '-req', '-in', 'client.csr', '-CA', pki('client-ca.crt'), '-CAkey', pki('client-ca.key'), '-CAcreateserial', '-days', '1', '-extfile', 'client.ext', '-out', 'client.crt');
    const kubeconfig = path.join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, JSON.stringify({
      apiVersion: 'v1', kind: 'Config', 'current-context': 'cert',
      clusters: [{ name: 'plane', cluster: { server: cp.server, 'insecure-skip-tls-verify': true, 'proxy-url': `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` } }],
      users: [{ name: 'cert', user: { 'client-certificate': 'client.crt', 'client-key': 'client.key' } }],
      contexts: [{ name: 'cert', context: { cluster: 'plane', user: 'cert', namespace: APP } }],
    }));
    const pod = await podUnderPolicy('cert');
    connects.length = 0;
    await doesItsJob(run(['--kubeconfig', kubeconfig]), pod, [readFileSync(path.join(dir, 'client.key'), 'utf8').split('\n')[1] ?? 'key']);
    assert.ok(connects.includes(new URL(cp.server).host), `connections went through the proxy: ${JSON.stringify([...new Set(connects)])}`);
  });

  it('tls-server-name is the name verified; a wrong one fails', async () => {
    const file = path.join(tmp, 'server-name');
    const write = (name: string): void => writeFileSync(file, JSON.stringify({
      apiVersion: 'v1', kind: 'Config', 'current-context': 'c',
      clusters: [{ name: 'plane', cluster: { server: cp.server, 'certificate-authority-data': b64(caPem), 'tls-server-name': name } }],
      users: [{ name: 'static', user: { token: STATIC_TOKEN } }],
      contexts: [{ name: 'c', context: { cluster: 'plane', user: 'static' } }],
    }));
    const get = async (): Promise<unknown> => {
      const client = new KubeClient({ connection: connectionOf(loadKubeConfig({ kubeconfig: file }, {})), clock: systemClock, random: systemRandom, maxAttempts: 1 });
      try {
        return await client.request({ method: 'GET', path: '/version' });
      } finally {
        await client.close();
      }
    };
    write('kubernetes.default.svc');
    assert.ok(await get());
    write('not-the-apiserver.example');
    await assert.rejects(get(), /not-the-apiserver\.example|altnames|ERR_TLS_CERT_ALTNAME_INVALID/);
  });

  it('a context that is not there is a clear startup error', async () => {
    const c = run(['--context', 'no-such-context'], { KUBECONFIG: path.join(tmp, 'merge-a') });
    assert.equal(await c.exited, 1);
    assert.match(c.lines.join('\n'), /context "no-such-context" not found/);
  });
});
