// IPv4 arithmetic for the address plan and fault rules: dotted quads <-> integers,
// CIDR parsing and containment. Pure; throws RangeError on malformed input.
const QUAD = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

export function ipToInt(ip: string): number {
  const m = QUAD.exec(ip);
  if (m === null) throw new RangeError(`not an IPv4 address: ${JSON.stringify(ip)}`);
  let n = 0;
  for (const part of m.slice(1)) {
    const o = Number(part);
    if (o > 255) throw new RangeError(`not an IPv4 address: ${JSON.stringify(ip)}`);
    n = n * 256 + o;
  }
  return n;
}

export function intToIp(n: number): string {
  return [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');
}

export interface Cidr { readonly start: number; readonly size: number; readonly text: string }

/** Parses `a.b.c.d/len` or a bare address (a /32); the address must be the network address. */
export function parseCidr(text: string): Cidr {
  const [addr = '', lenText] = text.split('/');
  const len = lenText === undefined ? 32 : Number(lenText);
  if (!Number.isInteger(len) || len < 0 || len > 32 || lenText === '') throw new RangeError(`bad prefix length in ${JSON.stringify(text)}`);
  const size = 2 ** (32 - len);
  const start = ipToInt(addr);
  if (start % size !== 0) throw new RangeError(`${text} has host bits set`);
  return { start, size, text: lenText === undefined ? `${addr}/32` : text };
}

export function cidrContains(cidr: string, ip: string): boolean {
  const c = parseCidr(cidr);
  const n = ipToInt(ip);
  return n >= c.start && n < c.start + c.size;
}

/** True when the two ranges share at least one address. */
export function cidrsOverlap(a: string, b: string): boolean {
  const x = parseCidr(a);
  const y = parseCidr(b);
  return x.start < y.start + y.size && y.start < x.start + x.size;
}

/** True when all of `inner` lies in `outer`. */
export function cidrWithin(outer: string, inner: string): boolean {
  const o = parseCidr(outer);
  const i = parseCidr(inner);
  return i.start >= o.start && i.start + i.size <= o.start + o.size;
}

const LABEL = /^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$/;

/** A sandbox label: 1-40 of [a-z0-9-], no leading or trailing '-'. */
export function checkLabel(label: string): string {
  if (!LABEL.test(label)) throw new RangeError(`bad sandbox label ${JSON.stringify(label)}: use 1-40 of [a-z0-9-]`);
  return label;
}
