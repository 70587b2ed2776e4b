import { isIPv6 } from 'node:net';

/** The 16 bytes of a valid IPv6 literal (no zone), `::` expanded, a dotted IPv4 tail included. */
export function ipv6Bytes(ip: string): number[] | undefined {
  if (!isIPv6(ip) || ip.includes('%')) return undefined;
  const words = (part: string): number[] => {
    if (part === '') return [];
    const out: number[] = [];
    for (const group of part.split(':')) {
      if (group.includes('.')) {
        const [a = 0, b = 0, c = 0, d = 0] = group.split('.').map(Number);
        out.push((a << 8) | b, (c << 8) | d);
      } else {
        out.push(Number.parseInt(group, 16));
      }
    }
    return out;
  };
  const [head = '', tail] = ip.split('::');
  const h = words(head);
  const t = tail === undefined ? [] : words(tail);
  const all = tail === undefined ? h : [...h, ...Array<number>(8 - h.length - t.length).fill(0), ...t];
  return all.flatMap((w) => [w >> 8, w & 0xff]);
}

/** [pattern over the first bytes (undefined = any), offset of the IPv4 address]. */
const forms: readonly (readonly [readonly (number | undefined)[], number])[] = [
  [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff], 12], // IPv4-mapped ::ffff:a.b.c.d
  [[0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0], 12], // IPv4-translated ::ffff:0:a.b.c.d (SIIT)
  [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], 12], // IPv4-compatible ::a.b.c.d (deprecated, still routed by some stacks)
  [[0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0], 12], // NAT64 64:ff9b::a.b.c.d (RFC 6052)
  [[0x20, 0x02], 2], // 6to4 2002:AABB:CCDD::/48 (RFC 3056)
];

/**
 * The IPv4 address an IPv6 address stands for, in the forms that reach an
 * IPv4 host (see `forms`); `undefined` for any other address, and for ::
 * and ::1, which have rules of their own.
 */
export function embeddedIpv4(ip: string): string | undefined {
  const b = ipv6Bytes(ip);
  if (b === undefined) return undefined;
  if (b.slice(0, 15).every((x) => x === 0)) return undefined;
  for (const [pattern, at] of forms) {
    if (pattern.every((x, i) => x === undefined || b[i] === x)) return b.slice(at, at + 4).join('.');
  }
  return undefined;
}
