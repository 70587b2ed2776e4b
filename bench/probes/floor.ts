/**
 * The kernel's floor for a TCP probe (issue 31 item 6): connect on Node's TCP
 * handle, then reset() (RST, as outprobe closes), and nothing else: no
 * deadline, no abort listener, no outcome, no scheduler. What a TCP probe
 * cannot cost less than in Node. Shared by `bench:tcp-layers` (its `raw`
 * layer) and by `bench:probes`' `floor tcp` phase, which runs it in its own
 * probing process exactly as the outprobe phase runs the Scheduler.
 */
import { performance } from 'node:perf_hooks';
import type { RawTcp } from '../../src/probing/rawtcp/index.ts';
import type { RunResult } from './saturate.ts';
import type { Listener } from './targets.ts';

/** A bare TCP probe on Node's TCP handle: connect, then reset. True when it connected. */
export function rawConnect(raw: RawTcp, ip: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const handle = raw.newHandle();
    const req = raw.newConnectReq();
    req.oncomplete = (status) => {
      if (status === 0 && handle.reset() === 0) resolve(true);
      else {
        handle.close();
        resolve(false);
      }
    };
    if (handle.connect(req, ip, port) !== 0) {
      handle.close();
      resolve(false);
    }
  });
}

/**
 * `quota` raw connects over `targets` round-robin, `concurrency` in flight
 * (each of `concurrency` loops starts the next as its last ends), and the CPU
 * of this process over exactly that window.
 */
export async function runFloor(raw: RawTcp, targets: readonly Listener[], quota: number, concurrency: number): Promise<RunResult> {
  let next = 0;
  let failed = 0;
  const cpuBefore = process.cpuUsage();
  const wallBefore = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < quota) {
        const target = targets[next++ % targets.length];
        if (target === undefined || !(await rawConnect(raw, target.ip, target.port))) failed++;
      }
    }),
  );
  const wallMs = performance.now() - wallBefore;
  const cpu = process.cpuUsage(cpuBefore);
  return { cpu, wallMs, outcomes: { success: quota - failed, warning: 0, failure: failed, errored: 0 }, problems: failed > 0 ? [`${String(failed)} raw connects failed`] : [] };
}
