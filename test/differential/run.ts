/**
 * Runs every scenario through the kubelet's own probers (tools/kubelet-diff,
 * built by scripts/build-kubelet-diff.sh) and through outprobe's executors,
 * each against its own instance of the scenario's servers, and compares the
 * result (decision), the message and the request heads the servers received.
 *
 * Normalised before comparing, because they must differ between two runs:
 * the servers' ports (written {T} {O} {V} {S}), the client's ephemeral port
 * in Go's "read tcp A->B" texts ({client}), Basic credentials (compared
 * decoded, since a Location's userinfo can hold a port), the value of grpc-timeout
 * (time left when the call was sent), and the bytes of a TLS ClientHello or
 * HTTP/2 preface reaching a raw server (servers.ts records those by name).
 */
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import http2 from 'node:http2';
import { createGrpcProber, createHttpProber, tcpProbe } from '../../src/probing/index.ts';
import type { Outcome } from '../../src/probing/index.ts';
import { claimPort, releasePort } from '../support/ports/index.ts';
import { grpcServer, h2TlsServer, rawServer } from './servers.ts';
import type { Closable, Ports, Recorder } from './servers.ts';
import type { Scenario } from './scenarios.ts';

export const userAgent = 'kube-probe/1.37';
export type Aspect = 'decision' | 'message' | 'request';
export const aspects: readonly Aspect[] = ['decision', 'message', 'request'];

export interface Side {
  readonly result: string; // success | warning | failure | unknown | errored
  readonly output: string;
  readonly requests: readonly string[];
}
export interface Comparison {
  readonly id: string;
  readonly kubelet: Side;
  readonly outprobe: Side;
  readonly differs: readonly Aspect[];
}

interface Instance {
  readonly ports: Ports;
  readonly rec: Recorder;
  readonly close: () => void;
}

const hostOf = (s: Scenario): string => (s.family === 6 ? '::1' : '127.0.0.1');

/**
 * A port nothing listens on, for "connection refused" scenarios: claimed below the kernel's
 * ephemeral range with a machine-wide lock (test/support/ports), where every other scenario
 * server (port 0) and any concurrent run's components cannot take it before the probe runs.
 */
async function closedPort(host: string): Promise<Closable> {
  const port = await claimPort(host);
  return { port, close: () => { releasePort(port); } };
}

/** Starts one instance of a scenario's servers (target, plus O/V/S for redirect scenarios). */
async function start(s: Scenario, realGrpc: (host: string) => Promise<number>): Promise<Instance> {
  const host = hostOf(s);
  const rec: Recorder = { heads: [] };
  const closers: Closable[] = [];
  const ports: { T: number; O: number; V: number; S: number } = { T: 0, O: 0, V: 0, S: 0 };
  const get = (): Ports => ports;
  const t = s.target;
  if (t.type === 'closed') {
    const closed = await closedPort(host);
    closers.push(closed);
    ports.T = closed.port;
  }
  else if (t.type === 'real-grpc') ports.T = await realGrpc(host);
  else if (t.type === 'h2tls') closers.push(await h2TlsServer(host, 'T', rec));
  else if (t.type === 'grpc') {
    const onSession = t.goaway === true ? (sess: http2.ServerHttp2Session) => sess.goaway(http2.constants.NGHTTP2_NO_ERROR) : undefined;
    closers.push(await grpcServer(host, 'T', rec, t.reply, onSession));
  } else {
    closers.push(await rawServer({ host, tls: t.tls === true, tag: 'T', rec, ports: get, reply: t.reply }));
    if (t.aux === true) {
      const named = (tag: string, body: string) => () => [`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`];
      const o = await rawServer({ host, tls: false, tag: 'O', rec, ports: get, reply: (h) => named('O', `other ${/^GET (\S*)/.exec(h)?.[1] ?? ''}`)() });
      const sv = await rawServer({ host, tls: true, tag: 'S', rec, ports: get, reply: (h) => named('S', `tls ${/^GET (\S*)/.exec(h)?.[1] ?? ''}`)() });
      // The victim listens on another address, where the kernel may hand out the port number
      // of T, O or S again: ports are told apart by number in the comparison, so V takes another one.
      const victim = () => rawServer({ host: '127.0.0.2', tls: false, tag: 'V', rec, ports: get, reply: (h) => named('V', `victim ${/^GET (\S*)/.exec(h)?.[1] ?? ''}`)() });
      let v = await victim();
      for (let attempt = 0; attempt < 10 && [closers[0]?.port, o.port, sv.port].includes(v.port); attempt++) {
        const taken = v;
        v = await victim();
        taken.close();
      }
      closers.push(o, v, sv);
      ports.O = o.port;
      ports.V = v.port;
      ports.S = sv.port;
    }
  }
  if (closers[0] !== undefined) ports.T = closers[0].port;
  return { ports, rec, close: () => closers.forEach((c) => c.close()) };
}

function normalise(text: string, p: Ports): string {
  let out = text.replace(/(127\.0\.0\.\d+|\[::1\]):\d+->/g, '$1:{client}->').replace(/^grpc-timeout: .*$/gm, 'grpc-timeout: {t}');
  // A Basic credential taken from a Location's userinfo can hold a server port: compare it decoded.
  out = out.replace(/^(Authorization: Basic )([A-Za-z0-9+/=]+)$/gm, (_m, head: string, b64: string) => `${head}<${Buffer.from(b64, 'base64').toString('latin1')}>`);
  for (const [name, port] of Object.entries(p)) if (port !== 0) out = out.replace(new RegExp(`(?<![0-9])0*${port}(?![0-9])`, 'g'), `{${name}}`);
  return out;
}

