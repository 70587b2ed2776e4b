/**
 * TCP connections of one process to one address:port, from /proc: the
 * process's socket inodes (/proc/<pid>/fd → `socket:[inode]`) matched against
 * the ESTABLISHED rows of /proc/<pid>/net/tcp whose remote end is the address.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** `127.0.0.1`, 6443 → `0100007F:192B` (the kernel's little-endian hex, IPv4). */
export function procAddress(ip: string, port: number): string {
  const octets = ip.split('.').map(Number);
  if (octets.length !== 4 || octets.some((o) => !Number.isInteger(o) || o < 0 || o > 255)) throw new Error(`not an IPv4 address: ${ip}`);
  const hex = octets.reverse().map((o) => o.toString(16).padStart(2, '0')).join('').toUpperCase();
  return `${hex}:${port.toString(16).padStart(4, '0').toUpperCase()}`;
}

/** Inodes of ESTABLISHED (state 01) sockets in /proc/net/tcp text whose remote address is `remote`. */
export function establishedTo(procNetTcp: string, remote: string): Set<number> {
  const out = new Set<number>();
  for (const row of procNetTcp.split('\n').slice(1)) {
    const f = row.trim().split(/\s+/);
    // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
    if (f.length < 10 || f[2] !== remote || f[3] !== '01') continue;
    out.add(Number(f[9]));
  }
  return out;
}

/** Socket inodes the process holds open. */
export function socketInodes(pid: number): Set<number> {
  const out = new Set<number>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m !== null) out.add(Number(m[1]));
    } catch {
      // closed between readdir and readlink
    }
  }
  return out;
}

/** ESTABLISHED TCP connections from `pid` to ip:port; undefined once the process is gone. */
export function connectionsTo(pid: number, ip: string, port: number): number | undefined {
  try {
    const mine = socketInodes(pid);
    const table = establishedTo(readFileSync(`/proc/${pid}/net/tcp`, 'utf8'), procAddress(ip, port));
    let n = 0;
    for (const inode of table) if (mine.has(inode)) n++;
    return n;
  } catch {
    return undefined;
  }
}
