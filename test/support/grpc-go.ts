/**
 * A real grpc-go health server (test/support/grpc-go-server, the grpc-go
 * release k8s.io/kubernetes v1.37.2 links) for tests that need grpc-go's own
 * server behaviour: gzip-compressed replies, deadline handling. Built once
 * per test process with the Go toolchain (warm caches make it a second or
 * two), run on 127.0.0.1, stopped with its stdin.
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

let built: Promise<{ readonly bin: string; readonly dir: string }> | undefined;

/** Builds the server binary once for this process. */
function build(): Promise<{ readonly bin: string; readonly dir: string }> {
  built ??= (async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'outprobe-grpc-go-'));
    const bin = path.join(dir, 'grpc-go-server');
    await promisify(execFile)(goBinary(), ['build', '-o', bin, '.'], {
      cwd: source,
      env: { ...process.env, CGO_ENABLED: '0', GOTOOLCHAIN: 'local', GOFLAGS: '-mod=readonly -buildvcs=false' },
      timeout: 300_000,
    });
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    return { bin, dir };
  })();
  return built;
}

export async function grpcGoServer(options: GrpcGoServerOptions = {}): Promise<GrpcGoServer> {
  const { bin } = await build();
  const args = [`-status=${options.status ?? 'SERVING'}`];
  if (options.gzip === true) args.push('-gzip');
  if (options.delayMs !== undefined) args.push(`-delay=${options.delayMs}ms`);
  const child = spawn(bin, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const lines = readline.createInterface({ input: child.stdout });
  const first = await new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`grpc-go server exited (${code}) before listening`)));
  });
  lines.close();
  return {
    port: Number(first),
    close: async () => {
      child.stdin.end();
      await exited;
    },
  };
}
