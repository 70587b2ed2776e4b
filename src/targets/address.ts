import { BlockList, isIP } from 'node:net';

/**
 * The SSRF guard's last line (kubelet-probes.md §10): outprobe only probes a
 * pod's own IP, and never an address that is link-local (cloud metadata
 * endpoints live at 169.254.169.254 and fd00:ec2::254), unspecified or
 * multicast, whatever a pod's status claims. Deployments can narrow it
 * further with an allow-list (tests allow only 127.0.0.0/8).
 */
export class AddressGuard {
  readonly #denied = new BlockList();
  readonly #allowed: BlockList | undefined;

  /** @param allowedCidrs when set, only these ranges may be probed (e.g. ["127.0.0.0/8"]). */
  constructor(allowedCidrs?: readonly string[]) {
    this.#denied.addSubnet('169.254.0.0', 16, 'ipv4');
    this.#denied.addSubnet('0.0.0.0', 8, 'ipv4');
    this.#denied.addSubnet('224.0.0.0', 4, 'ipv4');
    this.#denied.addAddress('255.255.255.255', 'ipv4');
    this.#denied.addSubnet('fe80::', 10, 'ipv6');
    this.#denied.addSubnet('ff00::', 8, 'ipv6');
    this.#denied.addAddress('::', 'ipv6');
    this.#denied.addAddress('fd00:ec2::254', 'ipv6');
    if (allowedCidrs !== undefined && allowedCidrs.length > 0) {
      const allowed = new BlockList();
      for (const cidr of allowedCidrs) {
        const [net = '', bits = ''] = cidr.split('/');
        const family = isIP(net) === 6 ? 'ipv6' : 'ipv4';
        allowed.addSubnet(net, Number(bits || (family === 'ipv6' ? 128 : 32)), family);
      }
      this.#allowed = allowed;
    }
  }

  /** `undefined` when the address may be probed, else why not. */
  check(ip: string): string | undefined {
    const v = isIP(ip);
    if (v === 0) return `pod IP ${JSON.stringify(ip)} is not an IP address`;
    const family = v === 6 ? 'ipv6' : 'ipv4';
    if (this.#denied.check(ip, family)) return `pod IP ${ip} is link-local, unspecified or multicast: not probed`;
    if (this.#allowed !== undefined && !this.#allowed.check(ip, family)) return `pod IP ${ip} is outside the allowed probe ranges`;
    return undefined;
  }
}
