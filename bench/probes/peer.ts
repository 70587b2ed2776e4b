/**
 * What the side-by-side peers (blackbox_exporter, Cloudprober) share: a free
 * port on 127.0.0.1, a plain GET of their HTTP endpoints, and their process,
 * started under `setpriv --pdeathsig KILL` (it execs, so the pid is the
 * peer's, and the peer dies with us even if we are SIGKILLed) and stopped with
 * a signal, its temporary directory removed.
 */
import type { ChildProcess, SpawnOptions } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import http from 'node:http';
import { claimPort } from '../../test/support/ports/index.ts';
import { track } from './children.ts';

/** A port for a peer to listen on: below the ephemeral range, locked machine-wide (test/support/ports). */
export function freePort(): Promise<number> {
  return claimPort('127.0.0.1');
}

/** GET `url`; resolves with the status and the body whatever the status, rejects on a network error or after `timeoutMs`. */
export function httpGet(url: string, agent: http.Agent | false, timeoutMs: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url}: timed out`)));
    req.on('error', reject);
  });
}

export interface PeerProcess {
  readonly child: ChildProcess;
  /** Sends `stopSignal` if it still runs, waits for its exit, removes `dir`. */
  readonly stop: () => Promise<void>;
}

/** Starts `binary args…` as a tracked child (see the module comment); `dir` is removed when it is stopped. */
export function startPeer(binary: string, args: readonly string[], label: string, dir: string, stopSignal: NodeJS.Signals, options: SpawnOptions = {}): PeerProcess {
  const child = existsSync('/usr/bin/setpriv')
    ? track('/usr/bin/setpriv', ['--pdeathsig', 'KILL', binary, ...args], label, options)
    : track(binary, args, label, options);
  return {
    child,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill(stopSignal);
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
