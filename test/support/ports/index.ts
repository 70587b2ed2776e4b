// Ports for test components that cannot collide: not with an outgoing connection, not with
// another test, not with a concurrent run of the same suite (docs/development.md, "Ports").
//
// `listen(0)` then close (the old freePort) hands out a port from the kernel's ephemeral
// range (/proc/sys/net/ipv4/ip_local_port_range, 32768-60999 by default): until the
// component binds it, any outgoing connection on the machine may take it as its local port,
// and a concurrent run may be handed the same one. claimPort() instead picks a port BELOW
// the ephemeral range, where the kernel never puts an outgoing connection, and claims it
// with a lock that only one process on the machine can hold: an abstract Unix socket
// `\0outprobe-port-<port>` (Linux), bound for as long as the claim lasts. The kernel
// releases it when the process ends, however it ends, so no stale claim outlives a run
// (no lock file to clean up, no PID to check). Before handing the port out, claimPort()
// binds it once on the host asked for, so a port some other program listens on (a detached
// plane of `npm run cluster:up`, a service of the machine) is skipped.
//
// A claim is for the process's lifetime unless released: release it when the component that
// used it has stopped (the control plane does, in stop()).
import { readFileSync } from 'node:fs';
import net from 'node:net';

/** Lowest port handed out: above the well-known and most registered service ports. */
const FLOOR = 16_384;

/** The first port of the kernel's ephemeral range (outgoing connections take ports from there up). */
export function ephemeralFloor(): number {
  try {
    const first = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(first) && first > 1024) return first;
  } catch { /* not Linux: the IANA dynamic range */ }
  return 49_152;
}

/** The range claimPort() hands out from: [first, last], all below the ephemeral range. */
export function claimRange(): { readonly first: number; readonly last: number } {
  const last = ephemeralFloor() - 1;
  const first = Math.min(FLOOR, last - 2048);
  if (first < 1024) throw new Error(`the ephemeral port range starts at ${last + 1}: no room below it for test ports (set net.ipv4.ip_local_port_range higher)`);
  return { first, last };
}

const held = new Map<number, net.Server>();

function listen(server: net.Server, opts: net.ListenOptions): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException): void => {
      if (err.code === 'EADDRINUSE' || err.code === 'EACCES' || err.code === 'EADDRNOTAVAIL') resolve(false);
      else reject(err);
    };
    server.once('error', onError);
    server.listen(opts, () => {
      server.removeListener('error', onError);
      resolve(true);
    });
  });
}

/** Takes the machine-wide lock of `port`; false when another process (or this one) holds it. */
async function lock(port: number): Promise<net.Server | undefined> {
  if (held.has(port)) return undefined;
  const server = net.createServer();
  if (!(await listen(server, { path: `\0outprobe-port-${port}` }))) return undefined;
  server.unref(); // a claim never keeps the process alive
  return server;
}

/** True when `host:port` can be bound now (nothing listens there). */
async function bindable(host: string, port: number): Promise<boolean> {
  const probe = net.createServer();
  if (!(await listen(probe, { host, port }))) return false;
  await new Promise<void>((resolve) => { probe.close(() => { resolve(); }); });
  return true;
}

/**
 * Claims a TCP port below the ephemeral range that no other claimant on the machine holds
 * and nothing listens on at `host` (127.0.0.1 by default); held until releasePort() or the
 * end of the process.
 */
export async function claimPort(host = '127.0.0.1'): Promise<number> {
  const { first, last } = claimRange();
  const span = last - first + 1;
  const start = Math.floor(Math.random() * span);
  for (let k = 0; k < span; k++) {
    const port = first + ((start + k) % span);
    const server = await lock(port);
    if (server === undefined) continue;
    if (await bindable(host, port)) {
      held.set(port, server);
      return port;
    }
    server.close();
  }
  throw new Error(`no port left in ${first}-${last}: every one is claimed or in use`);
}

/** Gives a claimed port back (after the component that used it stopped). */
export function releasePort(port: number): void {
  held.get(port)?.close();
  held.delete(port);
}

/** Ports this process holds now (for tests of the allocator). */
export function heldPorts(): number[] {
  return [...held.keys()];
}

/** Second octets of 127.X.0.0/16 that claimLoopbackBlock() hands out. */
export const LOOPBACK_BLOCKS = { first: 16, last: 239 } as const;

/**
 * Claims a loopback /16, 127.X.0.0/16 with X in 16..239, for this process's fake pods and
 * servers (each bound to its own 127.X.y.z address, on fixed ports): the same kind of
 * machine-wide lock as claimPort (`\0outprobe-lo-<X>`), so two processes never get the same
 * block (they used to pick it from their PID: 1 in 224 collided). Held until the process ends.
 */
export async function claimLoopbackBlock(): Promise<number> {
  const { first, last } = LOOPBACK_BLOCKS;
  const span = last - first + 1;
  const start = Math.floor(Math.random() * span);
  for (let k = 0; k < span; k++) {
    const octet = first + ((start + k) % span);
    const server = net.createServer();
    if (!(await listen(server, { path: `\0outprobe-lo-${octet}` }))) continue;
    server.unref();
    heldBlocks.push(server);
    return octet;
  }
  throw new Error(`no loopback block left: 127.${first}-${last}.0.0/16 are all claimed`);
}

const heldBlocks: net.Server[] = [];
