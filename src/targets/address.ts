import { BlockList, isIP } from 'node:net';
import { embeddedIpv4 } from './embedded-ipv4.ts';

/**
 * Cloud metadata and host-agent endpoints that are not link-local: never
 * probed, whatever `--allowed-probe-cidrs` says. (169.254.169.254, AWS ECS
 * 169.254.170.2 and the rest of 169.254.0.0/16 are link-local; AWS's IPv6
 * endpoint is fd00:ec2::254.)
 */
const metadataIpv4 = ['100.100.100.200' /* Alibaba Cloud */, '168.63.129.16' /* Azure wireserver */];

/**
 * The SSRF guard's last line (kubelet-probes.md §10): outprobe only probes a
 * pod's own IP, and never an address that is link-local (cloud metadata
 * endpoints live at 169.254.169.254 and fd00:ec2::254), a metadata endpoint
 * outside link-local (100.100.100.200, 168.63.129.16), unspecified,
 * multicast or broadcast, whatever a pod's status claims; nor such an IPv4
 * address written as IPv6 (IPv4-mapped/compatible, NAT64 64:ff9b::/96,
 * 6to4 2002::/16). Loopback (127.0.0.0/8, ::1) is refused unless an allowed
 * CIDR inside loopback covers it (the test planes pass 127.0.0.0/8; their
 * simulated pods have 127.x IPs); an IPv6 form of an IPv4 loopback address
 * is always refused. Deployments narrow it further with an allow-list.
 */
export class AddressGuard {
  readonly #denied = new BlockList();
  readonly #loopback = new BlockList();
  readonly #allowed: BlockList | undefined;
  readonly #allowedLoopback = new BlockList();

  /** @param allowedCidrs when set, only these ranges may be probed (e.g. ["127.0.0.0/8"]). */
  constructor(allowedCidrs?: readonly string[]) {
    this.#denied.addSubnet('169.254.0.0', 16, 'ipv4');
    this.#denied.addSubnet('0.0.0.0', 8, 'ipv4');
    this.#denied.addSubnet('224.0.0.0', 4, 'ipv4');
    this.#denied.addAddress('255.255.255.255', 'ipv4');
    for (const ip of metadataIpv4) this.#denied.addAddress(ip, 'ipv4');
    this.#denied.addSubnet('fe80::', 10, 'ipv6');
    this.#denied.addSubnet('ff00::', 8, 'ipv6');
    this.#denied.addAddress('::', 'ipv6');
    this.#denied.addAddress('fd00:ec2::254', 'ipv6');
    this.#loopback.addSubnet('127.0.0.0', 8, 'ipv4');
    this.#loopback.addAddress('::1', 'ipv6');
    if (allowedCidrs !== undefined && allowedCidrs.length > 0) {
      const allowed = new BlockList();
      for (const cidr of allowedCidrs) this.#allow(allowed, cidr);
      this.#allowed = allowed;
    }
  }

  #allow(allowed: BlockList, cidr: string): void {
    const [net = '', bits = ''] = cidr.split('/');
    const family = isIP(net) === 6 ? 'ipv6' : 'ipv4';
    const prefix = Number(bits || (family === 'ipv6' ? 128 : 32));
    allowed.addSubnet(net, prefix, family);
    // Only a range inside loopback opens loopback: 0.0.0.0/0 means "any pod IP", not "this host".
    const insideLoopback = family === 'ipv4' ? prefix >= 8 && this.#loopback.check(net, 'ipv4') : prefix === 128 && this.#loopback.check(net, 'ipv6');
    if (insideLoopback) this.#allowedLoopback.addSubnet(net, prefix, family);
  }

  /** `undefined` when the address may be probed, else why not. */
  check(ip: string): string | undefined {
    const v = isIP(ip);
    if (v === 0) return `pod IP ${JSON.stringify(ip)} is not an IP address`;
    const family = v === 6 ? 'ipv6' : 'ipv4';
    const embedded = family === 'ipv6' ? embeddedIpv4(ip) : undefined;
    if (this.#denied.check(ip, family) || (embedded !== undefined && this.#denied.check(embedded, 'ipv4'))) {
      return `pod IP ${ip} is link-local, a cloud metadata address, unspecified or multicast: not probed`;
    }
    if (embedded !== undefined && this.#loopback.check(embedded, 'ipv4')) return `pod IP ${ip} is an IPv6 form of a loopback address: not probed`;
    if (this.#loopback.check(ip, family) && !this.#allowedLoopback.check(ip, family)) {
      return `pod IP ${ip} is a loopback address: not probed unless --allowed-probe-cidrs lists a loopback range`;
    }
    if (this.#allowed !== undefined && !this.#allowed.check(ip, family)) return `pod IP ${ip} is outside the allowed probe ranges`;
    return undefined;
  }
}
