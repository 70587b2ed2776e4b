import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AddressGuard } from '../../../src/targets/index.ts';

const denied = /is link-local, a cloud metadata address, unspecified or multicast: not probed$/;
const loopback = /is a loopback address: not probed unless --allowed-probe-cidrs lists a loopback range$/;
const loopbackAsIpv6 = /is an IPv6 form of a loopback address: not probed$/;

describe('AddressGuard', () => {
  const open = new AddressGuard();
  const testPlane = new AddressGuard(['127.0.0.0/8']);
  const everything = new AddressGuard(['0.0.0.0/0', '::/0']);
  const guards = [['no allow-list', open], ['127.0.0.0/8', testPlane], ['0.0.0.0/0 and ::/0', everything]] as const;

  it('refuses cloud metadata addresses in every form, even when an allowed range covers them', () => {
    const metadata = [
      '169.254.169.254', // AWS, GCP, Azure IMDS, OpenStack, ... (link-local)
      '169.254.170.2', // AWS ECS task metadata
      '100.100.100.200', // Alibaba Cloud
      '168.63.129.16', // Azure wireserver
      'fd00:ec2::254', // AWS IMDS over IPv6
      '::ffff:169.254.169.254', '::ffff:a9fe:a9fe', // IPv4-mapped
      '::ffff:0:a9fe:a9fe', // IPv4-translated (SIIT)
      '::169.254.169.254', // IPv4-compatible
      '64:ff9b::a9fe:a9fe', '64:ff9b::169.254.169.254', // NAT64
      '2002:a9fe:a9fe::1', // 6to4
      '::ffff:100.100.100.200', '64:ff9b::6464:64c8', '::ffff:168.63.129.16', '64:ff9b::a83f:8110',
    ];
    for (const [name, guard] of guards) {
      for (const ip of metadata) assert.match(guard.check(ip) ?? 'allowed', denied, `${ip} with ${name}`);
    }
    assert.match(new AddressGuard(['169.254.0.0/16', '100.100.100.200/32', '168.63.129.16/32']).check('100.100.100.200') ?? 'allowed', denied);
  });

  it('refuses unspecified, multicast, broadcast and link-local addresses in every form', () => {
    for (const ip of ['0.0.0.0', '0.1.2.3', '224.0.0.1', '239.1.1.1', '255.255.255.255', '::', 'fe80::1', 'ff02::1', '::ffff:0.0.0.0', '64:ff9b::e000:1', '169.254.1.1']) {
      for (const [name, guard] of guards) assert.match(guard.check(ip) ?? 'allowed', denied, `${ip} with ${name}`);
    }
  });

  it('refuses loopback by default and when only a non-loopback range covers it', () => {
    for (const ip of ['127.0.0.1', '127.8.9.10', '::1', '0:0:0:0:0:0:0:1']) {
      assert.match(open.check(ip) ?? 'allowed', loopback, ip);
      assert.match(everything.check(ip) ?? 'allowed', loopback, ip);
    }
  });

  it('allows loopback only inside an allowed loopback range', () => {
    assert.equal(testPlane.check('127.0.0.1'), undefined);
    assert.equal(testPlane.check('127.0.10.1'), undefined);
    assert.match(testPlane.check('::1') ?? 'allowed', loopback);
    const v6 = new AddressGuard(['::1/128']);
    assert.equal(v6.check('::1'), undefined);
    assert.match(v6.check('127.0.0.1') ?? 'allowed', loopback);
    const narrow = new AddressGuard(['127.0.5.0/24']);
    assert.equal(narrow.check('127.0.5.9'), undefined);
    assert.match(narrow.check('127.0.6.1') ?? 'allowed', loopback);
  });

  it('always refuses an IPv6 form of an IPv4 loopback address', () => {
    for (const ip of ['::ffff:127.0.0.1', '::ffff:7f00:1', '::127.0.0.1', '64:ff9b::7f00:1', '2002:7f00:1::']) {
      for (const [name, guard] of guards) assert.match(guard.check(ip) ?? 'allowed', loopbackAsIpv6, `${ip} with ${name}`);
    }
  });

  it('allows ordinary pod IPs, within the allowed ranges when there are some', () => {
    for (const ip of ['10.1.2.3', '192.168.0.5', '100.64.0.1', 'fd00::5', '2001:db8::1', '::ffff:10.0.0.1']) {
      assert.equal(open.check(ip), undefined, ip);
      assert.equal(everything.check(ip), undefined, ip);
      assert.equal(testPlane.check(ip), `pod IP ${ip} is outside the allowed probe ranges`);
    }
    assert.equal(new AddressGuard(['10.0.0.0/8']).check('::ffff:10.0.0.1'), undefined, 'an IPv4-mapped address matches IPv4 ranges (node:net BlockList)');
  });

  it('rejects what is not an IP address', () => {
    assert.equal(open.check('localhost'), 'pod IP "localhost" is not an IP address');
    assert.equal(open.check('127.1'), 'pod IP "127.1" is not an IP address');
  });
});
