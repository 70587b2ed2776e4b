/**
 * The benchmark's two processes besides the control plane: the pod server
 * (at a higher priority than everything else, `--pod-server-nice`: pods
 * answer from their own nodes' CPUs, so a pods' side starved of CPU would
 * fail probes that are not the controller's to fail) and one outprobe replica, the
 * real src/main.ts, under `setpriv --pdeathsig TERM` so it cannot outlive
 * the benchmark. Both are tracked by bench/probes/children.ts and killed on
 * exit or signal.
 */
import type { ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { track } from '../probes/children.ts';
import { inCgroup } from './cgroup.ts';
import type { MemoryCgroup } from './cgroup.ts';

const podServerPath = fileURLToPath(new URL('./pod-server.ts', import.meta.url));
const mainPath = fileURLToPath(new URL('../../src/main.ts', import.meta.url));

export interface PodServerStats {
  readonly connections: number;
  readonly refused: number;
  readonly loop_delay_max_ms: number;
  readonly loop_delay_p99_ms: number;
}

export interface PodServer {
  readonly pid: number;
  readonly port: number;
  times(since: number, ips?: readonly string[]): Promise<Map<string, number[]>>;
  /** Connections so far and its own event-loop delay since the previous call. */
  stats(): Promise<PodServerStats>;
  /** From now on HTTP requests to these pod IPs are answered with `status` (503 by default). */
  fail(ips: readonly string[], status?: number): Promise<void>;
  /** These pod IPs (all when undefined) answer 200 again. */
  heal(ips?: readonly string[]): Promise<void>;
  close(): void;
}

/** Starts the pod server for pod IPs starting with one of `prefixes` (`127.X.`), at niceness `nice`. */
export async function startPodServer(prefixes: readonly string[], nice: number): Promise<PodServer> {
  const child = track('nice', ['-n', String(nice), process.execPath, podServerPath, prefixes.join(',')], 'pod-server');
  const waiting: { resolve: (line: string) => void; reject: (e: Error) => void }[] = [];
  createInterface({ input: child.stdout! }).on('line', (l) => waiting.shift()?.resolve(l));
  // One exit listener for every reply still awaited (one per request piled up past MaxListeners).
  child.once('exit', () => { for (const w of waiting.splice(0)) w.reject(new Error('pod server exited')); });
  const next = (): Promise<string> => new Promise((resolve, reject) => {
    if (child.exitCode !== null || child.signalCode !== null) reject(new Error('pod server exited'));
    else waiting.push({ resolve, reject });
  });
  const first = JSON.parse(await next()) as { port: number };
  return {
    pid: child.pid ?? -1,
    port: first.port,
    async times(since, ips) {
      const reply = next();
      child.stdin!.write(`${JSON.stringify({ op: 'times', since, ips: ips ?? null })}\n`);
      const r = JSON.parse(await reply) as { times: Record<string, number[]> };
      return new Map(Object.entries(r.times));
    },
    async stats() {
      const reply = next();
      child.stdin!.write(`${JSON.stringify({ op: 'stats' })}\n`);
      return JSON.parse(await reply) as PodServerStats;
    },
    async fail(ips, status = 503) {
      const reply = next();
      child.stdin!.write(`${JSON.stringify({ op: 'fail', ips, status })}\n`);
      await reply;
    },
    async heal(ips) {
      const reply = next();
      child.stdin!.write(`${JSON.stringify({ op: 'heal', ips: ips ?? null })}\n`);
      await reply;
    },
    close: () => { child.stdin!.end(); },
  };
}

export interface ControllerProcess {
  readonly identity: string;
  readonly child: ChildProcess;
  readonly pid: number;
  readonly metricsPort: Promise<number>;
  /** Log lines by level so far. */
  readonly levels: Record<string, number>;
  /**
   * Readiness verdicts "failure" from its `transition` log lines: pod
   * (`namespace/name`) → log times (ms since the epoch), in order.
   */
  readonly failureVerdicts: Map<string, number[]>;
  /** Gate False writes the API server took (its `gate written` log lines, status False): pod → log times, in order. */
  readonly falseWritten: Map<string, number[]>;
  readonly exited: Promise<number | null>;
  stop(): Promise<void>;
}

/**
 * outprobe with `args` (its `--identity` is `identity`) and Node flags
 * `nodeArgs`, its JSON log appended to `logFile`; inside `cgroup` (entered
 * before Node starts) when given.
 */
export function startController(identity: string, args: readonly string[], logFile: string, nodeArgs: readonly string[] = [], cgroup?: MemoryCgroup): ControllerProcess {
  const [command, commandArgs] = inCgroup(cgroup, 'setpriv', ['--pdeathsig', 'TERM', '--', process.execPath, ...nodeArgs, mainPath, '--identity', identity, ...args]);
  const child = track(command, commandArgs, identity);
  const out = createWriteStream(logFile);
  const levels: Record<string, number> = {};
  const failureVerdicts = new Map<string, number[]>();
  const falseWritten = new Map<string, number[]>();
  const note = (m: Map<string, number[]>, pod: string, time: unknown): void => {
    const at = Date.parse(String(time));
    const list = m.get(pod);
    if (list === undefined) m.set(pod, [at]);
    else list.push(at);
  };
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => { resolve(code); }));
  const metricsPort = new Promise<number>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      out.write(`${line}\n`);
      try {
        const o = JSON.parse(line) as Record<string, unknown>;
        const level = String(o['level']);
        levels[level] = (levels[level] ?? 0) + 1;
        if (o['message'] === 'outprobe started' || o['msg'] === 'outprobe started') resolve(Number(o['metricsPort']));
        if (o['msg'] === 'transition' && o['kind'] === 'readiness' && o['to'] === 'failure' && typeof o['pod'] === 'string') note(failureVerdicts, o['pod'], o['time']);
        if (o['msg'] === 'gate written' && o['status'] === 'False' && typeof o['pod'] === 'string') note(falseWritten, o['pod'], o['time']);
      } catch {
        // not JSON
      }
    });
    void exited.then((code) => { reject(new Error(`outprobe exited (${String(code)}) before it started`)); });
  });
  metricsPort.catch(() => undefined);
  return {
    identity,
    child,
    pid: child.pid ?? -1,
    metricsPort,
    levels,
    failureVerdicts,
    falseWritten,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
      out.end();
    },
  };
}