interface KubeletLine {
  readonly id: string;
  readonly result: string;
  readonly output: string;
  readonly error?: string;
}

/** Runs the scenarios through the Go program, one at a time, in order. */
async function runKubelet(bin: string, list: readonly Scenario[], insts: readonly Instance[]): Promise<KubeletLine[]> {
  const child = spawn(bin, [], { stdio: ['pipe', 'pipe', 'inherit'] });
  const input = list.map((s, i) =>
    JSON.stringify({ id: s.id, kind: s.kind, scheme: s.scheme, host: hostOf(s), port: insts[i]?.ports.T, path: s.path, headers: s.headers, service: s.service, timeoutSeconds: s.timeoutSeconds }),
  );
  child.stdin.end(`${input.join('\n')}\n`);
  let out = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (d: string) => (out += d));
  const code = await new Promise<number | null>((r) => child.on('close', r));
  if (code !== 0) throw new Error(`kubelet-diff exited with ${code}`);
  return out
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as KubeletLine);
}

const httpProber = createHttpProber({ userAgent });
const grpcProber = createGrpcProber({ userAgent });

/** Runs one scenario through outprobe's executors with the kubelet's 3-attempt retry. */
async function runOutprobe(s: Scenario, port: number): Promise<Outcome> {
  const ip = hostOf(s);
  const timeoutMs = s.timeoutSeconds * 1000;
  const attempt = (): Promise<Outcome> => {
    if (s.kind === 'tcp') return tcpProbe({ ip, port, timeoutMs });
    if (s.kind === 'grpc') return grpcProber({ ip, port, service: s.service ?? '', timeoutMs });
    return httpProber({ scheme: s.scheme ?? 'HTTP', ip, port, path: s.path ?? '', headers: s.headers ?? [], timeoutMs });
  };
  let outcome = await attempt();
  for (let i = 1; i < 3 && outcome.kind === 'errored'; i++) outcome = await attempt();
  return outcome;
}

const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 30));

/** Starts `kubelet-diff grpc-server <host>` and resolves with its port; it exits when its stdin closes. */
function startRealGrpc(bin: string, host: string, children: ChildProcess[]): Promise<number> {
  const child = spawn(bin, ['grpc-server', host], { stdio: ['pipe', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.stdout.setEncoding('utf8');
    child.stdout.once('data', (d: string) => resolve(Number(d.trim())));
    child.once('exit', (code) => reject(new Error(`kubelet-diff grpc-server exited with ${code}`)));
  });
}

export async function runAll(bin: string, list: readonly Scenario[]): Promise<Comparison[]> {
  const kInsts: Instance[] = [];
  const oInsts: Instance[] = [];
  const children: ChildProcess[] = [];
  const real = new Map<string, Promise<number>>();
  const realGrpc = (host: string): Promise<number> => {
    let port = real.get(host);
    if (port === undefined) real.set(host, (port = startRealGrpc(bin, host, children)));
    return port;
  };
  try {
    for (const s of list) {
      kInsts.push(await start(s, realGrpc));
      oInsts.push(await start(s, realGrpc));
    }
    const kLines = await runKubelet(bin, list, kInsts);
    await settle();
    const results: Comparison[] = [];
    for (const [i, s] of list.entries()) {
      const kInst = kInsts[i] as Instance;
      const oInst = oInsts[i] as Instance;
      const o = await runOutprobe(s, oInst.ports.T);
      await settle();
      const k = kLines[i];
      if (k?.id !== s.id) throw new Error(`kubelet-diff answered ${k?.id} for ${s.id}`);
      const kubelet: Side = {
        result: k.error !== undefined ? 'errored' : k.result,
        output: normalise(k.error ?? k.output, kInst.ports),
        requests: kInst.rec.heads.map((h) => normalise(h, kInst.ports)),
      };
      const outprobe: Side = {
        result: o.kind,
        output: normalise(o.kind === 'errored' ? o.error : o.output, oInst.ports),
        requests: oInst.rec.heads.map((h) => normalise(h, oInst.ports)),
      };
      const differs: Aspect[] = [];
      if (kubelet.result !== outprobe.result) differs.push('decision');
      if (kubelet.output !== outprobe.output) differs.push('message');
      if (JSON.stringify(kubelet.requests) !== JSON.stringify(outprobe.requests)) differs.push('request');
      results.push({ id: s.id, kubelet, outprobe, differs });
    }
    return results;
  } finally {
    for (const inst of [...kInsts, ...oInsts]) inst.close();
    for (const child of children) child.stdin?.end();
  }
}

/** Builds (or finds in the cache) the Go program; returns its path. */
export function kubeletDiffBinary(): string {
  const env = process.env['OUTPROBE_KUBELET_DIFF'];
  if (env !== undefined && env !== '') return env;
  const script = new URL('../../scripts/build-kubelet-diff.sh', import.meta.url).pathname;
  const out = execFileSync('bash', [script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  return out.trim().split('\n').at(-1) ?? '';
}
