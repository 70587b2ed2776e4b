// Client of tools/podserve: one child process that serves many simulated pods'
// ports, each inside the pod's network namespace or, without one, on a 127.x
// address (docs/adr/0014-pod-network.md, "Serving"). Requests are JSON lines
// answered in order; a resolved call means the change is in effect (an add's
// listeners are bound, a health flip has closed or reopened the TCP ports).
// The child stops when its stdin closes, and is killed when this process exits.
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import readline from 'node:readline';
import { podserveBinary } from './binary.ts';

export { podserveBinary } from './binary.ts';

export type ServedPortKind = 'http' | 'tcp' | 'grpc';

export interface ServedPort {
  readonly port: number;
  readonly name: string;
  readonly kind: ServedPortKind;
}

export interface PodSpec {
  /** Unique key of the pod in this process (e.g. its name). */
  readonly pod: string;
  /** 127.x without `netns`; 198.18.0.0/15 inside `netns`. */
  readonly ip: string;
  /** `/run/netns/<name>`; omitted = serve on loopback in podserve's own namespace. */
  readonly netns?: string;
  readonly ports: readonly ServedPort[];
  readonly healthy: boolean;
  /** Keep an access log of the pod's HTTP requests, for `access()`. @default false */
  readonly accessLog?: boolean;
}

/** One HTTP request a pod's server saw: when (Unix ms) and from which source address. */
export interface Access {
  readonly t: number;
  readonly from: string;
}

/** Requests answered per pod: HTTP requests, accepted bare-TCP connections, gRPC health calls. */
export interface PodCounts {
  readonly http: number;
  readonly tcp: number;
  readonly grpc: number;
}

/** What podserve refused: `bad_request`, `bind_failed`, `exists`, `not_found`, `limit`, or `exited`. */
export class PodserveError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = 'PodserveError';
    this.code = code;
  }
}

export interface PodserveOptions {
  /** Receives podserve's stderr lines. @default discarded */
  readonly log?: (line: string) => void;
  /** The binary to run. @default podserveBinary() */
  readonly binary?: string;
}

export interface Podserve {
  readonly pid: number;
  add(spec: PodSpec): Promise<void>;
  remove(pod: string): Promise<void>;
  setHealthy(pod: string, healthy: boolean): Promise<void>;
  /** Delays every HTTP reply and gRPC health call of the pod by `ms` (0 = none). */
  setDelay(pod: string, ms: number): Promise<void>;
  /** Counts of every served pod, in one request. */
  stats(): Promise<Map<string, PodCounts>>;
  /**
   * Drains the access logs of the pods added with `accessLog`: each pod's HTTP requests since
   * the last call (pods with none are absent). At most 10,000 per pod are kept between calls;
   * `dropped` counts those lost past that.
   */
  access(): Promise<{ readonly logs: Map<string, Access[]>; readonly dropped: Map<string, number> }>;
  ping(): Promise<void>;
  /** Closes stdin (podserve closes every listener and exits) and waits for the exit. */
  close(): Promise<void>;
}

interface Reply {
  readonly id: number;
  readonly ok: boolean;
  readonly code?: string;
  readonly error?: string;
  readonly stats?: Record<string, PodCounts>;
  readonly access?: Record<string, Access[]>;
  readonly dropped?: Record<string, number>;
}

interface Pending { readonly resolve: (r: Reply) => void; readonly reject: (e: Error) => void }

const live = new Set<ChildProcessWithoutNullStreams>();
let exitHook = false;

function track(child: ChildProcessWithoutNullStreams): void {
  live.add(child);
  child.once('exit', () => live.delete(child));
  if (exitHook) return;
  exitHook = true;
  process.once('exit', () => { for (const c of live) c.kill('SIGKILL'); });
}

export async function startPodserve(opts: PodserveOptions = {}): Promise<Podserve> {
  const child = spawn(opts.binary ?? await podserveBinary(), [], { stdio: ['pipe', 'pipe', 'pipe'] });
  track(child);
  const pending = new Map<number, Pending>();
  let nextId = 1;
  let exitError: PodserveError | undefined;
  let markExited: () => void = () => undefined;
  const exited = new Promise<void>((resolve) => { markExited = resolve; });
  const finish = (why: string): void => {
    exitError ??= new PodserveError('exited', why);
    for (const p of pending.values()) p.reject(exitError);
    pending.clear();
    markExited();
  };
  child.once('exit', (code, signal) => { finish(`podserve exited (${signal ?? String(code)})`); });
  // The binary could not be started: 'exit' may never come.
  child.once('error', (err) => { finish(`podserve: ${err.message}`); });
  readline.createInterface({ input: child.stderr }).on('line', (l) => opts.log?.(l));
  readline.createInterface({ input: child.stdout }).on('line', (line) => {
    const r = JSON.parse(line) as Reply;
    const p = pending.get(r.id);
    pending.delete(r.id);
    p?.resolve(r);
  });
  child.stdin.on('error', () => undefined); // a dead child is reported by 'exit'

  const call = async (req: Record<string, unknown>): Promise<Reply> => {
    if (exitError !== undefined) throw exitError;
    const id = nextId++;
    const reply = new Promise<Reply>((resolve, reject) => { pending.set(id, { resolve, reject }); });
    child.stdin.write(`${JSON.stringify({ ...req, id })}\n`);
    const r = await reply;
    if (!r.ok) throw new PodserveError(r.code ?? 'unknown', r.error ?? 'podserve refused the request');
    return r;
  };

  const ps: Podserve = {
    pid: child.pid ?? -1,
    add: async (spec) => { await call({ op: 'add', ...spec }); },
    remove: async (pod) => { await call({ op: 'remove', pod }); },
    setHealthy: async (pod, healthy) => { await call({ op: 'health', pod, healthy }); },
    setDelay: async (pod, ms) => { await call({ op: 'delay', pod, ms }); },
    stats: async () => new Map(Object.entries((await call({ op: 'stats' })).stats ?? {})),
    access: async () => {
      const r = await call({ op: 'access' });
      return { logs: new Map(Object.entries(r.access ?? {})), dropped: new Map(Object.entries(r.dropped ?? {})) };
    },
    ping: async () => { await call({ op: 'ping' }); },
    close: async () => {
      child.stdin.end();
      await exited;
    },
  };
  await ps.ping();
  return ps;
}
