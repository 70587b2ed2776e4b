import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Agent } from 'undici';
import { WebSocketServer } from 'ws';
import type { WebSocket } from 'ws';
import { createExecProber, maxExecOutput, maxPublishedExecOutput, sanitizeOutput } from '../../../src/probing/exec/index.ts';

/**
 * A loopback WebSocket server speaking the pods/exec channel protocol the way
 * the API server relays it (channel byte, then data; metav1.Status on 3).
 * The scenario is picked by the first command word.
 */
function serve(ws: WebSocket, req: IncomingMessage): void {
  const url = new URL(req.url ?? '/', 'http://x');
  const command = url.searchParams.getAll('command');
  const send = (channel: number, text: string | Buffer): void => {
    ws.send(Buffer.concat([Buffer.from([channel]), Buffer.isBuffer(text) ? text : Buffer.from(text)]));
  };
  switch (command[0]) {
    case 'ok':
      send(1, `container=${url.searchParams.get('container') ?? ''} auth=${req.headers.authorization ?? ''} proto=${ws.protocol} args=${command.slice(1).join(',')}`);
      send(3, JSON.stringify({ metadata: {}, status: 'Success' }));
      ws.close();
      return;
    case 'fail':
      send(1, 'out ');
      send(2, 'err');
      send(3, JSON.stringify({ status: 'Failure', reason: 'NonZeroExitCode', message: 'command terminated with non-zero exit code: error executing command [fail], exit code 3', details: { causes: [{ reason: 'ExitCode', message: '3' }] } }));
      ws.close();
      return;
    case 'big':
      send(1, Buffer.alloc(8000, 0x61));
      send(2, Buffer.alloc(8000, 0x62));
      send(3, JSON.stringify({ status: 'Success' }));
      ws.close();
      return;
    case 'token':
      // What `cat /var/run/secrets/kubernetes.io/serviceaccount/token; exit 1` gives.
      send(1, 'eyJhbGciOiJSUzI1NiJ9.secret-token\x1b[2J\r\nforged line');
      send(3, JSON.stringify({ status: 'Failure', reason: 'NonZeroExitCode', message: 'command terminated with non-zero exit code: exit code 1' }));
      ws.close();
      return;
    case 'hang':
      return;
    case 'nostatus':
      ws.close();
      return;
    default:
      send(3, JSON.stringify({ status: 'Failure', reason: 'InternalError', message: 'container not found ("nope")' }));
      ws.close();
  }
}