const ceilingPath = fileURLToPath(new URL('./write-ceiling.ts', import.meta.url));

/** The bare gate writer of `--write-ceiling` (write-ceiling.ts): resolves with its JSON line once it has written every pod. */
export async function runWriteCeiling(kubeconfig: string, selector: string, inflight: number): Promise<Record<string, unknown>> {
  const child = track('setpriv', ['--pdeathsig', 'TERM', '--', process.execPath, ceilingPath, kubeconfig, selector, String(inflight)], 'write-ceiling');
  let last = '';
  createInterface({ input: child.stdout! }).on('line', (line) => { last = line; });
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => { resolve(c); }));
  if (code !== 0) throw new Error(`write-ceiling.ts exited ${String(code)}`);
  return JSON.parse(last) as Record<string, unknown>;
}

const enginePath = fileURLToPath(new URL('./engine.ts', import.meta.url));

/**
 * The engine-alone phase (engine.ts, issue 31 item 3): a bare Scheduler and executor over the
 * same pod IPs, port and period, in a process of its own (Node flags `nodeArgs`, e.g. a CPU
 * profile); resolves with its JSON line.
 */
export async function runEngine(configFile: string, nodeArgs: readonly string[] = []): Promise<Record<string, unknown>> {
  const child = track('setpriv', ['--pdeathsig', 'TERM', '--', process.execPath, ...nodeArgs, enginePath, configFile], 'engine');
  let last = '';
  createInterface({ input: child.stdout! }).on('line', (line) => { last = line; });
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => { resolve(c); }));
  if (code !== 0) throw new Error(`engine.ts exited ${String(code)}`);
  return JSON.parse(last) as Record<string, unknown>;
}
