// IPv4 address arithmetic for the plane's flags and certificates: the first address
// of a Service CIDR is the `kubernetes` Service's ClusterIP, which the apiserver's
// serving certificate must name (as kubeadm's does).

/** The 32-bit value of a dotted IPv4 address; throws on anything else. */
export function ipv4ToInt(ip: string): number {
  const parts = ip.split('.');
  if (parts.length !== 4 || !parts.every((p) => /^(0|[1-9]\d{0,2})$/.test(p) && Number(p) <= 255)) {
    throw new Error(`not an IPv4 address: '${ip}'`);
  }
  return parts.reduce((acc, p) => acc * 256 + Number(p), 0);
}

export function intToIpv4(n: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join('.');
}

/** Parses `a.b.c.d/len`; throws unless it is an IPv4 CIDR whose host bits are zero. */
export function parseIpv4Cidr(cidr: string): { readonly base: number; readonly bits: number } {
  const [ip, len, ...rest] = cidr.split('/');
  const bits = Number(len);
  if (ip === undefined || rest.length > 0 || !/^\d{1,2}$/.test(len ?? '') || bits > 32) {
    throw new Error(`not an IPv4 CIDR: '${cidr}'`);
  }
  const base = ipv4ToInt(ip);
  if (base % 2 ** (32 - bits) !== 0) throw new Error(`CIDR '${cidr}' has host bits set`);
  return { base, bits };
}

/** The first usable address of an IPv4 CIDR (network address + 1), e.g. 10.0.0.0/24 → 10.0.0.1. */
export function firstIp(cidr: string): string {
  const { base, bits } = parseIpv4Cidr(cidr);
  if (bits > 30) throw new Error(`CIDR '${cidr}' is too small for a Service range`);
  return intToIpv4(base + 1);
}