describe('exec probe over the pods/exec WebSocket protocol', () => {
  let wss: WebSocketServer;
  let server: string;
  const dispatcher = new Agent();
  before(async () => {
    wss = new WebSocketServer({ host: '127.0.0.1', port: 0, handleProtocols: (p) => (p.has('v5.channel.k8s.io') ? 'v5.channel.k8s.io' : false) });
    wss.on('connection', serve);
    await new Promise<void>((resolve) => wss.once('listening', resolve));
    server = `http://127.0.0.1:${(wss.address() as AddressInfo).port}`;
  });
  after(async () => {
    for (const c of wss.clients) c.terminate();
    await new Promise<void>((resolve) => wss.close(() => resolve()));
    await dispatcher.close();
  });
  const probe = (command: string[], timeoutMs = 1000, publishOutput = true): ReturnType<ReturnType<typeof createExecProber>> =>
    createExecProber({ server, dispatcher, headers: () => ({ authorization: 'Bearer secret' }), publishOutput })({ namespace: 'ns', pod: 'p', container: 'web', command, timeoutMs });

  it('exit 0 is success with the output; the request names container, command, token and subprotocol', async () => {
    assert.deepEqual(await probe(['ok', 'a b', 'c']), { kind: 'success', output: 'container=web auth=Bearer secret proto=v5.channel.k8s.io args=a b,c' });
  });
  it('a non-zero exit is a failure whose output is stdout and stderr', async () => {
    assert.deepEqual(await probe(['fail']), { kind: 'failure', output: 'out err' });
  });
  it('withholds the output by default: only its size leaves the prober (issue #10 finding 3)', async () => {
    const o = await createExecProber({ server, dispatcher })({ namespace: 'ns', pod: 'p', container: 'web', command: ['token'], timeoutMs: 1000 });
    assert.deepEqual(o, { kind: 'failure', output: 'exec probe output withheld (50 bytes)' });
    assert.deepEqual(await probe(['fail'], 1000, false), { kind: 'failure', output: 'exec probe output withheld (7 bytes)' });
    assert.deepEqual(await probe(['big'], 1000, false), { kind: 'success', output: `exec probe output withheld (${maxExecOutput} bytes)` });
  });
  it('published output has control characters stripped and is cut to 512 characters', async () => {
    assert.deepEqual(await probe(['token']), { kind: 'failure', output: 'eyJhbGciOiJSUzI1NiJ9.secret-token [2J forged line' });
    const o = await probe(['big']);
    assert.equal(o.kind, 'success');
    assert.equal('output' in o ? o.output.length : 0, maxPublishedExecOutput);
    assert.match('output' in o ? o.output : '', /^a+\.\.\.$/);
    assert.equal(sanitizeOutput('a\u202eb\u0000c\td'), 'a b c d');
  });
  it('a timeout is a failure (ExecProbeTimeout)', async () => {
    assert.deepEqual(await probe(['hang', 'x'], 200), { kind: 'failure', output: 'command "hang x" timed out' });
  });
  it('a runtime error or a stream without status is a prober error', async () => {
    assert.deepEqual(await probe(['nope']), { kind: 'errored', error: 'container not found ("nope")' });
    assert.deepEqual(await probe(['nostatus']), { kind: 'errored', error: 'exec stream closed without a status' });
  });
  it('an unreachable API server is a prober error', async () => {
    const o = await createExecProber({ server: 'http://127.0.0.1:1', dispatcher })({ namespace: 'ns', pod: 'p', container: 'c', command: ['ok'], timeoutMs: 1000 });
    assert.equal(o.kind, 'errored');
  });
});

describe('exec probe against a peer that upgrades and then goes silent', () => {
  let http: Server;
  let wss: WebSocketServer;
  let server: string;
  const sockets = { opened: 0, upgraded: 0, closed: 0 };
  const dispatcher = new Agent();
  before(async () => {
    http = createServer();
    http.on('connection', (socket) => {
      sockets.opened++;
      socket.on('close', () => sockets.closed++);
    });
    wss = new WebSocketServer({ server: http, handleProtocols: () => 'v5.channel.k8s.io' });
    wss.on('connection', (_ws, req) => {
      sockets.upgraded++;
      // ws would answer the Close frame: take every byte away from it, but keep
      // reading the socket so its end is seen.
      req.socket.removeAllListeners('data');
      req.socket.on('data', () => undefined);
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    server = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  });
  after(async () => {
    for (const c of wss.clients) c.terminate();
    await new Promise<void>((resolve) => wss.close(() => resolve()));
    http.closeAllConnections();
    await new Promise<void>((resolve) => http.close(() => resolve()));
    await dispatcher.close();
  });

  it('closes every socket within 2 s of its probe ending: 100 timed-out probes at once', async () => {
    const probe = createExecProber({ server, dispatcher });
    const outcomes = await Promise.all(Array.from({ length: 100 }, () => probe({ namespace: 'ns', pod: 'p', container: 'c', command: ['silent'], timeoutMs: 500 })));
    const ended = performance.now();
    assert.ok(outcomes.every((o) => o.kind === 'failure' && o.output === 'command "silent" timed out'), JSON.stringify(outcomes[0]));
    // Most probes got their upgrade before the timeout (the case that leaked); the rest ended mid-handshake.
    assert.ok(sockets.upgraded >= 50, `${sockets.upgraded} of 100 upgraded`);
    while (sockets.closed < sockets.opened && performance.now() - ended < 2000) await new Promise((r) => setTimeout(r, 50));
    assert.equal(sockets.closed, sockets.opened, `${sockets.closed} of ${sockets.opened} sockets (${sockets.upgraded} upgraded) closed 2 s after the probes ended`);
  });
});
