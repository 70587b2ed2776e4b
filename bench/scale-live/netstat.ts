/**
 * The kernel's TCP counters (/proc/net/netstat TcpExt, /proc/net/snmp Tcp)
 * that tell the pods' side apart from the prober: a full accept queue on the
 * pod server's listener (ListenOverflows/ListenDrops: the SYN is dropped and
 * the client retransmits it after 1 s, past the default 1 s probe timeout),
 * SYN retransmissions and retransmission timeouts. Counters are host-wide
 * (this network namespace): other work on the machine adds to them.
 */
import { readFileSync } from 'node:fs';

export const netstatNames = ['ListenOverflows', 'ListenDrops', 'TCPSynRetrans', 'TCPTimeouts', 'TCPAbortOnTimeout', 'RetransSegs', 'ActiveOpens', 'AttemptFails'] as const;
export type NetstatCounters = Readonly<Record<(typeof netstatNames)[number], number>>;

/** Parses the header/value line pairs of /proc/net/netstat or /proc/net/snmp into `Prefix:Name → value`. */
export function parseProcNet(text: string): Map<string, number> {
  const out = new Map<string, number>();
  const lines = text.split('\n').filter((l) => l !== '');
  for (let i = 0; i + 1 < lines.length; i += 2) {
    const keys = (lines[i] ?? '').split(/\s+/);
    const values = (lines[i + 1] ?? '').split(/\s+/);
    const prefix = keys[0] ?? '';
    for (let k = 1; k < keys.length; k++) out.set(`${prefix}${keys[k] ?? ''}`, Number(values[k]));
  }
  return out;
}

function read(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

export function readNetstat(): NetstatCounters {
  const m = new Map([...parseProcNet(read('/proc/net/netstat')), ...parseProcNet(read('/proc/net/snmp'))]);
  const get = (k: string): number => m.get(`TcpExt:${k}`) ?? m.get(`Tcp:${k}`) ?? 0;
  return Object.fromEntries(netstatNames.map((n) => [n, get(n)])) as NetstatCounters;
}

export function netstatIncrease(from: NetstatCounters, to: NetstatCounters): NetstatCounters {
  return Object.fromEntries(netstatNames.map((n) => [n, to[n] - from[n]])) as NetstatCounters;
}
