/**
 * Go servers for the gRPC prober's tests (test/support/grpc-go-server, with
 * the grpc-go and x/net releases k8s.io/kubernetes v1.37.2 links): a real
 * grpc-go health server (gzip-compressed replies, deadline handling), and a
 * frame-level HTTP/2 server for GOAWAY and reset cases. Each is built once
 * per test process with the Go toolchain (warm caches make it a second or
 * two), run on 127.0.0.1, and stopped with its stdin.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { promisify } from 'node:util';

const source = path.join(import.meta.dirname, 'grpc-go-server');

export interface GrpcGoServerOptions {
  /** Compress every reply with gzip. */
  readonly gzip?: boolean;
  /** Answer after this many milliseconds. */
  readonly delayMs?: number;
  /** ServingStatus name to report (default SERVING). */
  readonly status?: string;
}

export interface GrpcGoServer {
  readonly port: number;
  readonly close: () => Promise<void>;
}

function goBinary(): string {
  const fallback = '/usr/local/go/bin/go';
  const onPath = (process.env['PATH'] ?? '').split(path.delimiter).map((d) => path.join(d, 'go')).find((p) => existsSync(p));
  return onPath ?? fallback;
}

const built = new Map<string, Promise<string>>();

/** Builds one package of the module (once per test process) and returns the binary. */
function build(pkg: '.' | './rawh2'): Promise<string> {
  let bin = built.get(pkg);
  if (bin === undefined) {
    bin = (async () => {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'outprobe-grpc-go-'));
      process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
      const out = path.join(dir, 'server');
      await promisify(execFile)(goBinary(), ['build', '-o', out, pkg], {
        cwd: source,
        env: { ...process.env, CGO_ENABLED: '0', GOTOOLCHAIN: 'local', GOFLAGS: '-mod=readonly -buildvcs=false' },
        timeout: 300_000,
      });
      return out;
    })();
    built.set(pkg, bin);
  }
  return bin;
}

/** Runs a built server; it prints its port first and stops when its stdin closes. */
async function run(bin: string, args: readonly string[]): Promise<{ readonly port: number; readonly stderr: () => string; readonly close: () => Promise<void> }> {
  const child = spawn(bin, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const lines = readline.createInterface({ input: child.stdout });
  const first = await new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`${path.basename(bin)} exited (${code}) before listening: ${stderr}`)));
  });
  lines.close();
  return {
    port: Number(first),
    stderr: () => stderr,
    close: async () => {
      child.stdin.end();
      await exited;
    },
  };
}

export async function grpcGoServer(options: GrpcGoServerOptions = {}): Promise<GrpcGoServer> {
  const args = [`-status=${options.status ?? 'SERVING'}`];
  if (options.gzip === true) args.push('-gzip');
  if (options.delayMs !== undefined) args.push(`-delay=${options.delayMs}ms`);
  const { port, close } = await run(await build('.'), args);
  return { port, close };
}

/** Connection-level behaviours of test/support/grpc-go-server/rawh2 (see its doc comment). */
export type RawH2GoMode = 'goaway-first' | 'goaway-all' | 'goaway-reset' | 'reset' | 'goaway-start';

export interface RawH2GoServer extends GrpcGoServer {
  /** Connections the server accepted so far. */
  readonly connections: () => number;
}

/** A frame-level HTTP/2 server written with golang.org/x/net/http2, for GOAWAY and reset cases. */
export async function rawH2GoServer(mode: RawH2GoMode): Promise<RawH2GoServer> {
  const { port, stderr, close } = await run(await build('./rawh2'), [`-mode=${mode}`]);
  return { port, close, connections: () => stderr().split('\n').filter((l) => l.startsWith('connection ')).length };
}
